package titles

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dsh-refls/dsh-refls/sessionref/dshlog/layout"
)

// skipReason returns the reason the snapshot gives for path, or "".
func skipReason(snap *Snapshot, path string) string {
	for _, s := range snap.Skipped {
		if s.Path == path {
			return s.Reason
		}
	}
	return ""
}

func TestDiscoveryGenerations(t *testing.T) {
	s := newTestStore(t)
	h := headerSpec{ID: "gen", Cwd: "/p", HasCwd: true, CreatedAt: fixtureTime}
	s.write(sessionSpec{Header: h, Encoding: layout.EncodingRaw, Batches: [][]string{{titleEvent(0, "old generation")}}})
	h2 := h
	h2.Version = 2
	s.write(sessionSpec{Header: h2, Encoding: layout.EncodingZstd, Generation: 2, Batches: [][]string{{titleEvent(0, "generation two")}}})
	// A lower successor generation does not matter.
	h1 := h
	h1.Version = 1
	s.write(sessionSpec{Header: h1, Encoding: layout.EncodingRaw, Generation: 1, Batches: [][]string{{titleEvent(0, "generation one")}}})

	snap := s.index().Snapshot()
	e, ok := snap.Locate("gen")
	if !ok {
		t.Fatalf("session not listed; skipped: %+v", snap.Skipped)
	}
	if e.Generation != 2 || e.Encoding != layout.EncodingZstd || e.FormatVersion != 2 || e.Title != "generation two" {
		t.Errorf("entry %+v, want generation 2 zstd with its title", e)
	}
	if filepath.Base(e.Path) != "session.v2.jsonl.zstd" {
		t.Errorf("path %s", e.Path)
	}
}

func TestDiscoveryGenerationVersionMismatchSkipped(t *testing.T) {
	s := newTestStore(t)
	h := headerSpec{ID: "mismatch", Cwd: "/p", HasCwd: true, CreatedAt: fixtureTime, Version: 1}
	s.write(sessionSpec{Header: h, Encoding: layout.EncodingRaw, Generation: 2, Batches: [][]string{{titleEvent(0, "t")}}})
	snap := s.index().Snapshot()
	if _, ok := snap.Locate("mismatch"); ok {
		t.Fatal("a session.v2 log with header version 1 is listed")
	}
	if r := skipReason(snap, s.sessionDir(h)); !strings.Contains(r, "version") {
		t.Errorf("skip reason %q does not mention the version", r)
	}
}

