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

// TestRecallSaveWaitsForQuiet: requestActivity.untilQuiet is 0 when no
// message was ever handled, quiet while one is being handled, and after
// the last ended what is left of quiet since then (0 once it passed).
func TestRecallSaveWaitsForQuiet(t *testing.T) {
	var a requestActivity
	const quiet = time.Hour
	if d := a.untilQuiet(quiet); d != 0 {
		t.Errorf("nothing handled yet: untilQuiet = %v, want 0", d)
	}
	a.begin()
	if d := a.untilQuiet(quiet); d != quiet {
		t.Errorf("a message being handled: untilQuiet = %v, want %v", d, quiet)
	}
	a.begin()
	a.end()
	if d := a.untilQuiet(quiet); d != quiet {
		t.Errorf("one of two messages still handled: untilQuiet = %v, want %v", d, quiet)
	}
	a.end()
	ended := time.Now()
	if d := a.untilQuiet(quiet); d > quiet || d < quiet-time.Since(ended)-time.Minute {
		t.Errorf("just after the last message: untilQuiet = %v, want about %v", d, quiet)
	}
	if d := a.untilQuiet(time.Nanosecond); d != 0 {
		t.Errorf("quiet long past: untilQuiet = %v, want 0", d)
	}
}
