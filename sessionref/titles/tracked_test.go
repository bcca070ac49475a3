package titles

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"unsafe"

	"github.com/dsh-refls/dsh-refls/sessionref/dshlog"
)

// TestIndexRewriteInPlaceIsReadAgain changes a byte before the resume
// offset of a log the index has read, keeping the file (same inode) and
// growing it: the index keeps only a hash of the bytes before the offset,
// and must still tell the rewrite from an append and read the log again.
func TestIndexRewriteInPlaceIsReadAgain(t *testing.T) {
	s := newTestStore(t)
	path := s.simple("rw", "/p", fixtureTime, userMsg(0, "q"), titleEvent(1, "Grown title"))
	ix := s.index()
	if e := mustLocate(t, ix.Snapshot(), "rw"); e.Title != "Grown title" {
		t.Fatalf("entry %+v", e)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// The title's line ends the read part: its bytes are the ones hashed.
	i := bytes.LastIndex(data, []byte("Grown title"))
	copy(data[i:], "Other title")
	data = append(data, []byte(titleEvent(2, "Newest")+"\n")...)
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(data, 0); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	before := ix.BytesRead()
	e := mustLocate(t, refresh(t, ix, path), "rw")
	if d := ix.BytesRead() - before; d < int64(len(data)) {
		t.Errorf("a log rewritten in place was read %d bytes, not again from the start (%d)", d, len(data))
	}
	if e.Title != "Newest" || e.LastSeq != 2 {
		t.Errorf("after the rewrite: title %q seq %d, want Newest and 2", e.Title, e.LastSeq)
	}

	// An append alone is read from the offset.
	line := titleEvent(3, "Appended") + "\n"
	appendFile(t, path, []byte(line))
	before = ix.BytesRead()
	e = mustLocate(t, refresh(t, ix, path), "rw")
	if d := ix.BytesRead() - before; d != int64(len(line)) {
		t.Errorf("an append of %d bytes read %d", len(line), d)
	}
	if e.Title != "Appended" {
		t.Errorf("title %q after the append", e.Title)
	}
}

// TestTrackedStaysSmall guards the writer's per-session state: the server
// holds one per session (100,000 on a large store), so each 64 bytes here
// is 6.4 MB of resident memory there. It holds no read buffer, scanner or
// copy of log bytes (tracked's doc comment).
func TestTrackedStaysSmall(t *testing.T) {
	if n := unsafe.Sizeof(tracked{}); n > 160 {
		t.Errorf("tracked is %d bytes, more than the 160 it was cut to", n)
	}
	// A snapshot holds one Entry and one searchSpan per listed session.
	// 240 bytes until WorkDir (dsh 0.2.1's effective directory) took 16
	// more: 1.6 MB at 100,000 sessions.
	if n := unsafe.Sizeof(dshlog.Entry{}); n > 256 {
		t.Errorf("Entry is %d bytes, more than the 256 it was cut to (its bools share a word)", n)
	}
	if n := unsafe.Sizeof(searchSpan{}); n > 20 {
		t.Errorf("searchSpan is %d bytes, more than its five 32-bit offsets", n)
	}
}

// TestMakeSessionDirNamesAreTheLogPaths checks the lengths a SessionDir
// keeps instead of its names: each name read back equals the one given,
// and a log path that does not hold them is refused.
func TestMakeSessionDirNamesAreTheLogPaths(t *testing.T) {
	root := filepath.Join(t.TempDir(), "sessions")
	dir := filepath.Join(root, "--home-u-p--", "abc")
	d, ok := dshlog.MakeSessionDir("--home-u-p--", "abc", dir, dshlog.LogFile{Path: filepath.Join(dir, "session.jsonl")}, 7)
	if !ok {
		t.Fatal("refused root/project/session/log")
	}
	if d.Path() != dir || d.DirName() != "abc" || d.ProjectName() != "--home-u-p--" || d.DirModTime != 7 {
		t.Errorf("path %q name %q project %q mod %d", d.Path(), d.DirName(), d.ProjectName(), d.DirModTime)
	}
	for _, c := range []struct{ project, name, dir, log string }{
		{"--home-u-p--", "abc", dir, filepath.Join(root, "--home-u-p--", "abd", "session.jsonl")}, // another directory
		{"--home-u-p--", "ab", dir, filepath.Join(dir, "session.jsonl")},                          // not the path's last name
		{"--other--", "abc", dir, filepath.Join(dir, "session.jsonl")},                            // not its project
		{"--home-u-p--", "abc", dir, dir},                                                         // no log name
	} {
		if _, ok := dshlog.MakeSessionDir(c.project, c.name, c.dir, dshlog.LogFile{Path: c.log}, 0); ok {
			t.Errorf("accepted %+v", c)
		}
	}
}
