//go:build unix

package prepare_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dsh-refls/dsh-refls/sessionref/internal/storetest"
	"github.com/dsh-refls/dsh-refls/sessionref/prepare"
	"github.com/dsh-refls/dsh-refls/sessionref/titles"
)

// readOnlySpillEnv, when set, makes TestSpillKeepsAReadOnlyRootReadOnly the
// unprivileged child, which makes the spill root itself (it must own it).
const readOnlySpillEnv = "DSH_REFLS_READ_ONLY_SPILL"

// TestSpillKeepsAReadOnlyRootReadOnly: a spill root its owner made
// read-only (0555) loses its group and other bits only (0500): the owner's
// missing write bit is not given back, so nothing is written there and the
// notice says save-failed. Root writes into read-only directories, so as
// root the check runs as "nobody" (storetest.RunUnprivileged).
func TestSpillKeepsAReadOnlyRootReadOnly(t *testing.T) {
	if os.Getenv(readOnlySpillEnv) != "" || os.Getuid() != 0 {
		checkReadOnlySpill(t, filepath.Join(t.TempDir(), "spill"))
		return
	}
	storetest.RunUnprivileged(t, t.TempDir(), "TestSpillKeepsAReadOnlyRootReadOnly", readOnlySpillEnv+"=1")
}

func checkReadOnlySpill(t *testing.T, spill string) {
	root := filepath.Join(t.TempDir(), "sessions")
	storetest.WriteHealthy(t, root)
	if err := os.MkdirAll(spill, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(spill, 0o555); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Chmod(spill, 0o700) })
	ix := storetest.BuildIndex(t, root, titles.IndexOptions{})
	// A budget far below the session's size: it is shortened and spills.
	p, err := prepareOne(context.Background(), ix.Snapshot(), "healthy-raw", prepare.Limits{MaxReferenceBytes: 200, SpillDir: spill})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(p.Prompt, `"fullSnapshot":{"status":"unavailable","reason":"save-failed"}`) {
		t.Errorf("the notice does not say save-failed:\n%s", p.Prompt)
	}
	info, err := os.Stat(spill)
	if err != nil {
		t.Fatal(err)
	}
	if mode := info.Mode().Perm(); mode != 0o500 {
		t.Errorf("the read-only spill root became %v, want 0500 (0555 without group and other bits)", mode)
	}
	if entries, _ := os.ReadDir(spill); len(entries) != 0 {
		t.Errorf("the read-only spill root holds %d entries, want none", len(entries))
	}
}
