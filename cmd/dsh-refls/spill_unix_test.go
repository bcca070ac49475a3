//go:build unix

package main

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dsh-refls/dsh-refls/sessionref"
)

// TestCLISpillRefusesPlantedLink: through the binary, a link planted at
// <spill>/session-<sha256(target)[:12]> is refused (save-failed) and its
// target gets neither a file nor a new mode.
func TestCLISpillRefusesPlantedLink(t *testing.T) {
	root := writeParityStore(t, parityLines()...)
	spill, victim := t.TempDir(), t.TempDir()
	if err := os.Chmod(victim, 0o755); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte("target"))
	if err := os.Symlink(victim, filepath.Join(spill, "session-"+hex.EncodeToString(sum[:])[:12])); err != nil {
		t.Fatal(err)
	}
	p := prepareCLI(t, "--sessions-root", root, "--spill-dir", spill, "--max-reference-bytes", "200",
		"--text", sessionref.EncodeURI("src"))
	if got := p.AdditionalContext.Content[0].Text; !strings.HasSuffix(got, `"fullSnapshot":{"status":"unavailable","reason":"save-failed"}}]`) {
		t.Errorf("prompt does not report the refused spill:\n%s", got)
	}
	if entries, _ := os.ReadDir(victim); len(entries) != 0 {
		t.Errorf("the link's target holds %v", entries)
	}
	if info, err := os.Stat(victim); err != nil || info.Mode().Perm() != 0o755 {
		t.Errorf("the link's target has mode %v (%v), want 0755", info.Mode().Perm(), err)
	}
}
