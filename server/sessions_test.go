package server

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dsh-refls/dsh-refls/internal/dshgen"
	"github.com/dsh-refls/dsh-refls/sessionref"
	"github.com/dsh-refls/dsh-refls/sessionref/dshlog"
	"github.com/dsh-refls/dsh-refls/sessionref/titles"
)

// Sessions of the store the protocol tests use (writeTestStore).
const (
	testCwd        = "/home/dev/proj"
	testOtherCwd   = "/home/dev/other"
	testSmallBytes = 40 // a budget no session of the test store fits
)

// testSessions opens the production session index (package sessionref/live)
// over a store written with internal/dshgen, so protocol tests see the real
// rules of §2.2 and §2.3. What a test needs to slow down or break is done
// around the index, never instead of it.
type testSessions struct {
	root string
	// holdBuild, when set, keeps the first build from finishing, as the
	// server sees it, until it is closed.
	holdBuild chan struct{}
	// snapshotDelay slows every snapshot down: a slow request.
	snapshotDelay time.Duration
	// panicNext makes the next snapshot panic.
	panicNext atomic.Bool
	// degraded, when set, is reported (twice) as the watcher falling back
	// to polling.
	degraded string
	// holdReading, when set, stops the index's own build (not only the
	// server's view of it) as it reads the logs, until it is closed.
	holdReading chan struct{}
	// useCache opens the index with its stored copy at the default path
	// (under XDG_CACHE_HOME), as the production server does.
	useCache bool

	mu     sync.Mutex
	builds int
	// built is closed when an index opened by factory first finished
	// building.
	built     chan struct{}
	builtOnce sync.Once
}

// waitBuilt waits until an index the server opened finished its first
// build: completion answers at once, from whatever the index holds.
func (f *testSessions) waitBuilt(t testing.TB) {
	t.Helper()
	select {
	case <-f.built:
	case <-time.After(testTimeout):
		t.Fatal("the session index was never built")
	}
}

// newTestSessions writes the test store under a temp dir.
func newTestSessions(t testing.TB, now time.Time) *testSessions {
	t.Helper()
	root := t.TempDir()
	writeTestStore(t, root, now)
	return &testSessions{root: root, built: make(chan struct{})}
}

