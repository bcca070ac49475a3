package titles

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/dsh-refls/dsh-refls/sessionref/dshlog"
	"github.com/dsh-refls/dsh-refls/sessionref/dshlog/layout"
)

func refresh(t *testing.T, ix *Index, paths ...string) *Snapshot {
	t.Helper()
	if err := ix.Refresh(context.Background(), paths); err != nil {
		t.Fatalf("Refresh(%v): %v", paths, err)
	}
	return ix.Snapshot()
}

func mustLocate(t *testing.T, snap *Snapshot, id string) dshlog.Entry {
	t.Helper()
	e, ok := snap.Locate(id)
	if !ok {
		t.Fatalf("session %s not listed; skipped %+v", id, snap.Skipped)
	}
	return e
}

func TestIndexIncrementalRaw(t *testing.T) {
	s := newTestStore(t)
	path := s.simple("inc", "/p", fixtureTime, userMsg(0, "q"), titleEvent(1, "First title"))
	ix := s.index()
	if e := mustLocate(t, ix.Snapshot(), "inc"); e.Title != "First title" || e.LastSeq != 1 {
		t.Fatalf("entry %+v", e)
	}
	line := titleEvent(2, "Second title") + "\n"
	torn, rest := line[:len(line)/2], line[len(line)/2:]

	before := ix.BytesRead()
	appendFile(t, path, []byte(torn))
	e := mustLocate(t, refresh(t, ix, path), "inc")
	if e.Title != "First title" || e.LastSeq != 1 {
		t.Errorf("after a torn append: title %q seq %d, want the old ones", e.Title, e.LastSeq)
	}
	if d := ix.BytesRead() - before; d > int64(len(torn)) {
		t.Errorf("torn append read %d bytes, appended %d", d, len(torn))
	}

	before = ix.BytesRead()
	appendFile(t, path, []byte(rest))
	e = mustLocate(t, refresh(t, ix, path), "inc")
	if e.Title != "Second title" || e.LastSeq != 2 {
		t.Errorf("after completion: title %q seq %d", e.Title, e.LastSeq)
	}
	if d := ix.BytesRead() - before; d > int64(len(line)) {
		t.Errorf("completion read %d bytes; appended %d plus a torn part of %d", d, len(rest), len(torn))
	}

	// A refresh with nothing new reads nothing.
	before = ix.BytesRead()
	refresh(t, ix, path)
	if d := ix.BytesRead() - before; d != 0 {
		t.Errorf("an unchanged log read %d bytes", d)
	}
}

func TestIndexIncrementalZstd(t *testing.T) {
	s := newTestStore(t)
	path := s.write(sessionSpec{Header: headerSpec{ID: "z", Cwd: "/p", HasCwd: true, CreatedAt: fixtureTime},
		Encoding: layout.EncodingZstd, Batches: [][]string{{userMsg(0, "q"), titleEvent(1, "First title")}}})
	ix := s.index()
	frame := zstdFrame([]string{assistantMsg(2, "a"), titleEvent(3, "Second title")})
	half := len(frame) / 2

	before := ix.BytesRead()
	appendFile(t, path, frame[:half])
	e := mustLocate(t, refresh(t, ix, path), "z")
	if e.Title != "First title" || e.LastSeq != 1 || e.Corrupt != "" {
		t.Errorf("after half a frame: %+v", e)
	}
	if d := ix.BytesRead() - before; d > int64(half) {
		t.Errorf("half a frame read %d bytes, appended %d", d, half)
	}

	before = ix.BytesRead()
	appendFile(t, path, frame[half:])
	e = mustLocate(t, refresh(t, ix, path), "z")
	if e.Title != "Second title" || e.LastSeq != 3 {
		t.Errorf("after the whole frame: %+v", e)
	}
	if d := ix.BytesRead() - before; d > int64(len(frame)) {
		t.Errorf("completion read %d bytes; the frame is %d", d, len(frame))
	}
}

func TestIndexReplacedLogReread(t *testing.T) {
	s := newTestStore(t)
	h := headerSpec{ID: "rep", Cwd: "/p", HasCwd: true, CreatedAt: fixtureTime}
	path := s.write(sessionSpec{Header: h, Encoding: layout.EncodingRaw,
		Batches: [][]string{{userMsg(0, "a long first message to make the file big"), titleEvent(1, "Old title"), turnEnd(2)}}})
	ix := s.index()
	mustLocate(t, ix.Snapshot(), "rep")

	// A new, smaller file renamed over the log: a new inode.
	tmp := filepath.Join(filepath.Dir(path), "tmp")
	writeLog(t, tmp, layout.EncodingRaw, headerLine(h), [][]string{{titleEvent(0, "New")}})
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
	e := mustLocate(t, refresh(t, ix, path), "rep")
	if e.Title != "New" || e.LastSeq != 0 {
		t.Errorf("replaced log: title %q seq %d, want New and 0", e.Title, e.LastSeq)
	}
}

