package titles

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/dsh-refls/dsh-refls/sessionref/dshlog/layout"
)

// TestCacheOfAnotherFormatIsRebuiltOnce restarts over a cache that says
// it has the format before this one: it is refused before anything is
// published, the build reads every log, and the cache it saves has this
// format, so the restart after it reads nothing.
func TestCacheOfAnotherFormatIsRebuiltOnce(t *testing.T) {
	s := newTestStore(t)
	for i := 0; i < 3; i++ {
		s.simple(fmt.Sprintf("fmt-%d", i), "/f", fixtureTime+int64(i), titleEvent(0, fmt.Sprintf("Format title %d", i)))
	}
	path := filepath.Join(t.TempDir(), "index.gob")
	if err := s.index().SaveCache(path); err != nil {
		t.Fatal(err)
	}
	cf := readCacheFile(t, path)
	cf.Format = cacheFormat - 1
	writeCacheFileTo(t, path, cf)
	ix := NewIndex(s.root, IndexOptions{})
	err := ix.LoadCache(path)
	if !errors.Is(err, ErrCacheUnusable) || !strings.Contains(err.Error(), fmt.Sprintf("format %d", cacheFormat-1)) {
		t.Fatalf("LoadCache of a format %d cache: %v, want ErrCacheUnusable naming the format", cacheFormat-1, err)
	}
	if snap := ix.Snapshot(); len(snap.Sessions) != 0 {
		t.Fatalf("the refused cache published %d sessions", len(snap.Sessions))
	}
	if err := ix.Build(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if ix.BytesRead() == 0 || len(ix.Snapshot().Sessions) != 3 {
		t.Fatalf("the build after the refused cache read %d bytes and lists %d sessions", ix.BytesRead(), len(ix.Snapshot().Sessions))
	}
	if err := ix.SaveCache(path); err != nil {
		t.Fatal(err)
	}
	if got := readCacheFile(t, path).Format; got != cacheFormat {
		t.Fatalf("the rebuilt cache has format %d, want %d", got, cacheFormat)
	}
	again := NewIndex(s.root, IndexOptions{})
	if err := again.LoadCache(path); err != nil {
		t.Fatal(err)
	}
	if err := again.Build(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if again.BytesRead() != 0 || !reflect.DeepEqual(again.Snapshot().Sessions, ix.Snapshot().Sessions) {
		t.Errorf("the restart over the rebuilt cache read %d bytes; sessions equal: %v", again.BytesRead(),
			reflect.DeepEqual(again.Snapshot().Sessions, ix.Snapshot().Sessions))
	}
}

// TestRestoredSnapshotSharesTheDecodedSessions restores a cache saved by
// SaveCache (listed sessions first): the snapshot's sessions are the
// entries the blocks decoded into, each writer state's entry is its
// snapshot entry, and the columns' text is the one the blocks read their
// texts into. A cache that lists a skipped session first (not as SaveCache
// writes it) still restores the same snapshot, through the path that
// copies.
func TestRestoredSnapshotSharesTheDecodedSessions(t *testing.T) {
	s := newTestStore(t)
	for i := 0; i < 5; i++ {
		s.simple(fmt.Sprintf("share-%d", i), fmt.Sprintf("/s%d", i%2), fixtureTime+int64(i), titleEvent(0, fmt.Sprintf("Shared title %d", i)))
	}
	s.noHeader("/s0")
	built := s.index()
	dir := t.TempDir()
	path := filepath.Join(dir, "index.gob")
	if err := built.SaveCache(path); err != nil {
		t.Fatal(err)
	}
	cf := readCacheFile(t, path)
	if n := len(cf.Sessions); n != 6 || cf.Sessions[n-1].Skip == "" {
		t.Fatalf("SaveCache wrote %d sessions, the last one listed; want 6, the skipped one last", n)
	}
	ix := NewIndex(s.root, IndexOptions{})
	if err := ix.LoadCache(path); err != nil {
		t.Fatal(err)
	}
	snap := ix.Snapshot()
	if !reflect.DeepEqual(snap.Sessions, built.Snapshot().Sessions) || !reflect.DeepEqual(snap.Skipped, built.Snapshot().Skipped) {
		t.Fatalf("restored %v %v, want %v %v", snap.Sessions, snap.Skipped, built.Snapshot().Sessions, built.Snapshot().Skipped)
	}
	for _, tr := range ix.tracked {
		if tr.skipReason() != "" {
			continue
		}
		i := snap.byID[tr.entry.ID]
		if tr.entry != &snap.Sessions[i] || !tr.shared || tr.col != int32(i)+1 || tr.fresh != nil {
			t.Errorf("%s: its writer state does not share snapshot entry %d and its columns (col %d, fresh %v)", tr.entry.ID, i, tr.col, tr.fresh != nil)
		}
	}
	if got, want := len(snap.search.text), len(cf.Sessions); got < want {
		t.Errorf("the columns' text is %d bytes, fewer than the %d sessions' separators", got, want)
	}
	want := answersOf(t, built.Snapshot(), []string{"", "shared", "title 3", "share-1", "zebra"})
	if got := answersOf(t, snap, []string{"", "shared", "title 3", "share-1", "zebra"}); !reflect.DeepEqual(got, want) {
		t.Errorf("restored answers %v, want %v", got, want)
	}

	// The skipped session first: not the order the decoded entries can be
	// published in.
	n := len(cf.Sessions)
	cf.Sessions = append(cf.Sessions[n-1:], cf.Sessions[:n-1]...)
	skippedFirst := filepath.Join(dir, "skipped-first.gob")
	writeCacheFileTo(t, skippedFirst, cf)
	other := NewIndex(s.root, IndexOptions{})
	if err := other.LoadCache(skippedFirst); err != nil {
		t.Fatal(err)
	}
	got := other.Snapshot()
	if !reflect.DeepEqual(got.Sessions, snap.Sessions) || !reflect.DeepEqual(got.Skipped, snap.Skipped) ||
		!reflect.DeepEqual(got.byID, snap.byID) || !reflect.DeepEqual(got.cwdOf, snap.cwdOf) || !reflect.DeepEqual(got.cwds, snap.cwds) {
		t.Errorf("skipped first: restored\n%v %v %v %v\nwant\n%v %v %v %v", got.Sessions, got.Skipped, got.byID, got.cwdOf,
			snap.Sessions, snap.Skipped, snap.byID, snap.cwdOf)
	}
	if a := answersOf(t, got, []string{"", "shared", "title 3", "share-1", "zebra"}); !reflect.DeepEqual(a, want) {
		t.Errorf("skipped first: answers %v, want %v", a, want)
	}
	if err := other.Build(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if other.BytesRead() != 0 {
		t.Errorf("skipped first: the build after the restore read %d bytes", other.BytesRead())
	}
}

// TestCacheListingASkippedDirectoryTwiceIsRefused writes caches whose
// skipped session names the directory of a listed session, or of another
// skipped session: the snapshot that lists the sessions is served before
// the writer's map of directories is built, so this is checked before;
// each cache is refused with nothing published, and the build reads the
// logs.
func TestCacheListingASkippedDirectoryTwiceIsRefused(t *testing.T) {
	s := newTestStore(t)
	for i := 0; i < 3; i++ {
		s.simple(fmt.Sprintf("twice-%d", i), "/t", fixtureTime+int64(i), titleEvent(0, fmt.Sprintf("Twice title %d", i)))
	}
	s.noHeader("/t")
	dir := t.TempDir()
	good := filepath.Join(dir, "good.gob")
	if err := s.index().SaveCache(good); err != nil {
		t.Fatal(err)
	}
	for name, twice := range map[string]func(cf *cacheFile) cachedSession{
		"a listed session's directory": func(cf *cacheFile) cachedSession {
			c := cf.Sessions[1]
			c.Skip = "log has no complete header line yet"
			return c
		},
		"another skipped session's directory": func(cf *cacheFile) cachedSession { return cf.Sessions[len(cf.Sessions)-1] },
	} {
		t.Run(name, func(t *testing.T) {
			cf := readCacheFile(t, good)
			if last := cf.Sessions[len(cf.Sessions)-1]; last.Skip == "" || last.DirName != "no-header" {
				t.Fatalf("the cache's last session is %q (skip %q), want the skipped no-header", last.DirName, last.Skip)
			}
			cf.Sessions = append(cf.Sessions, twice(cf))
			bad := filepath.Join(t.TempDir(), "twice.gob")
			writeCacheFileTo(t, bad, cf)
			ix := NewIndex(s.root, IndexOptions{})
			err := ix.LoadCache(bad)
			if !errors.Is(err, ErrCacheUnusable) || !strings.Contains(err.Error(), "twice") {
				t.Fatalf("LoadCache: %v, want ErrCacheUnusable (twice)", err)
			}
			if snap := ix.Snapshot(); len(snap.Sessions) != 0 || len(snap.Skipped) != 0 || !snap.Building {
				t.Fatalf("the refused cache published %d sessions, %d skips (building %v)", len(snap.Sessions), len(snap.Skipped), snap.Building)
			}
			if err := ix.Build(context.Background(), nil); err != nil {
				t.Fatal(err)
			}
			if snap := ix.Snapshot(); len(snap.Sessions) != 3 || ix.BytesRead() == 0 {
				t.Errorf("the build after the refused cache lists %d sessions and read %d bytes", len(snap.Sessions), ix.BytesRead())
			}
		})
	}
}

// TestIsPlainName lists the names a restore accepts as one directory
// entry and those it refuses.
func TestIsPlainName(t *testing.T) {
	for name, want := range map[string]bool{
		"session.jsonl": true, "--home-dev-p--": true, "~002E": true, "a..b": true, "é": true,
		"": false, ".": false, "..": false, "a/b": false, `a\b`: false, "a\x00b": false, "/": false, "../x": false,
	} {
		if got := isPlainName(name); got != want {
			t.Errorf("isPlainName(%q) = %v, want %v", name, got, want)
		}
	}
}

// noHeader adds to s, in the project of cwd, a session directory whose log
// has no complete header line yet: tracked, and skipped.
func (s *testStore) noHeader(cwd string) {
	s.t.Helper()
	dir := filepath.Join(s.root, layout.ProjectDir(cwd, true), "no-header")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		s.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "session.jsonl"), []byte(`{"type":"sess`), 0o644); err != nil {
		s.t.Fatal(err)
	}
}
