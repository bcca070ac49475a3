package watch

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
	"go.uber.org/zap/zaptest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// testPollInterval keeps poll-mode tests fast; production uses a longer one.
const testPollInterval = 20 * time.Millisecond

// waitTimeout is how long a test waits for a batch before failing; far above
// the expected latency so a loaded machine does not make tests flaky.
const waitTimeout = 10 * time.Second

// received is one delivered batch and when it arrived.
type received struct {
	Batch
	at time.Time
}

// collector records every batch a watcher delivers.
type collector struct {
	mu      sync.Mutex
	batches []received
	signal  chan struct{}
}

func newCollector() *collector { return &collector{signal: make(chan struct{}, 1)} }

func (c *collector) deliver(b Batch) {
	c.mu.Lock()
	c.batches = append(c.batches, received{Batch: b, at: time.Now()})
	c.mu.Unlock()
	select {
	case c.signal <- struct{}{}:
	default:
	}
}

// mark returns the number of batches received so far.
func (c *collector) mark() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.batches)
}

// since returns the batches received after mark.
func (c *collector) since(mark int) []received {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.batches[mark:])
}

// waitUntil waits until cond holds for the batches received after mark.
func (c *collector) waitUntil(t testing.TB, mark int, what string, cond func([]received) bool) []received {
	t.Helper()
	deadline := time.After(waitTimeout)
	for {
		got := c.since(mark)
		if cond(got) {
			return got
		}
		select {
		case <-c.signal:
		case <-deadline:
			t.Fatalf("timed out waiting for %s; got %d batches: %v", what, len(got), summarize(got))
			return nil
		}
	}
}

// waitPaths waits until every path in want was delivered after mark and
// returns the time of the batch that completed the set.
func (c *collector) waitPaths(t testing.TB, mark int, want ...string) time.Time {
	t.Helper()
	var at time.Time
	c.waitUntil(t, mark, "paths "+shortList(want), func(got []received) bool {
		seen := make(map[string]bool)
		for _, b := range got {
			for _, p := range b.Paths {
				seen[p] = true
			}
			at = b.at
		}
		for _, p := range want {
			if !seen[p] {
				return false
			}
		}
		return true
	})
	return at
}

// waitRescan waits for a batch with Rescan set after mark.
func (c *collector) waitRescan(t testing.TB, mark int) {
	t.Helper()
	c.waitUntil(t, mark, "a rescan batch", func(got []received) bool {
		return slices.ContainsFunc(got, func(b received) bool { return b.Rescan })
	})
}

func summarize(got []received) []string {
	var out []string
	for _, b := range got {
		s := shortList(b.Paths)
		if b.Rescan {
			s = "RESCAN " + s
		}
		out = append(out, s)
	}
	return out
}

func shortList(paths []string) string {
	const shown = 8
	if len(paths) > shown {
		return fmt.Sprintf("[%s … %s (%d paths)]", paths[0], paths[len(paths)-1], len(paths))
	}
	return fmt.Sprint(paths)
}

// running is a watcher started by start.
type running struct {
	w    *Watcher
	c    *collector
	stop func()
}

// start runs a watcher with opts until the test ends, waiting until it is
// ready. Missing Logger and durations get test values.
func start(t testing.TB, opts Options) *running {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = zaptest.NewLogger(t)
	}
	if opts.PollInterval == 0 {
		opts.PollInterval = testPollInterval
	}
	w, err := New(opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	c := newCollector()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx, c.deliver) }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("Run: %v", err)
				}
			case <-time.After(waitTimeout):
				t.Errorf("Run did not return after cancel")
			}
		})
	}
	t.Cleanup(stop)
	select {
	case <-w.Ready():
	case err := <-done:
		t.Fatalf("Run returned before ready: %v", err)
	case <-time.After(waitTimeout):
		t.Fatalf("watcher not ready after %v", waitTimeout)
	}
	return &running{w: w, c: c, stop: stop}
}

// bothModes runs f once with fsnotify and once with polling.
func bothModes(t *testing.T, f func(t *testing.T, mode Mode)) {
	for _, mode := range []Mode{ModeFsnotify, ModePoll} {
		t.Run(string(mode), func(t *testing.T) { f(t, mode) })
	}
}

func mkdirAll(t testing.TB, path string) {
	t.Helper()
	if err := os.MkdirAll(path, 0o755); err != nil {
		t.Fatal(err)
	}
}

func writeFile(t testing.TB, path, content string) {
	t.Helper()
	mkdirAll(t, filepath.Dir(path))
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func appendFile(t testing.TB, path, content string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(content); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// abs joins root with slash-separated relative paths.
func abs(root string, rels ...string) []string {
	out := make([]string, len(rels))
	for i, r := range rels {
		out[i] = filepath.Join(root, filepath.FromSlash(r))
	}
	return out
}
