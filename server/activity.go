package server

import (
	"context"
	"sync"
	"time"
)

// requestActivity counts the messages being handled, and lets the
// recall index's workers wait for none.
type requestActivity struct {
	mu   sync.Mutex
	n    int
	idle chan struct{} // closed when n falls to 0; nil while n is 0
	// last is when the last message ended.
	last time.Time
}

func (a *requestActivity) begin() {
	a.mu.Lock()
	if a.n == 0 {
		a.idle = make(chan struct{})
	}
	a.n++
	a.mu.Unlock()
}

func (a *requestActivity) end() {
	a.mu.Lock()
	if a.n--; a.n == 0 {
		close(a.idle)
		a.idle = nil
	}
	a.last = time.Now()
	a.mu.Unlock()
}

// untilQuiet returns how long until no message will have been handled
// for quiet, 0 when none has been for that long; while one is being
// handled, quiet.
func (a *requestActivity) untilQuiet(quiet time.Duration) time.Duration {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.n > 0 {
		return quiet
	}
	return max(0, quiet-time.Since(a.last))
}

// maxRecallHold bounds how long one pause of a recall worker waits for
// the requests being handled: a long one (a large prepare) does not
// keep the build off the other processors for its whole length.
const maxRecallHold = 100 * time.Millisecond

// waitIdle returns once no message is being handled, after maxRecallHold
// at most, or when ctx ended.
func (a *requestActivity) waitIdle(ctx context.Context) {
	a.mu.Lock()
	idle := a.idle
	a.mu.Unlock()
	if idle == nil {
		return
	}
	t := time.NewTimer(maxRecallHold)
	defer t.Stop()
	select {
	case <-idle:
	case <-t.C:
	case <-ctx.Done():
	}
}
