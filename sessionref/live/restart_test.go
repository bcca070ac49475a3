package live_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/dsh-refls/dsh-refls/sessionref/live"
	"github.com/dsh-refls/dsh-refls/sessionref/titles"
	"github.com/dsh-refls/dsh-refls/watch"
)

// TestRestartServesTheCacheWhileTheWatcherAttaches holds the watcher in
// its first attach: the cached snapshot must be served meanwhile (over a
// large store the attach takes seconds), still marked as building, and the
// build that follows the attach must bring in what changed while the
// server was down and what changed while the watcher attached. The attach
// begins only once the cache is restored, so it does not compete with the
// restore for the cores, and DuringRestore brackets exactly the restore.
func TestRestartServesTheCacheWhileTheWatcherAttaches(t *testing.T) {
	root := filepath.Join(t.TempDir(), "sessions")
	for i := 0; i < 5; i++ {
		id := fmt.Sprintf("r-%d", i)
		writeFile(t, filepath.Join(sessionDir(root, id), "session.jsonl"), header(id)+titleLine(0, "cached "+id))
	}
	cache := filepath.Join(t.TempDir(), "index.gob")
	cold := titles.NewIndex(root, titles.IndexOptions{})
	if err := cold.Build(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if err := cold.SaveCache(cache); err != nil {
		t.Fatal(err)
	}
	// Changed while the server was down.
	appendFile(t, filepath.Join(sessionDir(root, "r-2"), "session.jsonl"), []byte(titleLine(1, "renamed while down")))

	attaching := make(chan struct{})
	release := make(chan struct{})
	var once sync.Once
	var st *live.Store
	restoredFirst := false
	// Written by Run's goroutine, read after attaching is closed.
	restoreBegun, restoreEnded, atBegin, atEnd, endedBeforeAttach := 0, 0, -1, -1, false
	during := func() func() {
		restoreBegun++
		atBegin = len(st.Index().Snapshot().Sessions)
		return func() {
			restoreEnded++
			atEnd = len(st.Index().Snapshot().Sessions)
		}
	}
	hold := func(string, bool) bool {
		once.Do(func() {
			restoredFirst = len(st.Index().Snapshot().Sessions) == 5
			endedBeforeAttach = restoreEnded == 1
			close(attaching)
			<-release
		})
		return false
	}
	var err error
	st, err = live.Open(live.WithWatchSkip(live.Options{Root: root, Watch: watch.ModeFsnotify, CachePath: cache, Logger: zaptest.NewLogger(t),
		DuringRestore: during}, hold))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := st.Run(ctx); err != nil {
			t.Errorf("Run: %v", err)
		}
	}()
	released := false
	defer func() {
		if !released {
			close(release)
		}
		cancel()
		wg.Wait()
	}()
	select {
	case <-attaching:
	case <-time.After(10 * time.Second):
		t.Fatal("the watcher never began attaching")
	}
	if !restoredFirst {
		t.Error("the watcher began attaching before the cache was restored")
	}
	if restoreBegun != 1 || restoreEnded != 1 || atBegin != 0 || atEnd != 5 || !endedBeforeAttach {
		t.Errorf("DuringRestore began %d times with %d sessions and ended %d times with %d (before the attach: %v); want once with 0, once with 5, before",
			restoreBegun, atBegin, restoreEnded, atEnd, endedBeforeAttach)
	}
	deadline := time.Now().Add(visibleWithin)
	for snap := st.Index().Snapshot(); len(snap.Sessions) != 5; snap = st.Index().Snapshot() {
		if time.Now().After(deadline) {
			t.Fatalf("the cached snapshot was not served while the watcher attached: %d sessions", len(snap.Sessions))
		}
		time.Sleep(2 * time.Millisecond)
	}
	snap := st.Index().Snapshot()
	if !snap.Building {
		t.Error("the snapshot restored from the cache is not marked as building")
	}
	if !titleIs("r-2", "cached r-2")(snap) {
		t.Error("the restored snapshot does not hold the cached title")
	}
	select {
	case <-st.Ready():
		t.Fatal("ready before the watcher attached")
	default:
	}
	if got := st.Index().BytesRead(); got != 0 {
		t.Errorf("%d log bytes read before the watcher attached", got)
	}
	// Changed while the watcher attaches: no event may reach it, so the
	// build after the attach must find it.
	appendFile(t, filepath.Join(sessionDir(root, "r-3"), "session.jsonl"), []byte(titleLine(1, "renamed while attaching")))
	close(release)
	released = true
	select {
	case <-st.Ready():
	case <-time.After(10 * time.Second):
		t.Fatal("store never became ready")
	}
	snap = st.Index().Snapshot()
	if snap.Building || !titleIs("r-2", "renamed while down")(snap) || !titleIs("r-3", "renamed while attaching")(snap) ||
		!titleIs("r-4", "cached r-4")(snap) {
		t.Errorf("after the build: building %v, sessions %v", snap.Building, snap.Sessions)
	}
	if !st.Status().CacheLoaded {
		t.Error("status says the cache was not loaded")
	}
}
