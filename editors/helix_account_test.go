package editors

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dsh-refls/dsh-refls/internal/dshgen"
)

// The size of the terminal the editors of the sid chroot run in: wide
// enough that a canonical session mention (about 100 columns) and the
// line it is on are never wrapped or scrolled sideways.
const (
	sidScreenWidth  = 200
	sidScreenHeight = 40
)

// docBlock is the fenced code block that follows the line marker (an HTML
// comment such as "<!-- test: helix -->") in docs/editors.md: what a user
// copies into their configuration, which the tests run as it is.
func docBlock(t *testing.T, marker string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot(t), "docs", "editors.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(data), "\n"+marker+"\n")
	if !ok {
		t.Fatalf("docs/editors.md has no line %q before the block the test runs", marker)
	}
	fence, body, ok := strings.Cut(after, "\n")
	if !ok || !strings.HasPrefix(fence, "```") {
		t.Fatalf("docs/editors.md: %q is not followed by a fenced block, but by %q", marker, fence)
	}
	body, _, ok = strings.Cut(body, "\n```\n")
	if !ok {
		t.Fatalf("docs/editors.md: the block after %q has no closing fence", marker)
	}
	return body + "\n"
}

// sidAccount is a fresh user account in the sid chroot, as docs/editors.md
// has a user set it up: an empty home but for the server in ~/.local/bin
// (on PATH), the demo session store at ~/.dsh/sessions (the server's
// default root) and what the test adds (editor configuration); the demo
// workspace lies beside the home.
type sidAccount struct {
	c        sidChroot
	hostHome string
	home     string // the home inside the chroot
	demo     demoSetup
	env      []string // the whole environment of the editor
	tmux     tmuxRunner
}

// newSidAccount makes the account. No ~/.cache exists: the server makes
// the directory of its log file.
func newSidAccount(t *testing.T, c sidChroot) *sidAccount {
	t.Helper()
	hostDir, inside := c.tempDir(t)
	d := newDemoSetupAt(t, hostDir, inside)
	a := &sidAccount{c: c, hostHome: filepath.Join(hostDir, "home"), home: filepath.Join(inside, "home"), demo: d}
	if err := os.MkdirAll(filepath.Join(a.hostHome, ".dsh"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(hostDir, "sessions"), filepath.Join(a.hostHome, ".dsh", "sessions")); err != nil {
		t.Fatalf("moving the demo store to ~/.dsh/sessions: %v", err)
	}
	a.demo.root = filepath.Join(a.home, ".dsh", "sessions")
	c.installServer(t, buildServer(t), filepath.Join(a.hostHome, ".local"))
	// Temporary files (Emacs compiles its Lisp natively for a new
	// account, in the background) go to the test's directory, which is
	// removed, not to the chroot's /tmp.
	if err := os.Mkdir(filepath.Join(hostDir, "tmp"), 0o700); err != nil {
		t.Fatal(err)
	}
	a.env = []string{
		"HOME=" + a.home,
		"TERM=xterm-256color",
		"LANG=C.UTF-8",
		"PATH=" + filepath.Join(a.home, ".local", "bin") + ":/usr/local/bin:/usr/bin:/bin",
		"TMPDIR=" + filepath.Join(inside, "tmp"),
	}
	a.tmux = tmuxRunner{t: t, socket: filepath.Join(hostDir, "tmux.sock"), env: isolatedEnv(hostDir)}
	return a
}

// hostPath is the host path of p, a path inside the account's home
// written with "~/".
func (a *sidAccount) hostPath(p string) string {
	return filepath.Join(a.hostHome, filepath.FromSlash(strings.TrimPrefix(p, "~/")))
}

// write writes files into the home ("~/…" paths).
func (a *sidAccount) write(t *testing.T, files map[string]string) {
	t.Helper()
	for p, content := range files {
		writeFiles(t, a.hostHome, map[string]string{strings.TrimPrefix(p, "~/"): content})
	}
}

// start runs editor with args in tmux, in the workspace, as the account's
// user; the editor and its servers are stopped when the test ends.
func (a *sidAccount) start(t *testing.T, editor string, args ...string) {
	t.Helper()
	if _, err := os.Stat(a.hostPath("~/.cache")); !os.IsNotExist(err) {
		t.Fatalf("the fresh account already has ~/.cache (%v)", err)
	}
	argv := a.c.command(a.env, "/usr/bin/env", append([]string{"-C", a.demo.workspace, editor}, args...)...)
	a.tmux.run(append([]string{"new-session", "-d", "-s", "dsh", "-x", fmt.Sprint(sidScreenWidth), "-y", fmt.Sprint(sidScreenHeight)}, argv...)...)
	t.Cleanup(func() {
		cmd := exec.Command("tmux", "-S", a.tmux.socket, "kill-server")
		cmd.Env = a.tmux.env
		_ = cmd.Run()
		awaitHomeServersExit(t, a.home)
	})
}

// waitLog waits until the server's log file (a "~/" path) holds every one
// of lines, and returns it.
func (a *sidAccount) waitLog(t *testing.T, logFile string, lines ...string) string {
	t.Helper()
	return waitFor(t, fmt.Sprintf("%q in %s", lines, logFile), func() (bool, string) {
		data, _ := os.ReadFile(a.hostPath(logFile))
		for _, l := range lines {
			if !bytes.Contains(data, []byte(l)) {
				return false, a.screen() + "\n" + string(data)
			}
		}
		return true, string(data)
	})
}

func (a *sidAccount) screen() string { return a.tmux.run("capture-pane", "-p", "-t", "dsh") }

// output runs name with args inside the chroot (as root, in the host's
// environment) and returns what it printed on stdout.
func (c sidChroot) output(t *testing.T, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command("chroot", append([]string{c.root, name}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %s in the sid chroot: %v\n%s", name, strings.Join(args, " "), err, stderr.String())
	}
	return strings.TrimSpace(string(out))
}

// demoFacts are the sessions of the demo store; its ids and titles are
// fixed, so a store written elsewhere tells them.
func demoFacts(t *testing.T) []dshgen.Expected {
	t.Helper()
	facts, err := dshgen.DemoStoreFor(t.TempDir(), "/workspace", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return facts
}

// demoSessionID is the id of the demo store's session titled title.
func demoSessionID(t *testing.T, title string) string {
	t.Helper()
	for _, f := range demoFacts(t) {
		if f.Title == title {
			return f.ID
		}
	}
	t.Fatalf("the demo store has no session titled %q", title)
	return ""
}
