package server

import (
	"context"
	"sync"
	"time"
)

// requestActivity counts work under way (the messages being handled, or
// the calls being answered), and lets background work wait for none.
type requestActivity struct {
	mu   sync.Mutex
	n    int
	idle chan struct{} // closed when n falls to 0; nil while n is 0
	// busySince is when n last rose from 0.
	busySince time.Time
	// freeUntil is when waitBriefly waits again after its last wait.
	freeUntil time.Time
	// last is when the last message ended.
	last time.Time
}

func (a *requestActivity) begin() {
	a.mu.Lock()
	if a.n == 0 {
		a.idle = make(chan struct{})
		a.busySince = time.Now()
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
	waitAtMost(ctx, idle, maxRecallHold)
}

// maxAnswerHold bounds how long background work waits for calls being
// answered without a moment when none is: answering the complete list of
// 100,000 sessions takes about 150 ms, a keystroke's completion a few;
// a call that waits for the first build (hover, inlay hints) and so keeps
// the count up does not hold that build back for longer than this.
const maxAnswerHold = 500 * time.Millisecond

// minBackgroundRun is how long background work runs after waitBriefly
// waited before it waits again: calls that come one after the other, each
// soon after the last ended, cannot hold it back for longer than they
// leave it (at least minBackgroundRun in every maxAnswerHold +
// minBackgroundRun).
const minBackgroundRun = 50 * time.Millisecond

// waitBriefly returns once nothing is under way, or when it has been for
// maxAnswerHold without a pause (at once after that), or when ctx ended;
// for minBackgroundRun after a wait, it returns at once.
func (a *requestActivity) waitBriefly(ctx context.Context) {
	a.mu.Lock()
	idle, since, free := a.idle, a.busySince, time.Now().Before(a.freeUntil)
	a.mu.Unlock()
	if idle == nil || free {
		return
	}
	left := maxAnswerHold - time.Since(since)
	if left <= 0 {
		return
	}
	waitAtMost(ctx, idle, left)
	a.mu.Lock()
	a.freeUntil = time.Now().Add(minBackgroundRun)
	a.mu.Unlock()
}

// waitAtMost returns once idle is closed, after most, or when ctx ended:
// the wait of waitIdle and waitBriefly, which differ in how long they hold.
func waitAtMost(ctx context.Context, idle <-chan struct{}, most time.Duration) {
	t := time.NewTimer(most)
	defer t.Stop()
	select {
	case <-idle:
	case <-t.C:
	case <-ctx.Done():
	}
}
