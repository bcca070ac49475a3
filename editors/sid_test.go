package editors

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// sidRootEnv names the Debian sid chroot of scripts/sid-editors.sh, which
// holds the editors people run today (Neovim 0.12, Helix 25, Emacs 30);
// the host, Debian 12, has Neovim 0.7 and Emacs 28 only.
const sidRootEnv = "DSH_SID_ROOT"

// defaultSidRoot is where scripts/sid-editors.sh makes the chroot.
const defaultSidRoot = "/opt/dsh-sid"

// sidStamp is the file scripts/sid-editors.sh writes into the chroot last,
// listing the packages and the versions installed.
const sidStamp = "etc/dsh-refls-editors"

// sidChroot is a ready chroot: its root on the host and the version of
// each package the stamp lists.
type sidChroot struct {
	root     string
	versions map[string]string
}

// lookSid returns the chroot, or skips the test with the reason and the
// command that makes it. It needs root (chroot(2)) and tmux on the host.
func lookSid(t *testing.T) sidChroot {
	t.Helper()
	root := os.Getenv(sidRootEnv)
	if root == "" {
		root = defaultSidRoot
	}
	f, err := os.Open(filepath.Join(root, sidStamp))
	if err != nil {
		t.Skipf("no Debian sid chroot with today's editors at %s (%v); make it with scripts/sid-editors.sh (root, ~3 minutes once), as .ci/run does", root, err)
	}
	defer f.Close()
	if os.Geteuid() != 0 {
		t.Skipf("the sid chroot at %s needs root to enter (chroot(2)); running as uid %d", root, os.Geteuid())
	}
	if _, err := os.Stat(filepath.Join(root, "proc", "self")); err != nil {
		t.Skipf("/proc is not mounted in the sid chroot at %s (Helix needs it); scripts/sid-editors.sh mounts it", root)
	}
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not on PATH; install it (apt-get install -y tmux) to drive the editors in a terminal")
	}
	c := sidChroot{root: root, versions: map[string]string{}}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		pkg, version, ok := strings.Cut(sc.Text(), " ")
		if ok && pkg != "packages:" {
			c.versions[pkg] = version
		}
	}
	return c
}

// version is the installed version of pkg, or skips the test when the
// chroot does not hold it.
func (c sidChroot) version(t *testing.T, pkg string) string {
	t.Helper()
	v, ok := c.versions[pkg]
	if !ok {
		t.Skipf("the sid chroot at %s holds no %s; run scripts/sid-editors.sh again", c.root, pkg)
	}
	return v
}

// tempDir makes a directory inside the chroot, removed when the test ends,
// and returns its path on the host and the path programs inside see.
func (c sidChroot) tempDir(t *testing.T) (host, inside string) {
	t.Helper()
	base := filepath.Join(c.root, "tmp")
	host, err := os.MkdirTemp(base, "dsh-refls-test-")
	if err != nil {
		t.Fatalf("making a directory in the sid chroot: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(host) })
	return host, c.inside(host)
}

// inside is the path programs in the chroot see for host path p, which
// lies under the chroot's root.
func (c sidChroot) inside(p string) string {
	rel, err := filepath.Rel(c.root, p)
	if err != nil || strings.HasPrefix(rel, "..") {
		panic("path " + p + " is not inside the chroot " + c.root)
	}
	return "/" + filepath.ToSlash(rel)
}

// command is the argv that runs name with args inside the chroot with
// exactly env (no variable of the host leaks in).
func (c sidChroot) command(env []string, name string, args ...string) []string {
	argv := []string{"chroot", c.root, "/usr/bin/env", "-i"}
	argv = append(argv, env...)
	argv = append(argv, name)
	return append(argv, args...)
}

// installServer copies the server binary into dir (a host path inside the
// chroot) and returns the path programs inside see. The binary links only
// libc, which sid's newer glibc serves unchanged.
func (c sidChroot) installServer(t *testing.T, bin, dir string) string {
	t.Helper()
	data, err := os.ReadFile(bin)
	if err != nil {
		t.Fatalf("reading the server binary: %v", err)
	}
	dst := filepath.Join(dir, "bin", "dsh-refls")
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, data, 0o755); err != nil {
		t.Fatalf("copying the server into the chroot: %v", err)
	}
	return c.inside(dst)
}
