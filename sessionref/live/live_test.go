package live_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
	"go.uber.org/zap/zaptest"

	"github.com/dsh-refls/dsh-refls/sessionref/dshlog/layout"
	"github.com/dsh-refls/dsh-refls/sessionref/live"
	"github.com/dsh-refls/dsh-refls/sessionref/titles"
	"github.com/dsh-refls/dsh-refls/watch"
)

// visibleWithin is how long a test waits for a change to show. SPEC §5's
// bound is 250 ms; the benchmark script measures that figure. Tests allow
// more so a loaded CI machine running -race does not make them flaky, and
// log the latency they saw. Every wait on it is for something that must
// come, so it costs time only when a test fails. 3 s was missed once, by
// TestAdversarialStoreUnderWatch/poll at load average 11.
const visibleWithin = 10 * time.Second

const cwd = "/home/u/proj"

func header(id string) string {
	return fmt.Sprintf(`{"type":"session","version":0,"id":%q,"createdAt":1783350000000,"cwd":%q,"delegationDepth":0}`+"\n", id, cwd)
}

func titleLine(seq int, title string) string {
	return fmt.Sprintf(`{"type":"session/title","seq":%d,"time":1783350000100,"data":{"title":%q,"messageSeqs":[0],"source":{"kind":"user"}}}`+"\n", seq, title)
}

func sessionDir(root, id string) string {
	return filepath.Join(root, layout.ProjectDir(cwd, true), layout.EncodeSegment(id))
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func appendFile(t *testing.T, path string, content []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(content); err != nil {
		t.Fatal(err)
	}
}

func frame(t *testing.T, content string) []byte {
	t.Helper()
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderCRC(true))
	if err != nil {
		t.Fatal(err)
	}
	return enc.EncodeAll([]byte(content), nil)
}

type harness struct {
	t     *testing.T
	root  string
	store *live.Store
}

func start(t *testing.T, root string, mode watch.Mode, cache string) *harness {
	t.Helper()
	st, err := live.Open(live.Options{Root: root, Watch: mode, CachePath: cache, Logger: zaptest.NewLogger(t),
		PollInterval: 50 * time.Millisecond})
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
	t.Cleanup(func() { cancel(); wg.Wait() })
	select {
	case <-st.Ready():
	case <-time.After(10 * time.Second):
		t.Fatal("store never became ready")
	}
	return &harness{t: t, root: root, store: st}
}

