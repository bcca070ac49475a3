package titles

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/dsh-refls/dsh-refls/sessionref/dshlog"
	"github.com/dsh-refls/dsh-refls/sessionref/dshlog/layout"
)

// readCacheFile decodes a cache file as SaveCache wrote it.
func readCacheFile(t *testing.T, path string) *cacheFile {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(raw, []byte(cacheMagic)) {
		t.Fatalf("%s has no cache magic", path)
	}
	cf, err := decodeCache(raw[len(cacheMagic):])
	if err != nil {
		t.Fatal(err)
	}
	return cf
}

// writeCacheFileTo writes cf as a cache file at path.
func writeCacheFileTo(t *testing.T, path string, cf *cacheFile) {
	t.Helper()
	var buf bytes.Buffer
	buf.WriteString(cacheMagic)
	w := bufio.NewWriter(&buf)
	if err := encodeCache(w, cf); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
}

// preparedText reads id as preparation does (ReadNewest, through the
// snapshot) and returns everything the read says.
func preparedText(t *testing.T, ix *Index, id string) string {
	t.Helper()
	e, ok := ix.Snapshot().Locate(id)
	if !ok {
		return "error: " + id + " is not listed"
	}
	p, err := dshlog.ReadNewest(context.Background(), e, &dshlog.FrameDecoder{Concurrency: 1})
	if err != nil {
		return "error: " + err.Error()
	}
	raw, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

// TestForgedCacheEntriesServeNothingOutsideTheRoot forges the cache entry
// of a listed session in every way a path or an id could be smuggled in —
// the entry's Path, the log name, the project and directory names, the id —
// pointing at a well-formed log of the same id outside the root. The forged
// cache is either refused or its paths are derived from the root: the real
// log is read for preparation, never the outside one, and the state saved
// after the restart is clean.
func TestForgedCacheEntriesServeNothingOutsideTheRoot(t *testing.T) {
	s := newTestStore(t)
	const id, cwd = "victim", "/work/cache"
	s.simple(id, cwd, fixtureTime, userMsg(0, "REAL-LOG text"), titleEvent(1, "Victim"))
	s.simple("other", cwd, fixtureTime+1, userMsg(0, "OTHER-LOG text"), titleEvent(1, "Other"))
	outsideDir := filepath.Join(filepath.Dir(s.root), "outside", layout.EncodeSegment(id))
	if err := os.MkdirAll(outsideDir, 0o755); err != nil {
		t.Fatal(err)
	}
	outsideLog := filepath.Join(outsideDir, "session.jsonl")
	writeLog(t, outsideLog, layout.EncodingRaw, headerLine(headerSpec{ID: id, Cwd: cwd, HasCwd: true, CreatedAt: fixtureTime}),
		[][]string{{userMsg(0, "OUTSIDE-LOG text"), titleEvent(1, "Victim")}})
	good := filepath.Join(t.TempDir(), "index.gob")
	if err := s.index().SaveCache(good); err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(filepath.Join(s.root, layout.ProjectDir(cwd, true)), outsideDir)
	if err != nil {
		t.Fatal(err)
	}
	forgeries := map[string]func(c *cachedSession){
		"entry path":        func(c *cachedSession) { c.Entry.Path = outsideLog },
		"log name":          func(c *cachedSession) { c.LogName = filepath.Join("..", "..", rel, "session.jsonl") },
		"dir name":          func(c *cachedSession) { c.DirName = filepath.Join("..", rel) },
		"project name":      func(c *cachedSession) { c.ProjectName = "--/../../outside--"; c.DirName = layout.EncodeSegment(id) },
		"not a log name":    func(c *cachedSession) { c.LogName = "notes.txt" },
		"id of another dir": func(c *cachedSession) { c.Entry.ID = "other" },
		"resume check":      func(c *cachedSession) { c.TailLen = 1 << 20 },
		"search text parts": func(c *cachedSession) { c.SearchIDLen, c.SearchDispLen = 1<<20, -1 },
		// The victim follows "other" (cwd /work/cache) in the cache: its
		// project must be checked against its own cwd, not the one
		// decoded before it.
		"cwd of another project": func(c *cachedSession) { c.Entry.Cwd = "/other" },
	}
	refused := map[string]bool{"cwd of another project": true, "id of another dir": true, "project name": true}
	for name, forge := range forgeries {
		t.Run(name, func(t *testing.T) {
			cf := readCacheFile(t, good)
			forged := false
			for i := range cf.Sessions {
				if cf.Sessions[i].Entry.ID == id {
					forge(&cf.Sessions[i])
					forged = true
				}
			}
			if !forged {
				t.Fatal("no cache entry of the victim")
			}
			path := filepath.Join(t.TempDir(), "forged.gob")
			writeCacheFileTo(t, path, cf)
			for restart := 0; restart < 2; restart++ {
				ix := NewIndex(s.root, IndexOptions{})
				lerr := ix.LoadCache(path)
				if lerr != nil && !errors.Is(lerr, ErrCacheUnusable) {
					t.Fatalf("LoadCache: %v", lerr)
				}
				if restart == 0 && refused[name] && lerr == nil {
					t.Errorf("the forged cache (%s) was loaded, want ErrCacheUnusable", name)
				}
				if err := ix.Build(context.Background(), nil); err != nil {
					t.Fatal(err)
				}
				for _, e := range ix.Snapshot().Sessions {
					if !strings.HasPrefix(e.Path, s.root+string(filepath.Separator)) {
						t.Errorf("restart %d: %s listed at %s, outside the root", restart, e.ID, e.Path)
					}
				}
				for _, want := range []struct{ id, text string }{{id, "REAL-LOG"}, {"other", "OTHER-LOG"}} {
					got := preparedText(t, ix, want.id)
					if strings.Contains(got, "OUTSIDE-LOG") || !strings.Contains(got, want.text) {
						t.Errorf("restart %d (load: %v): %s prepared as %s", restart, lerr, want.id, got)
					}
				}
				if err := ix.SaveCache(path); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// tailLine is an assistant message whose text ends the line, as dsh's
// JSON puts it when content is the last field: the bytes before a resume
// offset are then message text.
func tailLine(seq int64, text string) string {
	return fmt.Sprintf(`{"type":%q,"seq":%d,"time":%d,"surfaceOp":"append","data":{"turn":1,"step":1,"message":{"id":"a-%d","role":"assistant","source":{"kind":"model"},"content":[{"type":"text","text":%q}]}}}`,
		"assistant/message", seq, fixtureTime+seq, seq, text)
}

// TestCacheHoldsNoMessageText writes logs whose last bytes are assistant
// text (raw, and zstd: a frame's last bytes are compressed text): the cache
// holds neither the resume tail nor the text, yet a restart still reads
// only what was appended, and still notices a rewrite in place.
func TestCacheHoldsNoMessageText(t *testing.T) {
	s := newTestStore(t)
	raw := s.simple("tail-raw", "/work/t", fixtureTime, titleEvent(0, "Tail"), tailLine(1, "the reply ends with TAILSECRET"))
	s.write(sessionSpec{Header: headerSpec{ID: "tail-zstd", Cwd: "/work/t", HasCwd: true, CreatedAt: fixtureTime + 1},
		Encoding: layout.EncodingZstd, Batches: [][]string{{titleEvent(0, "Tail"), tailLine(1, "the reply ends with TAILSECRET")}}})
	cache := filepath.Join(t.TempDir(), "index.gob")
	if err := s.index().SaveCache(cache); err != nil {
		t.Fatal(err)
	}
	content, err := os.ReadFile(cache)
	if err != nil {
		t.Fatal(err)
	}
	logBytes, err := os.ReadFile(raw)
	if err != nil {
		t.Fatal(err)
	}
	tail := logBytes[len(logBytes)-dshlog.ResumeTailLen:]
	if !bytes.Contains(tail, []byte("TAILSECRET")) {
		t.Fatalf("the test log's tail %q does not hold the text", tail)
	}
	if bytes.Contains(content, []byte("TAILSECRET")) || bytes.Contains(content, tail) {
		t.Errorf("the cache holds message text (%d bytes)", len(content))
	}
	zlog := filepath.Join(s.sessionDir(headerSpec{ID: "tail-zstd", Cwd: "/work/t", HasCwd: true}), "session.jsonl.zstd")
	zbytes, err := os.ReadFile(zlog)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(content, zbytes[len(zbytes)-dshlog.ResumeTailLen:]) {
		t.Error("the cache holds the zstd log's last bytes")
	}

	// Growth after a restart is read from the resume offset.
	extra := titleEvent(2, "Grown title") + "\n"
	appendFile(t, raw, []byte(extra))
	warm := NewIndex(s.root, IndexOptions{})
	if err := warm.LoadCache(cache); err != nil {
		t.Fatal(err)
	}
	if err := warm.Build(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if warm.BytesRead() != int64(len(extra)) {
		t.Errorf("restart read %d bytes after a %d-byte append", warm.BytesRead(), len(extra))
	}
	if e, ok := warm.Snapshot().Locate("tail-raw"); !ok || e.Title != "Grown title" {
		t.Errorf("grown title not seen: %+v", e)
	}

	// A rewrite in place after a restart is read from the start.
	if err := warm.SaveCache(cache); err != nil {
		t.Fatal(err)
	}
	grown, err := os.ReadFile(raw)
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.LastIndex(grown, []byte("Grown title"))
	copy(grown[i:], "Other title")
	grown = append(grown, []byte(titleEvent(3, "Newest")+"\n")...)
	if err := os.WriteFile(raw, grown, 0o644); err != nil {
		t.Fatal(err)
	}
	again := NewIndex(s.root, IndexOptions{})
	if err := again.LoadCache(cache); err != nil {
		t.Fatal(err)
	}
	if err := again.Build(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if again.BytesRead() < int64(len(grown)) {
		t.Errorf("a log rewritten in place was read %d bytes, not again from the start (%d)", again.BytesRead(), len(grown))
	}
	if e, _ := again.Snapshot().Locate("tail-raw"); e.Title != "Newest" {
		t.Errorf("title after the rewrite %q, want Newest", e.Title)
	}
}

// TestStaleCacheTempsAreRemoved leaves temporary files as a killed save
// would: a save removes those older than staleTempAge and keeps younger
// ones (another process may be writing them) and anything not a regular
// file.
func TestStaleCacheTempsAreRemoved(t *testing.T) {
	s := newTestStore(t)
	s.simple("tmp-1", "/work/t", fixtureTime, titleEvent(0, "Kept"))
	dir := t.TempDir()
	old := filepath.Join(dir, ".index-111.tmp")
	young := filepath.Join(dir, ".index-222.tmp")
	link := filepath.Join(dir, ".index-333.tmp")
	target := filepath.Join(dir, "target")
	for _, p := range []string{old, young, target} {
		if err := os.WriteFile(p, []byte("partial"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	past := time.Now().Add(-2 * staleTempAge)
	if err := os.Chtimes(old, past, past); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(target, past, past); err != nil {
		t.Fatal(err)
	}
	if err := s.index().SaveCache(filepath.Join(dir, "index.gob")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(old); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("stale temporary file kept: %v", err)
	}
	for _, p := range []string{young, link, target} {
		if _, err := os.Lstat(p); err != nil {
			t.Errorf("%s removed: %v", p, err)
		}
	}
	left, _ := filepath.Glob(filepath.Join(dir, cacheTempPattern))
	if len(left) != 2 {
		t.Errorf("temporary files after a save: %v, want the young file and the link", left)
	}
}

// TestRestoredOriginsAreShared: sessions of one origin keep it through
// the cache, restored as one string, not one copy per session.
func TestRestoredOriginsAreShared(t *testing.T) {
	s := newTestStore(t)
	for i, id := range []string{"first", "second"} {
		dir := s.sessionDir(headerSpec{ID: id, Cwd: "/p", HasCwd: true, CreatedAt: fixtureTime + int64(i)})
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		header := fmt.Sprintf(`{"type":"session","version":0,"id":%q,"createdAt":%d,"cwd":"/p","delegationDepth":0,"origin":"scheduler"}`, id, fixtureTime+int64(i))
		if err := os.WriteFile(filepath.Join(dir, "session.jsonl"), []byte(header+"\n"+titleEvent(0, "Title "+id)+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cache := filepath.Join(t.TempDir(), "index.cache")
	if err := s.index().SaveCache(cache); err != nil {
		t.Fatal(err)
	}
	warm := NewIndex(s.root, IndexOptions{})
	if err := warm.LoadCache(cache); err != nil {
		t.Fatal(err)
	}
	a, aok := warm.Snapshot().Locate("first")
	b, bok := warm.Snapshot().Locate("second")
	if !aok || !bok || a.Origin != "scheduler" || b.Origin != "scheduler" {
		t.Fatalf("restored origins %q (%v) and %q (%v), want scheduler twice", a.Origin, aok, b.Origin, bok)
	}
	if unsafe.StringData(a.Origin) != unsafe.StringData(b.Origin) {
		t.Error("the two restored origins are two copies of one string")
	}
}
