package prepare

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dsh-refls/dsh-refls/sessionref"
	"github.com/dsh-refls/dsh-refls/sessionref/internal/logtest"
)

// spillFilesUnder lists the spill files under dir.
func spillFilesUnder(t *testing.T, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*", "*-session-reference-*.txt"))
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestSameSnapshotIsSpilledOnce prepares the same truncated session three
// times: the spill is written once and reused, with the same size; a spill
// file whose bytes were changed is not reused, and a new one is written.
func TestSameSnapshotIsSpilledOnce(t *testing.T) {
	s := logtest.NewStore(t)
	long := strings.Repeat("a long message that does not fit ", 4000)
	s.Simple("spilled", "/work/s", logtest.FixtureTime, logtest.UserMsg(0, long), logtest.AssistantMsg(1, long), logtest.TitleEvent(2, "Spilled"))
	ix := buildIndex(s)
	spillDir := filepath.Join(t.TempDir(), "spill")
	lim := Limits{MaxReferenceBytes: 4096, SpillDir: spillDir}
	text := "see " + sessionref.Mention("Spilled", "spilled")
	prompts := map[string]bool{}
	for range 3 {
		res, err := PrepareText(context.Background(), ix.Snapshot(), "target", text, ModeReplace, nil, lim)
		if err != nil {
			t.Fatal(err)
		}
		prompts[res.AdditionalContext.Content[0].Text] = true
	}
	files := spillFilesUnder(t, spillDir)
	if len(files) != 1 {
		t.Fatalf("%d spill files after three identical preparations, want 1: %v", len(files), files)
	}
	if len(prompts) != 1 {
		t.Errorf("the three prompts differ (%d distinct): the reused spill must be named alike", len(prompts))
	}
	if err := os.WriteFile(files[0], []byte("changed"), 0o600); err != nil {
		t.Fatal(err)
	}
	res, err := PrepareText(context.Background(), ix.Snapshot(), "target", text, ModeReplace, nil, lim)
	if err != nil {
		t.Fatal(err)
	}
	after := spillFilesUnder(t, spillDir)
	if len(after) != 2 {
		t.Fatalf("%d spill files after a changed one, want 2: %v", len(after), after)
	}
	for _, f := range after {
		if f != files[0] && !strings.Contains(res.AdditionalContext.Content[0].Text, filepath.Base(f)) {
			t.Errorf("the prompt does not name the new spill %s", f)
		}
	}
}
