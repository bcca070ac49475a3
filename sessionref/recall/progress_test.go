package recall

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/dsh-refls/dsh-refls/internal/dshgen"
	"github.com/dsh-refls/dsh-refls/sessionref/titles"
)

// TestSyncReportsProgress: Options.Progress hears of every session a Sync
// projects, readable or not, out of their number; a Sync with nothing to
// do reports nothing.
func TestSyncReportsProgress(t *testing.T) {
	root := t.TempDir()
	const n = 12
	for i := range n {
		s := dshgen.NewSession(fmt.Sprintf("s-%02d", i)).Cwd("/w").CreatedAt(int64(1000 + i)).UserText("text").AssistantText("reply")
		if _, err := s.Save(root, dshgen.Raw); err != nil {
			t.Fatal(err)
		}
	}
	title := titles.NewIndex(root, titles.IndexOptions{})
	if err := title.Build(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	seen := map[int]bool{}
	totals := map[int]bool{}
	rc := New(Options{Parallelism: 3, Progress: func(done, total int) {
		mu.Lock()
		defer mu.Unlock()
		seen[done], totals[total] = true, true
	}})
	snap := title.Snapshot()
	if len(snap.Sessions) != n {
		t.Fatalf("%d sessions indexed, want %d", len(snap.Sessions), n)
	}
	// One log vanishes after the title index saw it: its projection fails.
	if err := os.Remove(snap.Sessions[0].Path); err != nil {
		t.Fatal(err)
	}
	if err := rc.Sync(context.Background(), snap); err != nil {
		t.Fatal(err)
	}
	if len(seen) != n || !seen[1] || !seen[n] || len(totals) != 1 || !totals[n] {
		t.Errorf("progress saw done %v, totals %v; want each of 1…%d once, total %d", seen, totals, n, n)
	}
	clear(seen)
	if err := rc.Sync(context.Background(), snap); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 0 {
		t.Errorf("an up-to-date Sync reported %v", seen)
	}
}
