package server

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/dsh-refls/dsh-refls/server/internal/lspwire"
)

// TestWaitBrieflyHoldsForABusyStretchOnly: waitBriefly returns at once
// with nothing under way, waits while something is until it ends, and
// holds for maxAnswerHold at most from the moment the work began: once
// that has passed, it returns at once until the work has stopped.
func TestWaitBrieflyHoldsForABusyStretchOnly(t *testing.T) {
	var a requestActivity
	a.waitBriefly(context.Background()) // idle: returns at once

	a.begin()
	done := waitInBackground(a.waitBriefly)
	notReturnedWithin(t, done, maxAnswerHold/10, "waitBriefly returned while a call was being answered")
	a.end()
	returnsSoon(t, done, "waitBriefly did not return once the call was answered")

	var b requestActivity // a fresh stretch, with no run after a wait
	b.begin()
	defer b.end()
	t0 := time.Now()
	b.waitBriefly(context.Background())
	if d := time.Since(t0); d < maxAnswerHold/2 || d > maxAnswerHold+time.Second {
		t.Errorf("waitBriefly held for %v while a call never ended, want about maxAnswerHold %v", d, maxAnswerHold)
	}
	// The stretch began more than maxAnswerHold ago: no more holding.
	t0 = time.Now()
	b.waitBriefly(context.Background())
	if d := time.Since(t0); d > maxAnswerHold/2 {
		t.Errorf("waitBriefly held for %v after the stretch's bound had passed", d)
	}
	var c requestActivity
	c.begin()
	defer c.end()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	c.waitBriefly(ctx) // returns: ctx ended
}

// heldWire is a wire whose Hold returns a placeholder at once; the test
// plays the stream and reports the answer written with answerDone.
type heldWire struct{ held []lspwire.Answer }

func (*heldWire) InputIdle() bool { return true }
func (*heldWire) WaitDrained()    {}
func (*heldWire) Abort()          {}
func (w *heldWire) Hold(a lspwire.Answer) json.RawMessage {
	w.held = append(w.held, a)
	return json.RawMessage(`"held"`)
}

// TestCallsAnswerUntilTheirAnswerIsWritten: a call counts as answering
// while it runs, and a held answer until the stream reports it written;
// an answer that is not held, and a failed call, stop counting when
// finish returns.
func TestCallsAnswerUntilTheirAnswerIsWritten(t *testing.T) {
	w := &heldWire{}
	s := &Server{stream: w, logger: zap.NewNop()}
	busy := func() int {
		s.answering.mu.Lock()
		defer s.answering.mu.Unlock()
		return s.answering.n
	}
	runs := map[string]call{
		"raw": func(context.Context) (any, error) {
			if busy() != 1 {
				t.Error("a running call does not count as answering")
			}
			return json.RawMessage(`[1]`), nil
		},
		"streamed": func(context.Context) (any, error) { return lspwire.Streamed(2, nil), nil },
		"plain":    func(context.Context) (any, error) { return map[string]int{"a": 1}, nil },
		"failed":   func(context.Context) (any, error) { return nil, errors.New("no") },
	}
	for _, name := range []string{"raw", "streamed"} {
		if _, err := s.finish(context.Background(), name, time.Now(), runs[name]); err != nil {
			t.Fatal(err)
		}
	}
	if n := busy(); n != 2 || len(w.held) != 2 {
		t.Fatalf("after two held answers: %d answering, %d held; want 2 and 2", n, len(w.held))
	}
	s.answerDone([]byte(`[1]`))
	s.answerDone(nil)
	for _, name := range []string{"plain", "failed"} {
		_, _ = s.finish(context.Background(), name, time.Now(), runs[name])
	}
	if n := busy(); n != 0 {
		t.Errorf("%d calls still answering after every answer was done", n)
	}
}

// TestWaitBrieflyLetsBackgroundWorkRun: after a wait, waitBriefly returns
// at once for minBackgroundRun, even while a call is answered.
func TestWaitBrieflyLetsBackgroundWorkRun(t *testing.T) {
	var a requestActivity
	a.begin()
	defer a.end()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	a.waitBriefly(ctx) // a wait, ended by its context
	t0 := time.Now()
	a.waitBriefly(context.Background())
	if d := time.Since(t0); d > minBackgroundRun {
		t.Errorf("waitBriefly held for %v right after a wait; want it to return at once for %v", d, minBackgroundRun)
	}
}

// TestRecallWorkersWaitForRequests: requestActivity.waitIdle returns at
// once with no message being handled, waits while one is (until the last
// of two ends), and returns when its context ends or after
// maxRecallHold.
func TestRecallWorkersWaitForRequests(t *testing.T) {
	var a requestActivity
	a.waitIdle(context.Background()) // idle: returns at once

	a.begin()
	a.begin()
	done := waitInBackground(a.waitIdle)
	a.end()
	notReturnedWithin(t, done, maxRecallHold/2, "waitIdle returned while a message was still being handled")
	a.end()
	returnsSoon(t, done, "waitIdle did not return after the last message ended")

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

// waitInBackground runs wait in a goroutine and returns a channel closed
// when it returns.
func waitInBackground(wait func(context.Context)) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		wait(context.Background())
		close(done)
	}()
	return done
}

// notReturnedWithin fails the test with msg when done closes within d. Not a
// synchronisation: only a chance for a wrong return to show.
func notReturnedWithin(t *testing.T, done <-chan struct{}, d time.Duration, msg string) {
	t.Helper()
	select {
	case <-done:
		t.Fatal(msg)
	case <-time.After(d):
	}
}

// returnsSoon fails the test with msg unless done closes within 10 s.
func returnsSoon(t *testing.T, done <-chan struct{}, msg string) {
	t.Helper()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal(msg)
	}
}
