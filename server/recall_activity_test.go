package server

import (
	"context"
	"testing"
	"time"
)

// TestRecallWorkersWaitForRequests: requestActivity.waitIdle returns at
// once with no message being handled, waits while one is (until the last
// of two ends), and returns when its context ends or after
// maxRecallHold.
func TestRecallWorkersWaitForRequests(t *testing.T) {
	var a requestActivity
	a.waitIdle(context.Background()) // idle: returns at once

	a.begin()
	a.begin()
	done := make(chan struct{})
	go func() {
		a.waitIdle(context.Background())
		close(done)
	}()
	a.end()
	select {
	case <-done:
		t.Fatal("waitIdle returned while a message was still being handled")
	case <-time.After(maxRecallHold / 2):
		// Not a synchronisation: only a chance for a wrong return to show.
	}
	a.end()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("waitIdle did not return after the last message ended")
	}

	a.begin()
	defer a.end()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	a.waitIdle(ctx) // returns: ctx ended
	t0 := time.Now()
	a.waitIdle(context.Background())
	if d := time.Since(t0); d < maxRecallHold {
		t.Errorf("waitIdle returned after %v with a message being handled; want %v", d, maxRecallHold)
	}
}