func TestDiscoverySkips(t *testing.T) {
	s := newTestStore(t)
	// Flat layout: a log directly in a project directory.
	proj := filepath.Join(s.root, layout.ProjectKey("/flat"))
	if err := os.MkdirAll(proj, 0o755); err != nil {
		t.Fatal(err)
	}
	flat := filepath.Join(proj, "flat-id.jsonl")
	writeLog(t, flat, layout.EncodingRaw, headerLine(headerSpec{ID: "flat-id", Cwd: "/flat", HasCwd: true}), nil)
	flatZ := filepath.Join(proj, "flat-z.jsonl.zstd")
	writeLog(t, flatZ, layout.EncodingZstd, headerLine(headerSpec{ID: "flat-z", Cwd: "/flat", HasCwd: true}), nil)

	// The same id in two project directories, each otherwise valid.
	dupA := s.simple("dup", "/a", fixtureTime)
	dupB := s.simple("dup", "/b", fixtureTime+1)

	// Identity mismatches: id and cwd.
	idDir := filepath.Join(s.root, layout.ProjectKey("/p"), layout.EncodeSegment("dir-name"))
	os.MkdirAll(idDir, 0o755)
	writeLog(t, filepath.Join(idDir, "session.jsonl"), layout.EncodingRaw, headerLine(headerSpec{ID: "other-id", Cwd: "/p", HasCwd: true}), nil)
	cwdDir := filepath.Join(s.root, layout.ProjectKey("/p"), layout.EncodeSegment("cwd-mismatch"))
	os.MkdirAll(cwdDir, 0o755)
	writeLog(t, filepath.Join(cwdDir, "session.jsonl"), layout.EncodingRaw, headerLine(headerSpec{ID: "cwd-mismatch", Cwd: "/elsewhere", HasCwd: true}), nil)
	// A session without cwd in a project directory, and one with a cwd under _no-cwd.
	noCwdInProj := filepath.Join(s.root, layout.ProjectKey("/p"), "lost")
	os.MkdirAll(noCwdInProj, 0o755)
	writeLog(t, filepath.Join(noCwdInProj, "session.jsonl"), layout.EncodingRaw, headerLine(headerSpec{ID: "lost"}), nil)
	cwdInNoCwd := filepath.Join(s.root, layout.NoCwdDir, "found")
	os.MkdirAll(cwdInNoCwd, 0o755)
	writeLog(t, filepath.Join(cwdInNoCwd, "session.jsonl"), layout.EncodingRaw, headerLine(headerSpec{ID: "found", Cwd: "/p", HasCwd: true}), nil)

	// Valid sessions, with and without a cwd.
	s.simple("good", "/p", fixtureTime+5, titleEvent(0, "Good"))
	s.write(sessionSpec{Header: headerSpec{ID: "no cwd/é", CreatedAt: fixtureTime + 6}, Encoding: layout.EncodingZstd,
		Batches: [][]string{{titleEvent(0, "Without cwd")}}})

	snap := s.index().Snapshot()
	var ids []string
	for _, e := range snap.Sessions {
		ids = append(ids, e.ID)
	}
	if strings.Join(ids, ",") != "no cwd/é,good" {
		t.Errorf("listed %v, want [no cwd/é good]", ids)
	}
	e, _ := snap.Locate("no cwd/é")
	if e.HasCwd || e.Title != "Without cwd" || filepath.Base(filepath.Dir(filepath.Dir(e.Path))) != layout.NoCwdDir {
		t.Errorf("_no-cwd session %+v", e)
	}
	for _, tt := range []struct {
		path, reason string
	}{
		{flat, "flat"},
		{flatZ, "flat"},
		{filepath.Dir(dupA), "appears in 2"},
		{filepath.Dir(dupB), "appears in 2"},
		{idDir, "other-id"},
		{cwdDir, "project directory"},
		{noCwdInProj, "project directory"},
		{cwdInNoCwd, "project directory"},
	} {
		if r := skipReason(snap, tt.path); !strings.Contains(r, tt.reason) {
			t.Errorf("skip reason for %s = %q, want it to mention %q", tt.path, r, tt.reason)
		}
	}
}

func TestDiscoveryRootMissingThenCreated(t *testing.T) {
	root := filepath.Join(t.TempDir(), "not-yet")
	ix := NewIndex(root, IndexOptions{})
	if err := ix.Build(context.Background(), nil); err != nil {
		t.Fatalf("Build over a missing root: %v", err)
	}
	if n := len(ix.Snapshot().Sessions); n != 0 || ix.Snapshot().Building {
		t.Fatalf("missing root: %d sessions, building %v", n, ix.Snapshot().Building)
	}
	s := &testStore{t: t, root: root}
	s.simple("late", "/p", fixtureTime)
	if err := ix.Refresh(context.Background(), []string{root}); err != nil {
		t.Fatal(err)
	}
	if _, ok := ix.Snapshot().Locate("late"); !ok {
		t.Error("a root created later is not picked up")
	}
}

func TestDiscoveryUnreadableDirectory(t *testing.T) {
	s := newTestStore(t)
	path := s.simple("locked", "/p", fixtureTime)
	dir := filepath.Dir(path)
	if err := os.Chmod(dir, 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(dir, 0o755) })
	if f, err := os.Open(dir); err == nil {
		f.Close()
		t.Skip("skipping: this user can read a mode-000 directory (running as root)")
	}
	snap := s.index().Snapshot()
	if _, ok := snap.Locate("locked"); ok {
		t.Error("an unreadable session is listed")
	}
	if r := skipReason(snap, dir); !strings.Contains(r, "unreadable") {
		t.Errorf("skip reason %q", r)
	}
}