func TestIndexSessionsAppearAndDisappear(t *testing.T) {
	s := newTestStore(t)
	gone := s.simple("gone", "/p", fixtureTime, titleEvent(0, "Gone"))
	s.simple("stays", "/p", fixtureTime+1, titleEvent(0, "Stays"))
	ix := s.index()
	mustLocate(t, ix.Snapshot(), "gone")

	dir := filepath.Dir(gone)
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	snap := refresh(t, ix, dir)
	if _, ok := snap.Locate("gone"); ok {
		t.Error("a deleted session is still listed")
	}
	mustLocate(t, snap, "stays")

	// A session in a project directory that did not exist before.
	fresh := s.simple("fresh", "/new/project", fixtureTime+2, titleEvent(0, "Fresh"))
	projectDir := filepath.Dir(filepath.Dir(fresh))
	if e := mustLocate(t, refresh(t, ix, projectDir), "fresh"); e.Title != "Fresh" {
		t.Errorf("new session %+v", e)
	}

	// A new generation replaces the old log.
	h := headerSpec{ID: "stays", Cwd: "/p", HasCwd: true, CreatedAt: fixtureTime + 1, Version: 1}
	next := s.write(sessionSpec{Header: h, Encoding: layout.EncodingZstd, Generation: 1, Batches: [][]string{{titleEvent(0, "Generation one")}}})
	e := mustLocate(t, refresh(t, ix, next), "stays")
	if e.Title != "Generation one" || e.Generation != 1 || e.Path != next || e.FormatVersion != 1 {
		t.Errorf("after a new generation: %+v", e)
	}
	if n := len(ix.Snapshot().Sessions); n != 2 {
		t.Errorf("%d sessions listed, want 2", n)
	}
}

func TestIndexDescriptorLabel(t *testing.T) {
	label := func(s string) *string { return &s }
	tests := []struct {
		name   string
		events []string
		want   string
	}{
		{"no descriptor", []string{titleEvent(0, "Title")}, "Title"},
		{"label wins over title", []string{titleEvent(0, "Title"), descriptorEvent(1, 2, label("Check child"))}, "Check child"},
		{"last version-2 descriptor decides", []string{descriptorEvent(0, 2, label("First")), descriptorEvent(1, 2, label("Second")), titleEvent(2, "Title")}, "Second"},
		{"version-1 descriptor ignored", []string{descriptorEvent(0, 2, label("Kept")), descriptorEvent(1, 1, label("Ignored"))}, "Kept"},
		{"later descriptor without label clears", []string{descriptorEvent(0, 2, label("Gone")), titleEvent(1, "Title"), descriptorEvent(2, 2, nil)}, "Title"},
		{"no title and no label is the id", []string{descriptorEvent(0, 2, nil)}, "desc"},
		{"last title wins regardless of source", []string{titleEvent(0, "One"), titleEvent(1, "Two")}, "Two"},
	}
	for _, tt := range tests {
		for _, enc := range bothEncodings {
			t.Run(tt.name+"/"+string(enc), func(t *testing.T) {
				s := newTestStore(t)
				s.write(sessionSpec{Header: headerSpec{ID: "desc", Cwd: "/p", HasCwd: true, CreatedAt: fixtureTime},
					Encoding: enc, Batches: [][]string{tt.events}})
				if got := mustLocate(t, s.index().Snapshot(), "desc").DisplayTitle(); got != tt.want {
					t.Errorf("display title %q, want %q", got, tt.want)
				}
			})
		}
	}
}

func TestIndexCorruptSessionStaysListed(t *testing.T) {
	s := newTestStore(t)
	h := headerSpec{ID: "corrupt", Cwd: "/p", HasCwd: true, CreatedAt: fixtureTime}
	dir := s.sessionDir(h)
	os.MkdirAll(dir, 0o755)
	data, offsets := zstdLog(headerLine(h), [][]string{{titleEvent(0, "Listed title")}, {userMsg(1, "body")}})
	data = corruptFrame(data, offsets[2], len(data), true)
	if err := os.WriteFile(filepath.Join(dir, "session.jsonl.zstd"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	e := mustLocate(t, s.index().Snapshot(), "corrupt")
	if e.Title != "Listed title" || e.Corrupt == "" {
		t.Errorf("corrupt session entry %+v; want it listed with its title and a corruption note", e)
	}
}

func TestIndexConcurrentReadersDuringRefresh(t *testing.T) {
	s := newTestStore(t)
	path := s.simple("busy", "/p", fixtureTime, titleEvent(0, "T0"))
	ix := s.index()
	done := make(chan struct{})
	var readers sync.WaitGroup
	for r := 0; r < 2; r++ {
		readers.Add(1)
		go func() {
			defer readers.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				snap := ix.Snapshot()
				if _, _, err := snap.Candidates(CandidateQuery{Query: "t"}); err != nil {
					t.Error(err)
					return
				}
				snap.Locate("busy")
			}
		}()
	}
	for i := 1; i <= 30; i++ {
		appendFile(t, path, []byte(titleEvent(int64(i), fmt.Sprintf("T%d", i))+"\n"))
		refresh(t, ix, path)
	}
	close(done)
	readers.Wait()
	if e := mustLocate(t, ix.Snapshot(), "busy"); e.Title != "T30" || e.LastSeq != 30 {
		t.Errorf("after 30 appends: %+v", e)
	}
}
