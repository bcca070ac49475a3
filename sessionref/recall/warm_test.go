package recall

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dsh-refls/dsh-refls/internal/dshgen"
)

// TestFirstBlocksOfTheNewestSessionsAreWarm: after a first build, the
// first block of each of the newest sessions is in the block cache, up to
// a quarter of it, and their later blocks are not, so that the quarter
// holds the first blocks of many sessions (here blocks of 32 KB with their
// folding: more than 48) rather than every block of a few; sessions past
// warmSessions are cold.
func TestFirstBlocksOfTheNewestSessionsAreWarm(t *testing.T) {
	n := warmSessions + 4
	var sessions []*dshgen.Session
	for i := range n {
		s := dshgen.NewSession(fmt.Sprintf("s-%03d", i)).CreatedAt(int64(1000 + i))
		for k := range 3 { // three blocks
			s.UserText(fmt.Sprintf("word%dx%d ", i, k) + strings.Repeat("filler text ", blockTarget/12+1))
		}
		sessions = append(sessions, s)
	}
	st := newStore(t, sessions...)
	// One worker: the sessions are read strictly newest first.
	rc := New(Options{Parallelism: 1})
	defer rc.Close()
	if err := rc.Sync(context.Background(), st.title.Snapshot()); err != nil {
		t.Fatal(err)
	}
	order := rc.cur.Load().order
	if len(order) != n {
		t.Fatalf("%d sessions indexed, want %d", len(order), n)
	}
	warm := 0
	for rank, d := range order { // newest first
		refs, err := d.refs()
		if err != nil || len(refs) != 3 {
			t.Fatalf("session %s: %d blocks (%v), want 3", d.id, len(refs), err)
		}
		first := rc.cache.get(cacheKey{file: d.data.id, off: refs[0].off}) != nil
		later := rc.cache.get(cacheKey{file: d.data.id, off: refs[1].off}) != nil ||
			rc.cache.get(cacheKey{file: d.data.id, off: refs[2].off}) != nil
		if later {
			t.Errorf("session %s (newest %d): a later block is warm", d.id, rank)
		}
		switch {
		case first && (rank >= warmSessions || rank != warm):
			t.Errorf("session %s (newest %d): first block warm after %d warm sessions", d.id, rank, warm)
		case first:
			warm++
		}
	}
	if warm < 48 {
		t.Errorf("the first blocks of %d sessions are warm, want the newest 48 at least", warm)
	}
	if c := rc.cache.size(); c > DefaultCacheBytes/4 {
		t.Errorf("warm blocks take %d bytes, more than a quarter of the cache", c)
	}
}

// TestStoredTextIsSyncedInTheBackground: an index that is stored starts a
// sync of its text file once syncEvery bytes were written since the last,
// and closing the file waits for it.
func TestStoredTextIsSyncedInTheBackground(t *testing.T) {
	d, err := createData(filepath.Join(t.TempDir(), "recall-x.idx"))
	if err != nil {
		t.Fatal(err)
	}
	d.wrote(syncEvery - 1)
	if d.syncing.Load() {
		t.Fatal("a sync started before syncEvery bytes were written")
	}
	d.wrote(1)
	d.mu.Lock()
	left := d.unsynced
	d.mu.Unlock()
	if left != 0 {
		t.Errorf("after a sync started, %d bytes count as unsynced, want 0", left)
	}
	if err := d.close(); err != nil {
		t.Fatal(err)
	}
	if d.syncing.Load() {
		t.Error("close returned while the background sync ran")
	}
}