func TestDiscoveryHeaderProblems(t *testing.T) {
	s := newTestStore(t)
	h := headerSpec{ID: "torn", Cwd: "/p", HasCwd: true, CreatedAt: fixtureTime}
	dir := s.sessionDir(h)
	os.MkdirAll(dir, 0o755)
	path := filepath.Join(dir, "session.jsonl")
	header := headerLine(h)
	if err := os.WriteFile(path, []byte(header[:len(header)-4]), 0o644); err != nil {
		t.Fatal(err)
	}
	badDir := filepath.Join(s.root, layout.ProjectKey("/p"), "garbage")
	os.MkdirAll(badDir, 0o755)
	os.WriteFile(filepath.Join(badDir, "session.jsonl"), []byte("not json\n"), 0o644)
	emptyDir := filepath.Join(s.root, layout.ProjectKey("/p"), "empty")
	os.MkdirAll(emptyDir, 0o755)

	ix := s.index()
	snap := ix.Snapshot()
	if len(snap.Sessions) != 0 {
		t.Fatalf("listed %+v", snap.Sessions)
	}
	for _, tt := range []struct{ path, reason string }{
		{dir, "header"}, {badDir, "header"}, {emptyDir, "no session log"},
	} {
		if r := skipReason(snap, tt.path); !strings.Contains(r, tt.reason) {
			t.Errorf("skip reason for %s = %q, want it to mention %q", tt.path, r, tt.reason)
		}
	}
	// The torn header completes: the session appears.
	appendFile(t, path, []byte(header[len(header)-4:]+"\n"+titleEvent(0, "Now complete")+"\n"))
	if e := mustLocate(t, refresh(t, ix, path), "torn"); e.Title != "Now complete" {
		t.Errorf("entry %+v", e)
	}
}

// TestDiscoveryRefusedHeaderAndUnreadableLog: a header that is JSON but
// not a valid header is skipped with the rule it breaks, and a log that
// cannot be read (here a directory where the log should be) with the
// read's error; neither is listed.
func TestDiscoveryRefusedHeaderAndUnreadableLog(t *testing.T) {
	s := newTestStore(t)
	badHeader := s.sessionDir(headerSpec{ID: "bad-version", Cwd: "/p", HasCwd: true, CreatedAt: fixtureTime})
	if err := os.MkdirAll(badHeader, 0o755); err != nil {
		t.Fatal(err)
	}
	header := `{"type":"session","version":"zero","id":"bad-version","createdAt":1,"cwd":"/p","delegationDepth":0}` + "\n"
	if err := os.WriteFile(filepath.Join(badHeader, "session.jsonl"), []byte(header), 0o644); err != nil {
		t.Fatal(err)
	}
	notAFile := s.sessionDir(headerSpec{ID: "not-a-file", Cwd: "/p", HasCwd: true, CreatedAt: fixtureTime + 1})
	if err := os.MkdirAll(filepath.Join(notAFile, "session.jsonl"), 0o755); err != nil {
		t.Fatal(err)
	}
	snap := s.index().Snapshot()
	if len(snap.Sessions) != 0 {
		t.Fatalf("listed %+v", snap.Sessions)
	}
	if r := skipReason(snap, badHeader); !strings.HasPrefix(r, "header unreadable: ") || strings.Contains(r, "invalid JSON") {
		t.Errorf("skip reason for the bad header = %q, want the header rule it breaks", r)
	}
	if r := skipReason(snap, notAFile); r == "" || strings.HasPrefix(r, "header") {
		t.Errorf("skip reason for the unreadable log = %q, want the read's error", r)
	}
}
