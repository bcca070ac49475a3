package titles

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/dsh-refls/dsh-refls/sessionref/dshlog"
)

// TestUnchangedRestartPublishesOnce restarts from the cache over an
// unchanged root: the build after LoadCache finds nothing new, so its
// snapshot shares the loaded one's sessions instead of copying them, and
// only Building changes. A session that changed, appeared or vanished is
// published in full.
func TestUnchangedRestartPublishesOnce(t *testing.T) {
	s := newTestStore(t)
	raw := s.simple("pub-1", "/work/p", fixtureTime, titleEvent(0, "First"))
	s.simple("pub-2", "/work/p", fixtureTime+1000, titleEvent(0, "Second"))
	cache := filepath.Join(t.TempDir(), "index.gob")
	if err := s.index().SaveCache(cache); err != nil {
		t.Fatal(err)
	}
	restart := func() (loaded, built *Snapshot, ix *Index) {
		t.Helper()
		ix = NewIndex(s.root, IndexOptions{})
		if err := ix.LoadCache(cache); err != nil {
			t.Fatal(err)
		}
		loaded = ix.Snapshot()
		if err := ix.Build(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
		return loaded, ix.Snapshot(), ix
	}
	loaded, built, _ := restart()
	if !loaded.Building || built.Building {
		t.Fatalf("Building: loaded %v, built %v", loaded.Building, built.Building)
	}
	if len(built.Sessions) != 2 || &built.Sessions[0] != &loaded.Sessions[0] {
		t.Errorf("the unchanged build copied its %d sessions", len(built.Sessions))
	}
	if got, _, _ := built.Candidates(CandidateQuery{Query: "secon"}); len(got) != 1 || got[0].SessionID != "pub-2" {
		t.Errorf("query on the shared snapshot: %v", candidateIDs(got))
	}

	appendFile(t, raw, []byte(titleEvent(1, "Renamed")+"\n"))
	loaded, built, _ = restart()
	if &built.Sessions[0] == &loaded.Sessions[0] {
		t.Error("a grown log's build shared the loaded sessions")
	}
	if e, _ := built.Locate("pub-1"); e.Title != "Renamed" {
		t.Errorf("grown title %q", e.Title)
	}

	s.simple("pub-3", "", fixtureTime+2000, titleEvent(0, "Third"))
	if _, built, _ = restart(); len(built.Sessions) != 3 {
		t.Errorf("a new session: %d listed", len(built.Sessions))
	}
	if err := os.RemoveAll(filepath.Dir(raw)); err != nil {
		t.Fatal(err)
	}
	_, built, ix := restart()
	if _, ok := built.Locate("pub-1"); ok || len(built.Sessions) != 2 {
		t.Errorf("a removed session is still listed (%d listed)", len(built.Sessions))
	}
	// A build that finds nothing new keeps serving the same sessions.
	if err := ix.Build(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if again := ix.Snapshot(); again == built || &again.Sessions[0] != &built.Sessions[0] {
		t.Error("a second unchanged build did not publish a new snapshot sharing the sessions")
	}
}

// TestUnchangedRestartDoesNotRewriteTheCache: a restart whose build found
// nothing new leaves the cache file it loaded as it is (the same inode, not
// a rename over it); once a log grows, or the index saves elsewhere, the
// cache is written, and it holds the change.
func TestUnchangedRestartDoesNotRewriteTheCache(t *testing.T) {
	s := newTestStore(t)
	raw := s.simple("save-1", "/work/p", fixtureTime, titleEvent(0, "First"))
	cache := filepath.Join(t.TempDir(), "index.gob")
	if err := s.index().SaveCache(cache); err != nil {
		t.Fatal(err)
	}
	inode := func(path string) uint64 {
		t.Helper()
		id, err := dshlog.StatIdentity(path)
		if err != nil {
			t.Fatal(err)
		}
		return id.Inode
	}
	before := inode(cache)
	ix := NewIndex(s.root, IndexOptions{})
	if err := ix.LoadCache(cache); err != nil {
		t.Fatal(err)
	}
	if err := ix.Build(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if err := ix.SaveCache(cache); err != nil {
		t.Fatal(err)
	}
	if inode(cache) != before {
		t.Error("an unchanged restart rewrote the cache it loaded")
	}
	other := filepath.Join(t.TempDir(), "other.gob")
	if err := ix.SaveCache(other); err != nil {
		t.Fatal(err)
	}
	if cf := readCacheFile(t, other); len(cf.Sessions) != 1 {
		t.Errorf("saving elsewhere wrote %d sessions", len(cf.Sessions))
	}

	appendFile(t, raw, []byte(titleEvent(1, "Renamed")+"\n"))
	if err := ix.Build(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if err := ix.SaveCache(cache); err != nil {
		t.Fatal(err)
	}
	if inode(cache) == before {
		t.Error("the cache was not rewritten after a log grew")
	}
	if cf := readCacheFile(t, cache); len(cf.Sessions) != 1 || cf.Sessions[0].Entry.Title != "Renamed" {
		t.Errorf("the rewritten cache does not hold the grown title: %+v", cf.Sessions)
	}
	// Saved: an unchanged build after it saves nothing again.
	written := inode(cache)
	if err := ix.Build(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if err := ix.SaveCache(cache); err != nil {
		t.Fatal(err)
	}
	if inode(cache) != written {
		t.Error("an unchanged build after a save rewrote the cache")
	}
}
