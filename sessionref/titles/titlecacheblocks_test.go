package titles

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestCacheBlocksRestoreAsOne writes the same cache in blocks of 1, 2, 3
// and 4 sessions, which LoadCache decodes on several goroutines and joins:
// each must restore the snapshot the single-block file restores (entries,
// skips, every query's answer), a build after it must read nothing, and a
// later change must show at the session it changed, which tells a search
// text joined at the wrong position.
func TestCacheBlocksRestoreAsOne(t *testing.T) {
	s := newTestStore(t)
	s.listedFamily()
	var plain string
	for i := 0; i < 6; i++ {
		plain = s.simple(fmt.Sprintf("plain-%d", i), "/p", fixtureTime+int64(10+i), titleEvent(0, fmt.Sprintf("Plain title %d", i)))
	}
	s.noHeader("/p")
	queries := []string{"", "zebra", "child own", "twice", "plain", "title 3", "title", "parent", "renamed"}
	answers := func(snap *Snapshot) map[string][]string { return answersOf(t, snap, queries) }
	dir := t.TempDir()
	one := filepath.Join(dir, "one.gob")
	if err := s.index().SaveCache(one); err != nil {
		t.Fatal(err)
	}
	cf := readCacheFile(t, one)
	if len(cf.Sessions) != 11 {
		t.Fatalf("the cache holds %d sessions, want 11 (one skipped)", len(cf.Sessions))
	}
	base := NewIndex(s.root, IndexOptions{})
	if err := base.LoadCache(one); err != nil {
		t.Fatal(err)
	}
	want := answers(base.Snapshot())
	if len(want["zebra"]) != 1 || len(want["title"]) != 8 {
		t.Fatalf("the single-block cache restores %v", want)
	}
	for _, per := range []int{1, 2, 3, 4} {
		path := filepath.Join(dir, fmt.Sprintf("blocks-%d.gob", per))
		var buf bytes.Buffer
		buf.WriteString(cacheMagic)
		w := bufio.NewWriter(&buf)
		if err := encodeCacheBlocks(w, cf, per); err != nil {
			t.Fatal(err)
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
			t.Fatal(err)
		}
		ix := NewIndex(s.root, IndexOptions{})
		if err := ix.LoadCache(path); err != nil {
			t.Fatalf("blocks of %d: %v", per, err)
		}
		snap := ix.Snapshot()
		if !reflect.DeepEqual(snap.Sessions, base.Snapshot().Sessions) || !reflect.DeepEqual(snap.Skipped, base.Snapshot().Skipped) {
			t.Errorf("blocks of %d: restored\n%v %v\nwant\n%v %v", per, snap.Sessions, snap.Skipped, base.Snapshot().Sessions, base.Snapshot().Skipped)
		}
		if got := answers(snap); !reflect.DeepEqual(got, want) {
			t.Errorf("blocks of %d: answers\n got %v\nwant %v", per, got, want)
		}
		if err := ix.Build(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
		if ix.BytesRead() != 0 {
			t.Errorf("blocks of %d: the build after the restore read %d bytes", per, ix.BytesRead())
		}
		if got := answers(ix.Snapshot()); !reflect.DeepEqual(got, want) {
			t.Errorf("blocks of %d: answers after the build\n got %v\nwant %v", per, got, want)
		}
	}
	// A change after a restore from many blocks lands on its own session.
	appendFile(t, plain, []byte(titleEvent(1, "Renamed plain")+"\n"))
	ix := NewIndex(s.root, IndexOptions{})
	if err := ix.LoadCache(filepath.Join(dir, "blocks-2.gob")); err != nil {
		t.Fatal(err)
	}
	if err := ix.Build(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if got, cold := answers(ix.Snapshot()), answers(s.index().Snapshot()); !reflect.DeepEqual(got, cold) || len(got["renamed"]) != 1 {
		t.Errorf("after a change: answers\n got %v\nwant %v", got, cold)
	}
}

// TestCacheListingADirectoryTwiceIsRefused writes a cache whose second
// block lists again a directory of the first (the check runs beside the
// snapshot's build): it is refused before anything is published, and the
// index, still unbuilt, then builds from the logs.
func TestCacheListingADirectoryTwiceIsRefused(t *testing.T) {
	s := newTestStore(t)
	for i := 0; i < 3; i++ {
		s.simple(fmt.Sprintf("dup-%d", i), "/d", fixtureTime+int64(i), titleEvent(0, fmt.Sprintf("Dup title %d", i)))
	}
	dir := t.TempDir()
	good := filepath.Join(dir, "good.gob")
	if err := s.index().SaveCache(good); err != nil {
		t.Fatal(err)
	}
	cf := readCacheFile(t, good)
	cf.Sessions = append(cf.Sessions, cf.Sessions[0])
	var buf bytes.Buffer
	buf.WriteString(cacheMagic)
	w := bufio.NewWriter(&buf)
	if err := encodeCacheBlocks(w, cf, 2); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "twice.gob")
	if err := os.WriteFile(bad, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	ix := NewIndex(s.root, IndexOptions{})
	err := ix.LoadCache(bad)
	if !errors.Is(err, ErrCacheUnusable) || !strings.Contains(err.Error(), "twice") {
		t.Fatalf("LoadCache of a cache listing a directory twice: %v, want ErrCacheUnusable (twice)", err)
	}
	if snap := ix.Snapshot(); len(snap.Sessions) != 0 || !snap.Building {
		t.Fatalf("the refused cache published %d sessions (building %v)", len(snap.Sessions), snap.Building)
	}
	if err := ix.Build(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if snap := ix.Snapshot(); len(snap.Sessions) != 3 || ix.BytesRead() == 0 {
		t.Errorf("the build after the refused cache lists %d sessions and read %d bytes, want 3 read from the logs", len(snap.Sessions), ix.BytesRead())
	}
}

// TestRestoredSnapshotIsTheBuiltOne restores, in blocks of 2, a store the
// restore publishes without building its map of ids first (plain
// sessions, one skipped), and one where an id repeats, which the restore
// finds only once that map is built beside it: each must restore the
// snapshot its build published (entries, skips, ids, cwd numbers, query
// answers), and a build afterwards must read nothing.
func TestRestoredSnapshotIsTheBuiltOne(t *testing.T) {
	for _, repeat := range []bool{false, true} {
		s := newTestStore(t)
		for i := 0; i < 5; i++ {
			s.simple(fmt.Sprintf("plain-%d", i), fmt.Sprintf("/p%d", i%2), fixtureTime+int64(i), titleEvent(0, fmt.Sprintf("Plain title %d", i)))
		}
		s.simple("no-title", "", fixtureTime+9)
		if repeat {
			s.simple("plain-3", "/other", fixtureTime+7, titleEvent(0, "Plain title again"))
		}
		s.noHeader("/p0")
		built := s.index()
		dir := t.TempDir()
		one := filepath.Join(dir, "one.gob")
		if err := built.SaveCache(one); err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		buf.WriteString(cacheMagic)
		w := bufio.NewWriter(&buf)
		if err := encodeCacheBlocks(w, readCacheFile(t, one), 2); err != nil {
			t.Fatal(err)
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, "blocks.gob")
		if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
			t.Fatal(err)
		}
		ix := NewIndex(s.root, IndexOptions{})
		if err := ix.LoadCache(path); err != nil {
			t.Fatal(err)
		}
		got, want := ix.Snapshot(), built.Snapshot()
		wantListed := 6
		if repeat {
			wantListed = 5 // both plain-3 skipped
		}
		if len(want.Sessions) != wantListed {
			t.Fatalf("repeat %v: the build lists %d sessions, want %d", repeat, len(want.Sessions), wantListed)
		}
		if !reflect.DeepEqual(got.Sessions, want.Sessions) || !reflect.DeepEqual(got.Skipped, want.Skipped) ||
			!reflect.DeepEqual(got.byID, want.byID) || !reflect.DeepEqual(got.cwdOf, want.cwdOf) || !reflect.DeepEqual(got.cwds, want.cwds) {
			t.Errorf("repeat %v: restored\n%v %v %v %v\nwant\n%v %v %v %v", repeat, got.Sessions, got.Skipped, got.byID, got.cwdOf,
				want.Sessions, want.Skipped, want.byID, want.cwdOf)
		}
		queries := []string{"", "plain", "title 3", "no-title", "again", "zebra"}
		if a, b := answersOf(t, got, queries), answersOf(t, want, queries); !reflect.DeepEqual(a, b) {
			t.Errorf("repeat %v: restored answers %v, want %v", repeat, a, b)
		}
		if err := ix.Build(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
		if ix.BytesRead() != 0 {
			t.Errorf("repeat %v: the build after the restore read %d bytes", repeat, ix.BytesRead())
		}
	}
}
