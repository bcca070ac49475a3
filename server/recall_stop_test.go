package server

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/dsh-refls/dsh-refls/internal/dshgen"
	"github.com/dsh-refls/dsh-refls/sessionref/recall"
)

// TestCleanShutdownLeavesTheStoredRecallIndexCurrent: text appended while
// the server ran is in the stored recall index once the server shut down
// cleanly, though the periodic save was not due (it comes at most every
// 30 s): the stored copy, loaded with no log read, finds it, as the first
// searches after a restart do before the revalidating sync.
func TestCleanShutdownLeavesTheStoredRecallIndexCurrent(t *testing.T) {
	opts, fake, ws := testOptions(t)
	stored := filepath.Join(t.TempDir(), "cache", "recall-test.idx")
	opts.RecallPath = func(string) (string, error) { return stored, nil }
	grow := dshgen.NewSession("s-grow").Cwd(testCwd).CreatedAt(time.Now().Add(-time.Hour).UnixMilli()).
		Turn(func(tt *dshgen.Turn) {
			tt.UserText("the first words")
			tt.Title("A growing session", "provider")
			tt.AssistantText("noted")
		})
	fake.add(t, grow)
	h := newHarness(t, opts)
	h.initialize(initOptions{root: ws, settings: map[string]any{"sessionId": "s-target", "watch": "poll"}})
	search := func(q string) []searchResult {
		var res []searchResult
		h.mustCall(MethodSearch, map[string]any{"query": q}, &res)
		return res
	}
	if res := search("first words"); len(res) != 1 {
		t.Fatalf("search before the append = %+v", res)
	}
	waitUntil(t, "the first save of the recall index", func() bool { _, err := os.Stat(stored); return err == nil })

	grow.Turn(func(tt *dshgen.Turn) { tt.UserText("a zebracrossing appended while the server runs") })
	if _, err := grow.Save(fake.root, dshgen.Raw); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the appended text to be searchable", func() bool { return len(search("zebracrossing")) == 1 })
	if code := h.shutdownExit(); code != 0 {
		t.Fatalf("exit code %d after a clean shutdown", code)
	}

	ix := recall.New(recall.Options{})
	defer ix.Close()
	if err := ix.Load(stored, fake.root); err != nil {
		t.Fatalf("loading the stored recall index: %v", err)
	}
	res, err := ix.Search(context.Background(), recall.Query{Text: "zebracrossing"})
	if err != nil || len(res) != 1 || res[0].SessionID != "s-grow" {
		t.Errorf("the stored index, loaded, finds %+v (%v) for the appended text, want s-grow", res, err)
	}
}

// waitUntil polls ok until it holds, failing after testTimeout.
func waitUntil(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(testTimeout)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
