package storetest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// Permission cases that root cannot see (root reads mode-000 directories
// and writes into read-only ones) run for real in a copy of the test binary
// as "nobody".
const (
	// unprivilegedID is the uid and gid of "nobody" on Linux.
	unprivilegedID = 65534
	// sharedMode lets the unprivileged child reach base and the binary.
	sharedMode = 0o755
)

// RunUnprivileged runs the test named test again in a copy of this test
// binary, as uid unprivilegedID, in base (a temporary directory of the
// parent's, opened to the child), with env added; the child does the check
// (it finds its case through env) and must pass. It skips when this process
// cannot start a process as another user.
func RunUnprivileged(t *testing.T, base, test string, env ...string) {
	t.Helper()
	if os.Getuid() != 0 {
		t.Skipf("uid %d is not root, so it cannot switch to an unprivileged user to produce the case", os.Getuid())
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(base, filepath.Base(exe))
	data, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, sharedMode); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{filepath.Dir(base), base} {
		if err := os.Chmod(dir, sharedMode); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), BuildTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "-test.run=^"+test+"$", "-test.v", "-test.count=1")
	cmd.Dir = base
	cmd.Env = append(append(os.Environ(), "TMPDIR="+os.TempDir()), env...)
	if !runAsUser(cmd, unprivilegedID) {
		t.Skipf("%s cannot start a process as another user", runtime.GOOS)
	}
	out, err := cmd.CombinedOutput()
	if cmd.ProcessState == nil {
		// No setuid capability, or a temp dir mounted noexec.
		t.Skipf("cannot run the test binary as uid %d here, so the case cannot be produced: %v", unprivilegedID, err)
	}
	t.Logf("as uid %d:\n%s", unprivilegedID, out)
	if err != nil {
		t.Fatalf("the unprivileged check failed: %v", err)
	}
	if !strings.Contains(string(out), "--- PASS: "+test) {
		t.Fatal("the unprivileged check did not run")
	}
}
