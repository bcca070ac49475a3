package titles

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"
)

// TestBuildYieldsBeforeEachSession: IndexOptions.Yield is called before
// each session directory is handed to a reader, and a build held by it
// does not finish until it is let go.
func TestBuildYieldsBeforeEachSession(t *testing.T) {
	s := newTestStore(t)
	const sessions = 12
	for i := range sessions {
		s.simple(fmt.Sprintf("s-%02d", i), "/p", int64(1000+i), `{"type":"user","text":"hello"}`)
	}
	var calls atomic.Int64
	release := make(chan struct{})
	ix := NewIndex(s.root, IndexOptions{Parallelism: 2, Yield: func(ctx context.Context) {
		if calls.Add(1) == 1 {
			<-release
		}
	}})
	built := make(chan error, 1)
	go func() { built <- ix.Build(context.Background(), nil) }()
	select {
	case err := <-built:
		t.Fatalf("Build returned (%v) while Yield held it", err)
	case <-time.After(100 * time.Millisecond):
		// Not a synchronisation: only a chance for a wrong return to show.
	}
	close(release)
	select {
	case err := <-built:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Build did not finish once Yield let it go")
	}
	if got := calls.Load(); got != sessions {
		t.Errorf("Yield called %d times for %d sessions", got, sessions)
	}
	if n := len(ix.Snapshot().Sessions); n != sessions {
		t.Errorf("%d sessions indexed, want %d", n, sessions)
	}
}
