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

// TestRecallSaveWaitsForQuiet: requestActivity.waitQuiet returns at once
// when no message was ever handled, waits while one is being handled and
// then for quiet after the last ended, returns after most at the latest,
// and when its context ends.
func TestRecallSaveWaitsForQuiet(t *testing.T) {
	var a requestActivity
	t0 := time.Now()
	a.waitQuiet(context.Background(), time.Hour, time.Hour) // nothing handled yet
	if d := time.Since(t0); d > 5*time.Second {
		t.Fatalf("waitQuiet with nothing handled took %v", d)
	}

	const quiet = 80 * time.Millisecond
	a.begin()
	done := make(chan time.Time, 1)
	go func() {
		a.waitQuiet(context.Background(), quiet, time.Minute)
		done <- time.Now()
	}()
	select {
	case <-done:
		t.Fatal("waitQuiet returned while a message was being handled")
	case <-time.After(2 * quiet):
		// Not a synchronisation: only a chance for a wrong return to show.
	}
	a.end()
	ended := time.Now()
	select {
	case at := <-done:
		if d := at.Sub(ended); d < quiet {
			t.Errorf("waitQuiet returned %v after the last message ended; want at least %v", d, quiet)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("waitQuiet did not return after the quiet period")
	}

	a.begin()
	defer a.end()
	t0 = time.Now()
	a.waitQuiet(context.Background(), time.Hour, quiet) // bounded by most
	if d := time.Since(t0); d < quiet || d > 10*time.Second {
		t.Errorf("waitQuiet with a message being handled returned after %v; want %v", d, quiet)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	t0 = time.Now()
	a.waitQuiet(ctx, time.Hour, time.Hour)
	if d := time.Since(t0); d > 5*time.Second {
		t.Errorf("waitQuiet with its context ended took %v", d)
	}
}