// writeTestStore writes the sessions the protocol tests mention: s-alpha
// and s-delta in testCwd, s-beta elsewhere, s-gamma a subagent without a
// cwd, s-target the prompt's own session, and one log in a flat layout,
// which is skipped.
func writeTestStore(t testing.TB, root string, now time.Time) {
	t.Helper()
	ago := func(d time.Duration) int64 { return now.Add(-d).UnixMilli() }
	sessions := []*dshgen.Session{
		dshgen.NewSession("s-alpha").Cwd(testCwd).CreatedAt(ago(time.Hour)).
			Turn(func(t *dshgen.Turn) {
				t.UserText("please fix ```the``` parser")
				t.Title("Fix the parser", "provider")
				t.AssistantText("Done.")
			}).
			Turn(func(t *dshgen.Turn) {
				t.UserText("and its tests")
				t.AssistantText("Done too.")
			}),
		dshgen.NewSession("s-beta").Cwd(testOtherCwd).CreatedAt(ago(2 * time.Hour)).
			Turn(func(t *dshgen.Turn) {
				t.UserText("please fix ```the``` API docs")
				t.Title("Write `docs` for <api>", "provider")
				t.AssistantText("Written.")
			}),
		dshgen.NewSession("s-gamma").NoCwd().CreatedAt(ago(3 * time.Hour)).Descriptor("Check direct child").
			Turn(func(t *dshgen.Turn) {
				t.UserText("check the direct child")
				t.Title("Child task", "fallback")
				t.AssistantText("Checked.")
			}),
		dshgen.NewSession("s-delta").Cwd(testCwd).CreatedAt(ago(4 * time.Hour)).
			Turn(func(t *dshgen.Turn) {
				t.UserText("a long one")
				t.Title("Huge log", "provider")
				t.AssistantText("Long.")
			}),
		dshgen.NewSession("s-target").Cwd(testCwd).CreatedAt(ago(5 * time.Hour)).
			Turn(func(t *dshgen.Turn) {
				t.UserText("the prompt is written here")
				t.Title("The current session", "provider")
				t.AssistantText("OK.")
			}),
	}
	for _, s := range sessions {
		if _, err := s.Save(root, dshgen.Raw); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := dshgen.FlatLayout(root); err != nil {
		t.Fatal(err)
	}
}

// add writes one more session into the store, before the server opens it.
func (f *testSessions) add(t testing.TB, s *dshgen.Session) {
	t.Helper()
	if _, err := s.Save(f.root, dshgen.Raw); err != nil {
		t.Fatal(err)
	}
}

// factory is the SessionsFactory of f.
func (f *testSessions) factory(cfg SessionsConfig) (Sessions, error) {
	if hold := f.holdReading; hold != nil {
		progress := cfg.Progress
		cfg.Progress = func(done, total int) {
			<-hold
			if progress != nil {
				progress(done, total)
			}
		}
	}
	inner, err := openLiveSessions(cfg, f.useCache)
	if err != nil {
		return nil, err
	}
	// The hooks are read once here: a test may set them for the next
	// server while an earlier one still runs.
	return &heldSessions{Sessions: inner, f: f, cfg: cfg, ready: make(chan struct{}),
		hold: f.holdBuild, degraded: f.degraded, delay: f.snapshotDelay}, nil
}

// entry is the indexed entry of id, read from a fresh index of the store.
func (f *testSessions) entry(t testing.TB, id string) dshlog.Entry {
	t.Helper()
	ix := titles.NewIndex(f.root, titles.IndexOptions{})
	if err := ix.Build(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	e, ok := ix.Snapshot().Locate(id)
	if !ok {
		t.Fatalf("session %s is not in the test store", id)
	}
	return e
}

// heldSessions is the production index with testSessions' hooks around it.
type heldSessions struct {
	Sessions
	f        *testSessions
	cfg      SessionsConfig
	hold     chan struct{}
	degraded string
	delay    time.Duration
	ready    chan struct{}
	once     sync.Once
}

// Run runs the index; the first build counts as finished once the index
// is ready and holdBuild (if any) is closed.
func (h *heldSessions) Run(ctx context.Context) error {
	if h.degraded != "" && h.cfg.OnDegraded != nil {
		h.cfg.OnDegraded(h.degraded)
		h.cfg.OnDegraded(h.degraded)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer h.once.Do(func() { close(h.ready) })
		select {
		case <-h.Sessions.Ready():
		case <-ctx.Done():
			return
		}
		if h.hold != nil {
			select {
			case <-h.hold:
			case <-ctx.Done():
				return
			}
		}
		h.f.mu.Lock()
		h.f.builds++
		h.f.mu.Unlock()
		h.once.Do(func() { close(h.ready) })
		h.f.builtOnce.Do(func() { close(h.f.built) })
		if h.hold != nil && h.cfg.OnUpdate != nil {
			h.cfg.OnUpdate()
		}
	}()
	err := h.Sessions.Run(ctx)
	wg.Wait()
	return err
}

// Ready implements Sessions.
func (h *heldSessions) Ready() <-chan struct{} { return h.ready }

// Status implements Sessions: building until Ready, and degraded as told.
func (h *heldSessions) Status() SessionStatus {
	st := h.Sessions.Status()
	select {
	case <-h.ready:
	default:
		st.Building = true
	}
	if h.degraded != "" {
		st.Degraded = h.degraded
	}
	return st
}

// Snapshot implements Sessions, slowly or panicking when told.
func (h *heldSessions) Snapshot() *titles.Snapshot {
	if h.f.panicNext.CompareAndSwap(true, false) {
		panic("test index failure")
	}
	time.Sleep(h.delay)
	return h.Sessions.Snapshot()
}

// uriOf is the canonical URI of a session id.
func uriOf(id string) string { return sessionref.EncodeURI(id) }