// waitFor polls cond and reports how long the change took to show.
func (h *harness) waitFor(what string, cond func(*titles.Snapshot) bool) {
	h.t.Helper()
	begin := time.Now()
	for time.Since(begin) < visibleWithin {
		if cond(h.store.Index().Snapshot()) {
			h.t.Logf("%s visible after %v", what, time.Since(begin).Round(time.Millisecond))
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	h.t.Fatalf("%s not visible within %v", what, visibleWithin)
}

// waitRead waits until ix has read past before bytes: the watcher reported
// the append and the index looked at it, so what the append did (or did
// not do) to the snapshot is final.
func (h *harness) waitRead(what string, ix *titles.Index, before int64) {
	h.t.Helper()
	begin := time.Now()
	for ix.BytesRead() <= before {
		if time.Since(begin) > visibleWithin {
			h.t.Fatalf("%s was not read within %v", what, visibleWithin)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func titleIs(id, title string) func(*titles.Snapshot) bool {
	return func(s *titles.Snapshot) bool {
		e, ok := s.Locate(id)
		return ok && e.HasTitle && e.Title == title
	}
}

func TestFreshness(t *testing.T) {
	for _, mode := range []watch.Mode{watch.ModeFsnotify, watch.ModePoll} {
		t.Run(string(mode), func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "sessions")
			rawPath := filepath.Join(sessionDir(root, "raw-1"), "session.jsonl")
			writeFile(t, rawPath, header("raw-1")+titleLine(0, "first"))
			zPath := filepath.Join(sessionDir(root, "zst-1"), "session.jsonl.zstd")
			writeFile(t, zPath, string(frame(t, header("zst-1")))+string(frame(t, titleLine(0, "zfirst"))))
			h := start(t, root, mode, live.NoCache)
			h.waitFor("initial titles", func(s *titles.Snapshot) bool {
				return titleIs("raw-1", "first")(s) && titleIs("zst-1", "zfirst")(s)
			})
			ix := h.store.Index()

			// A title appended to a raw log in two writes: torn, then completed.
			line := titleLine(1, "second title")
			before := ix.BytesRead()
			appendFile(t, rawPath, []byte(line[:20]))
			h.waitRead("the torn line", ix, before)
			if e, _ := ix.Snapshot().Locate("raw-1"); e.Title != "first" {
				t.Fatalf("a torn line changed the title to %q", e.Title)
			}
			appendFile(t, rawPath, []byte(line[20:]))
			h.waitFor("completed raw title", titleIs("raw-1", "second title"))
			if read := ix.BytesRead() - before; read > int64(len(line)+20) {
				t.Errorf("read %d bytes for a %d-byte append", read, len(line))
			}

			// A zstd frame appended in two writes.
			f := frame(t, titleLine(1, "zsecond"))
			before = ix.BytesRead()
			info, _ := os.Stat(zPath)
			appendFile(t, zPath, f[:len(f)/2])
			h.waitRead("half a frame", ix, before)
			if e, _ := ix.Snapshot().Locate("zst-1"); e.Title != "zfirst" {
				t.Fatalf("half a frame changed the title to %q", e.Title)
			}
			appendFile(t, zPath, f[len(f)/2:])
			h.waitFor("completed zstd frame", titleIs("zst-1", "zsecond"))
			if read := ix.BytesRead() - before; read > int64(2*len(f)) {
				t.Errorf("read %d bytes for a %d-byte frame (log was %d bytes)", read, len(f), info.Size())
			}

			// A session in a project directory that did not exist.
			other := filepath.Join(root, layout.ProjectDir("/elsewhere", true), "new-1", "session.jsonl")
			writeFile(t, other, `{"type":"session","version":0,"id":"new-1","createdAt":5,"cwd":"/elsewhere"}`+"\n"+titleLine(0, "brand new"))
			h.waitFor("session in a new project", titleIs("new-1", "brand new"))

			// A log replaced by a shorter one is reread.
			tmp := rawPath + ".tmp"
			writeFile(t, tmp, header("raw-1")+titleLine(0, "short"))
			if err := os.Rename(tmp, rawPath); err != nil {
				t.Fatal(err)
			}
			h.waitFor("replaced log", titleIs("raw-1", "short"))

			// A deleted session disappears.
			if err := os.RemoveAll(sessionDir(root, "zst-1")); err != nil {
				t.Fatal(err)
			}
			h.waitFor("deleted session gone", func(s *titles.Snapshot) bool {
				_, ok := s.Locate("zst-1")
				return !ok
			})
		})
	}
}

func TestRootCreatedAfterStart(t *testing.T) {
	for _, mode := range []watch.Mode{watch.ModeFsnotify, watch.ModePoll} {
		t.Run(string(mode), func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "dsh", "sessions")
			h := start(t, root, mode, live.NoCache)
			if n := len(h.store.Index().Snapshot().Sessions); n != 0 {
				t.Fatalf("%d sessions before the root exists", n)
			}
			writeFile(t, filepath.Join(sessionDir(root, "late-1"), "session.jsonl"), header("late-1")+titleLine(0, "late"))
			h.waitFor("session under a root created after start", titleIs("late-1", "late"))
		})
	}
}

func TestWarmRestartReadsNoLogBodies(t *testing.T) {
	root := filepath.Join(t.TempDir(), "sessions")
	for i := 0; i < 20; i++ {
		id := fmt.Sprintf("s-%02d", i)
		writeFile(t, filepath.Join(sessionDir(root, id), "session.jsonl"), header(id)+titleLine(0, "title "+id))
	}
	cache := filepath.Join(t.TempDir(), "index.gob")
	ctx := context.Background()

	cold := titles.NewIndex(root, titles.IndexOptions{})
	if err := cold.Build(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if cold.BytesRead() == 0 {
		t.Fatal("a cold build read nothing")
	}
	if err := cold.SaveCache(cache); err != nil {
		t.Fatal(err)
	}

	warm := titles.NewIndex(root, titles.IndexOptions{})
	if err := warm.LoadCache(cache); err != nil {
		t.Fatal(err)
	}
	if err := warm.Build(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if warm.BytesRead() != 0 {
		t.Errorf("warm restart read %d log bytes, want 0", warm.BytesRead())
	}
	if got, want := len(warm.Snapshot().Sessions), 20; got != want {
		t.Errorf("warm index has %d sessions, want %d", got, want)
	}
	if !titleIs("s-07", "title s-07")(warm.Snapshot()) {
		t.Error("warm index lost a title")
	}

	// A log that grew after the cache was written is read from where the
	// cache says reading stopped.
	grown := filepath.Join(sessionDir(root, "s-03"), "session.jsonl")
	extra := titleLine(1, "grown")
	appendFile(t, grown, []byte(extra))
	again := titles.NewIndex(root, titles.IndexOptions{})
	if err := again.LoadCache(cache); err != nil {
		t.Fatal(err)
	}
	if err := again.Build(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if again.BytesRead() != int64(len(extra)) {
		t.Errorf("read %d bytes after a %d-byte append", again.BytesRead(), len(extra))
	}
	if !titleIs("s-03", "grown")(again.Snapshot()) {
		t.Error("grown title not seen")
	}
}

func TestCorruptCacheIsRebuilt(t *testing.T) {
	root := filepath.Join(t.TempDir(), "sessions")
	writeFile(t, filepath.Join(sessionDir(root, "c-1"), "session.jsonl"), header("c-1")+titleLine(0, "kept"))
	cases := map[string][]byte{
		"garbage":       []byte("not a cache at all"),
		"truncated":     nil, // filled below from a real cache cut short
		"foreign magic": append([]byte("other tool cache\n"), bytes.Repeat([]byte{1}, 64)...),
	}
	dir := t.TempDir()
	good := filepath.Join(dir, "good.gob")
	ix := titles.NewIndex(root, titles.IndexOptions{})
	if err := ix.Build(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if err := ix.SaveCache(good); err != nil {
		t.Fatal(err)
	}
	full, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	cases["truncated"] = full[:len(full)/2]
	for name, content := range cases {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(dir, name+".gob")
			if err := os.WriteFile(path, content, 0o600); err != nil {
				t.Fatal(err)
			}
			h := start(t, root, watch.ModeOff, path)
			st := h.store.Status()
			if st.CacheLoaded || st.CacheProblem == "" {
				t.Errorf("corrupt cache accepted: %+v", st)
			}
			if !titleIs("c-1", "kept")(h.store.Index().Snapshot()) {
				t.Error("index not rebuilt from the logs")
			}
			// The rebuilt index rewrote the cache, and it now loads.
			again := titles.NewIndex(root, titles.IndexOptions{})
			if err := again.LoadCache(path); err != nil {
				t.Errorf("rewritten cache does not load: %v", err)
			}
		})
	}
}

func TestCacheOfAnotherRootIsRefused(t *testing.T) {
	a := filepath.Join(t.TempDir(), "a")
	writeFile(t, filepath.Join(sessionDir(a, "a-1"), "session.jsonl"), header("a-1"))
	ix := titles.NewIndex(a, titles.IndexOptions{})
	if err := ix.Build(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	cache := filepath.Join(t.TempDir(), "c.gob")
	if err := ix.SaveCache(cache); err != nil {
		t.Fatal(err)
	}
	other := titles.NewIndex(filepath.Join(t.TempDir(), "b"), titles.IndexOptions{})
	if err := other.LoadCache(cache); err == nil {
		t.Fatal("a cache of another root was accepted")
	}
}

// TestOnUpdate checks that OnUpdate runs after the first build and after a
// watched change, and that the index already shows the change when it
// runs.
func TestOnUpdate(t *testing.T) {
	root := filepath.Join(t.TempDir(), "sessions")
	path := filepath.Join(sessionDir(root, "upd-1"), "session.jsonl")
	writeFile(t, path, header("upd-1")+titleLine(0, "before"))
	updates := make(chan string, 16)
	var st *live.Store
	st, err := live.Open(live.Options{Root: root, Watch: watch.ModeFsnotify, CachePath: live.NoCache, Logger: zaptest.NewLogger(t),
		OnUpdate: func() {
			e, _ := st.Index().Snapshot().Locate("upd-1")
			updates <- e.Title
		}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- st.Run(ctx) }()
	defer func() { cancel(); <-done }()
	next := func() string {
		t.Helper()
		select {
		case title := <-updates:
			return title
		case <-time.After(visibleWithin):
			t.Fatal("no OnUpdate")
			return ""
		}
	}
	if got := next(); got != "before" {
		t.Fatalf("first OnUpdate saw title %q, want the built %q", got, "before")
	}
	appendFile(t, path, []byte(titleLine(1, "after")))
	for got := next(); got != "after"; got = next() {
		// A batch may arrive before the title line is complete.
	}
}
