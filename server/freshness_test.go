package server

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/dsh-refls/dsh-refls/internal/dshgen"
	"github.com/dsh-refls/dsh-refls/sessionref/titles"
)

// TestWatchedChangesReachCompletion runs the real indexes and watchers: a
// session written after start-up and a file created in the workspace both
// show up in completion, in each watch mode.
func TestWatchedChangesReachCompletion(t *testing.T) {
	for _, mode := range []string{"fsnotify", "poll"} {
		t.Run(mode, func(t *testing.T) {
			store := t.TempDir()
			ws := t.TempDir()
			if err := os.WriteFile(filepath.Join(ws, "README.md"), []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := dshgen.DemoStore(store, time.Now()); err != nil {
				t.Fatal(err)
			}
			h := newHarness(t, Options{
				SessionsRoot: store,
				Watch:        mode,
				OpenSessions: NewLiveSessionsFactory(false),
				OpenFiles:    NewFilerefFactory(zap.NewNop()),
			})
			h.initialize(initOptions{root: ws, settings: map[string]any{"sessionId": "fresh-target"}})
			waitStatus(t, h, func(st statusResult) bool { return !st.Building && st.SessionsIndexed > 0 && st.FilesIndexed > 0 })

			if _, err := dshgen.NewSession("fresh-session-1").Cwd(dshgen.DefaultDemoWorkspace).
				CreatedAt(time.Now().UnixMilli()).UserText("Zebra crossing detector").
				Title("Zebra crossing detector", "provider").Save(store, dshgen.Raw); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(ws, "zebra.txt"), []byte("z"), 0o644); err != nil {
				t.Fatal(err)
			}
			pos := h.open("file:///z.md", "@zebra‸", EncodingUTF16)
			deadline := time.Now().Add(testTimeout)
			for {
				var list wireList
				h.mustCall("textDocument/completion", map[string]any{"textDocument": map[string]any{"uri": "file:///z.md"}, "position": pos}, &list)
				labels := map[string]bool{}
				for _, it := range list.Items {
					labels[it.Label] = true
				}
				if labels["Zebra crossing detector"] && labels["zebra.txt"] {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("new session and file never offered; got %v", labels)
				}
				time.Sleep(20 * time.Millisecond)
			}
			var st statusResult
			h.mustCall(MethodStatus, nil, &st)
			if st.WatchMode != mode {
				t.Errorf("status watch mode %q, want %q", st.WatchMode, mode)
			}
		})
	}
}

// TestIndexCacheIsSaved checks that a server with the cache on leaves the
// persisted index where `dsh-refls index` and the next start look for it.
func TestIndexCacheIsSaved(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	store := t.TempDir()
	if err := dshgen.DemoStore(store, time.Now()); err != nil {
		t.Fatal(err)
	}
	path, err := titles.DefaultCachePath(store)
	if err != nil {
		t.Fatal(err)
	}
	for run := 0; run < 2; run++ {
		h := newHarness(t, Options{SessionsRoot: store, OpenSessions: NewLiveSessionsFactory(true)})
		h.initialize(initOptions{})
		waitStatus(t, h, func(st statusResult) bool { return !st.Building && st.SessionsIndexed > 0 })
		deadline := time.Now().Add(testTimeout)
		for {
			if _, err := os.Stat(path); err == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("run %d: no index cache at %s", run, path)
			}
			time.Sleep(5 * time.Millisecond)
		}
		var st statusResult
		h.mustCall(MethodStatus, nil, &st)
		if st.SessionsIndexed != 9 {
			t.Errorf("run %d: %d sessions, want the demo store's 9", run, st.SessionsIndexed)
		}
		// The first run finds no cache; the second restores the one the
		// first saved.
		if want := run == 1; st.IndexCacheLoaded != want {
			t.Errorf("run %d: indexCacheLoaded %v, want %v", run, st.IndexCacheLoaded, want)
		}
		if code := h.shutdownExit(); code != 0 {
			t.Fatalf("exit code %d", code)
		}
	}
}
