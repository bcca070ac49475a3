//go:build unix

package prepare

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"

	"github.com/dsh-refls/dsh-refls/sessionref"
)

// spillSessionDir is where the spill of target goes under spillDir.
func spillSessionDir(spillDir, target string) string {
	sum := sha256.Sum256([]byte(target))
	return filepath.Join(spillDir, "session-"+hex.EncodeToString(sum[:])[:12])
}

// TestSpillRefusesPlantedLink: a link planted at <spill>/session-<hash>
// neither redirects the spill nor has its target's mode changed; the notice
// says save-failed and the prompt is still complete.
func TestSpillRefusesPlantedLink(t *testing.T) {
	snap := buildIndex(paritySource(t)).Snapshot()
	spillDir := filepath.Join(t.TempDir(), "spill")
	victim := filepath.Join(t.TempDir(), "victim")
	for _, d := range []string{spillDir, victim} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(victim, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, spillSessionDir(spillDir, "target")); err != nil {
		t.Fatal(err)
	}
	prep, err := Prepare(context.Background(), snap, "target", []sessionref.Reference{{SessionID: "src"}}, Limits{MaxReferenceBytes: 200, SpillDir: spillDir})
	if err != nil {
		t.Fatal(err)
	}
	ns := omissionNotices(t, prep.Context.Content[0].Text)
	if len(ns) != 1 || ns[0].FullSnapshot != (fullSnapshot{Status: "unavailable", Reason: "save-failed"}) {
		t.Errorf("notices %+v, want one save-failed", ns)
	}
	entries, err := os.ReadDir(victim)
	if err != nil || len(entries) != 0 {
		t.Errorf("the link's target holds %v (%v), want nothing", entries, err)
	}
	if info, err := os.Stat(victim); err != nil || info.Mode().Perm() != 0o755 {
		t.Errorf("the link's target has mode %v (%v), want 0755 untouched", info.Mode().Perm(), err)
	}
}

// TestSpillMakesDirectoriesPrivate: existing spill directories of this user
// with group or other bits are made 0700 before the file is written.
func TestSpillMakesDirectoriesPrivate(t *testing.T) {
	snap := buildIndex(paritySource(t)).Snapshot()
	spillDir := filepath.Join(t.TempDir(), "spill")
	sessDir := spillSessionDir(spillDir, "target")
	if err := os.MkdirAll(sessDir, 0o777); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{spillDir, sessDir} {
		if err := os.Chmod(d, 0o777); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := Prepare(context.Background(), snap, "target", []sessionref.Reference{{SessionID: "src"}}, Limits{MaxReferenceBytes: 200, SpillDir: spillDir}); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{spillDir, sessDir} {
		if info, err := os.Stat(d); err != nil || info.Mode().Perm() != 0o700 {
			t.Errorf("%s has mode %v (%v), want 0700", d, info.Mode().Perm(), err)
		}
	}
	if files := spillFiles(spillDir); len(files) != 1 {
		t.Errorf("spill files %v, want one", files)
	}
}

// TestSpillSessionDirNotADirectory: a file in the directory's place is
// refused too.
func TestSpillSessionDirNotADirectory(t *testing.T) {
	spillDir := t.TempDir()
	if err := os.WriteFile(spillSessionDir(spillDir, "target"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := createSpillFile(spillDir, filepath.Base(spillSessionDir(spillDir, "target")), "x.txt"); err == nil {
		t.Error("a file in place of the session directory was accepted")
	}
}
