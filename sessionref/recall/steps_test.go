package recall

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/dsh-refls/dsh-refls/internal/dshgen"
	"github.com/dsh-refls/dsh-refls/sessionref/titles"
)

// TestFirstBuildPublishesItsSteps: a first build publishes the newest
// sessions read so far after firstStep of them, with the number still to
// read, and searches answer from that step (the newest session's word is
// found, the oldest one's not yet); the last view holds every session and
// none pending. Every worker gives way through Options.Yield.
func TestFirstBuildPublishesItsSteps(t *testing.T) {
	root := t.TempDir()
	n := 3 * firstStep
	for i := range n {
		s := dshgen.NewSession(fmt.Sprintf("s-%04d", i)).Cwd("/w").CreatedAt(int64(1000 + i)).
			UserText(fmt.Sprintf("common text word%dx", i)).AssistantText("reply")
		if _, err := s.Save(root, dshgen.Raw); err != nil {
			t.Fatal(err)
		}
	}
	title := titles.NewIndex(root, titles.IndexOptions{})
	if err := title.Build(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	newest, oldest := fmt.Sprintf("word%dx", n-1), "word0x"
	var mu sync.Mutex
	var steps []Stats
	stepFound := map[string]int{}
	yielded := map[int]bool{}
	var rc *Index
	rc = New(Options{Parallelism: 1,
		Yield: func(_ context.Context, worker int) {
			mu.Lock()
			yielded[worker] = true
			mu.Unlock()
		},
		Published: func(st Stats) {
			steps = append(steps, st)
			if st.Pending == 0 {
				return
			}
			for _, w := range []string{newest, oldest} {
				res, err := rc.Search(context.Background(), Query{Text: w})
				if err != nil {
					t.Errorf("search %q at a step: %v", w, err)
				}
				stepFound[w] += len(res)
			}
		}})
	if err := rc.Sync(context.Background(), title.Snapshot()); err != nil {
		t.Fatal(err)
	}
	if len(steps) < 2 || steps[0].Pending == 0 {
		t.Fatalf("published %+v: want at least one step with sessions pending before the end", steps)
	}
	// Steps end at a multiple of 64 slots: the first after the 64th.
	if first := steps[0]; first.Sessions != 64 || first.Sessions+first.Pending != n {
		t.Errorf("first step: %d sessions, %d pending; want %d and %d", first.Sessions, first.Pending, 64, n-64)
	}
	if last := steps[len(steps)-1]; last.Sessions != n || last.Pending != 0 {
		t.Errorf("last view: %d sessions, %d pending; want %d, 0", last.Sessions, last.Pending, n)
	}
	if stepFound[newest] == 0 || stepFound[oldest] != 0 {
		t.Errorf("during the build the newest session was found %d times, the oldest %d; want > 0 and 0", stepFound[newest], stepFound[oldest])
	}
	wantIDs(t, oldest, mustSearch(t, rc, oldest), "s-0000")
	if !yielded[0] {
		t.Error("the worker never gave way")
	}

	// A second index over the same sessions with two workers gives way
	// through both and ends with the same answers; searches run all the
	// while (the steps share the builders' arrays: -race checks that
	// nothing they read is written).
	clear(yielded)
	// Worker 1 waits at its first pause until worker 0 has paused too: on
	// a loaded machine the scheduler may otherwise let worker 1 take every
	// session before worker 0 runs at all. The wait has a deadline, so a
	// worker 0 that never runs fails the check below instead of hanging.
	zeroPaused := make(chan struct{})
	var zeroOnce sync.Once
	rc2 := New(Options{Parallelism: 2, Yield: func(_ context.Context, worker int) {
		mu.Lock()
		yielded[worker] = true
		mu.Unlock()
		if worker == 0 {
			zeroOnce.Do(func() { close(zeroPaused) })
			return
		}
		select {
		case <-zeroPaused:
		case <-time.After(10 * time.Second):
		}
	}})
	done := make(chan struct{})
	searched := make(chan int)
	go func() {
		n := 0
		for {
			select {
			case <-done:
				searched <- n
				return
			default:
			}
			for _, w := range []string{"common", newest, "word1"} {
				res, err := rc2.Search(context.Background(), Query{Text: w})
				if err != nil {
					t.Errorf("search %q during the build: %v", w, err)
				}
				n += len(res)
			}
		}
	}()
	err := rc2.Sync(context.Background(), title.Snapshot())
	close(done)
	t.Logf("%d results found during the build", <-searched)
	if err != nil {
		t.Fatal(err)
	}
	if !yielded[0] || !yielded[1] || len(yielded) != 2 {
		t.Errorf("workers that gave way: %v; want 0 and 1", yielded)
	}
	wantIDs(t, newest, mustSearch(t, rc2, newest), fmt.Sprintf("s-%04d", n-1))
}

func mustSearch(t *testing.T, rc *Index, q string) []Result {
	t.Helper()
	res, err := rc.Search(context.Background(), Query{Text: q})
	if err != nil {
		t.Fatalf("search %q: %v", q, err)
	}
	return res
}

// TestNewestBlocksAreCachedAsTheyAreWritten: a sync puts the blocks of
// the newest warmSessions sessions it reads in the block cache, so the
// first search of the newest session reads nothing back from disk (the
// cache does not grow), while a search of an older one does.
func TestNewestBlocksAreCachedAsTheyAreWritten(t *testing.T) {
	var sessions []*dshgen.Session
	n := warmSessions + 6
	for i := range n {
		sessions = append(sessions, dshgen.NewSession(fmt.Sprintf("s-%04d", i)).CreatedAt(int64(1000+i)).
			UserText(fmt.Sprintf("text of word%dx", i)))
	}
	st := newStore(t, sessions...)
	before := st.rc.Stats().CacheBytes
	if before == 0 {
		t.Fatal("nothing cached after the sync")
	}
	wantIDs(t, "newest", st.search(fmt.Sprintf("word%dx", n-1)), fmt.Sprintf("s-%04d", n-1))
	if after := st.rc.Stats().CacheBytes; after != before {
		t.Errorf("searching the newest session changed the cache from %d to %d bytes: its block was not cached", before, after)
	}
	wantIDs(t, "oldest", st.search("word0x"), "s-0000")
	if after := st.rc.Stats().CacheBytes; after <= before {
		t.Errorf("searching the oldest session left the cache at %d bytes (was %d): it was cached already", after, before)
	}
}
