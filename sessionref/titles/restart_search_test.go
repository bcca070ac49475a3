package titles

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestRestartKeepsEverySearchText restarts from the cache over a store
// with a child listed under its parent's catalog label, an id listed in two
// directories and plain sessions: the snapshot restored from the cache,
// the one its build publishes, and those after later changes must answer
// every query as an index built from the logs does. Search texts now live
// only in the published columns, so this is what tells a session whose
// text went missing, or pointed at another session's.
func TestRestartKeepsEverySearchText(t *testing.T) {
	s := newTestStore(t)
	parent, second := s.listedFamily()
	plain := s.simple("plain", "/p", fixtureTime+4, titleEvent(0, "Plain title"))
	s.simple("older", "", fixtureTime-5, titleEvent(0, "Older title"))
	queries := []string{"", "zebra", "child own", "twice", "plain", "older", "title", "parent", "renamed", "koala"}
	answers := func(snap *Snapshot) map[string][]string { return answersOf(t, snap, queries) }
	cache := filepath.Join(t.TempDir(), "index.gob")
	check := func(step, label string) *Index {
		t.Helper()
		want := answers(s.index().Snapshot())
		if len(want[label]) != 1 || want[label][0] != "child" {
			t.Fatalf("%s: the catalog label does not find the child in a cold index: %v", step, want[label])
		}
		ix := NewIndex(s.root, IndexOptions{})
		if err := ix.LoadCache(cache); err != nil {
			t.Fatal(err)
		}
		if got := answers(ix.Snapshot()); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: restored from the cache:\n got %v\nwant %v", step, got, want)
		}
		if err := ix.Build(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
		if got := answers(ix.Snapshot()); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: built after the restore:\n got %v\nwant %v", step, got, want)
		}
		return ix
	}
	if err := s.index().SaveCache(cache); err != nil {
		t.Fatal(err)
	}
	ix := check("unchanged", "zebra")

	// Changes while running: each publish must keep every other session's
	// text where its new position is.
	appendFile(t, plain, []byte(titleEvent(1, "Renamed plain")+"\n"))
	appendFile(t, parent, []byte(catalogEvent(2, "child", "Koala label")+"\n"))
	if err := os.RemoveAll(filepath.Dir(second)); err != nil {
		t.Fatal(err)
	}
	s.simple("newest", "/p", fixtureTime+9, titleEvent(0, "Newest title"))
	if err := ix.Build(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	want := answers(s.index().Snapshot())
	if got := answers(ix.Snapshot()); !reflect.DeepEqual(got, want) {
		t.Errorf("after changes:\n got %v\nwant %v", got, want)
	}
	if len(want["koala"]) != 1 || len(want["zebra"]) != 0 || len(want["twice"]) != 1 {
		t.Errorf("the changes did not show in a cold index: %v", want)
	}
	// The parent goes: the child is listed under its own title again.
	if err := os.RemoveAll(filepath.Dir(parent)); err != nil {
		t.Fatal(err)
	}
	if err := ix.Build(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	want = answers(s.index().Snapshot())
	if got := answers(ix.Snapshot()); !reflect.DeepEqual(got, want) {
		t.Errorf("after the parent went:\n got %v\nwant %v", got, want)
	}
	if len(want["child own"]) != 1 || len(want["koala"]) != 0 {
		t.Errorf("the parent's removal did not show in a cold index: %v", want)
	}
	s.v4("parent", "", fixtureTime, titleEvent(0, "Parent title"), catalogEvent(1, "child", "Koala label"))
	if err := ix.Build(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	// Saved by the index that saw the changes, restored again.
	if err := ix.SaveCache(cache); err != nil {
		t.Fatal(err)
	}
	check("after changes", "koala")
}
