package editors

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dsh-refls/dsh-refls/internal/dshgen"
)

// The fenced ```lua blocks of docs/editors.md that the fresh-account tests
// run as ~/.config/nvim/init.lua, each marked by the HTML comment before it.
const (
	snippetLspEnable = "nvim-0.11"  // vim.lsp.config + vim.lsp.enable, Neovim 0.11+
	snippetSetup     = "nvim-setup" // require('dsh_refls').setup(), Neovim 0.7+
)

// snippetPluginPath is the plugin directory the snippets name; the tests
// put the path of this checkout's editors/nvim in its place, and nothing
// else of a snippet is changed.
const snippetPluginPath = "~/src/dsh-refls/editors/nvim"

// docSnippet returns the fenced ```lua block of docs/editors.md that
// follows the comment <!-- test: marker -->.
func docSnippet(t *testing.T, marker string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot(t), "docs", "editors.md"))
	if err != nil {
		t.Fatal(err)
	}
	tag := "<!-- test: " + marker + " -->\n"
	_, after, ok := strings.Cut(string(data), tag)
	if !ok {
		t.Fatalf("docs/editors.md has no %q", strings.TrimSpace(tag))
	}
	after = strings.TrimLeft(after, "\n")
	body, ok := strings.CutPrefix(after, "```lua\n")
	if !ok {
		t.Fatalf("no ```lua block follows %q in docs/editors.md", strings.TrimSpace(tag))
	}
	body, _, ok = strings.Cut(body, "```\n")
	if !ok {
		t.Fatalf("the ```lua block after %q in docs/editors.md does not end", strings.TrimSpace(tag))
	}
	if !strings.Contains(body, snippetPluginPath) {
		t.Fatalf("the snippet %s does not name the plugin directory %s:\n%s", marker, snippetPluginPath, body)
	}
	return body
}

// Screen of the fresh-account tests: tall enough for the whole menu at @
// below the line being typed, wide enough for a session mention after a
// sign column.
const (
	freshWidth  = 140
	freshHeight = 40
)

// nvimPlace is where a fresh account's Neovim runs: the host (Debian 12's
// Neovim 0.7) or the sid chroot (Neovim 0.12).
type nvimPlace struct {
	// hostDir is a new directory, insideDir the path Neovim sees for it.
	hostDir, insideDir string
	// binDir is the directory (as Neovim sees it) holding dsh-refls.
	binDir string
	// pluginDir is this checkout's editors/nvim, as Neovim sees it.
	pluginDir string
	// argv is the tmux pane command that runs the shell script with
	// exactly env.
	argv func(env []string, script string) []string
	// version is `nvim --version`'s first line.
	version string
}

// hostPlace is Neovim on the host, with the server built for the tests.
func hostPlace(t *testing.T) nvimPlace {
	t.Helper()
	nvim := lookNvim(t)
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not on PATH; install it (apt-get install -y tmux) to drive Neovim in a terminal")
	}
	bin := buildServer(t)
	dir := t.TempDir()
	out, err := exec.Command(nvim, "--version").Output()
	if err != nil {
		t.Fatalf("nvim --version: %v", err)
	}
	return nvimPlace{
		hostDir: dir, insideDir: dir,
		binDir:    filepath.Dir(bin),
		pluginDir: filepath.Join(repoRoot(t), "editors", "nvim"),
		argv: func(env []string, script string) []string {
			return append(append([]string{"/usr/bin/env", "-i"}, env...), "/bin/sh", "-c", script)
		},
		version: firstLine(string(out)),
	}
}

// sidPlace is Neovim in the sid chroot, with a copy of the server and of
// editors/nvim in a new directory there.
func sidPlace(t *testing.T) nvimPlace {
	t.Helper()
	c := lookSid(t)
	c.version(t, "neovim")
	bin := buildServer(t)
	hostDir, insideDir := c.tempDir(t)
	server := c.installServer(t, bin, hostDir)
	copyDir(t, filepath.Join(repoRoot(t), "editors", "nvim"), filepath.Join(hostDir, "dsh-refls", "editors", "nvim"))
	env := []string{"PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8"}
	out, err := exec.Command(c.command(env, "nvim", "--version")[0], c.command(env, "nvim", "--version")[1:]...).Output()
	if err != nil {
		t.Fatalf("nvim --version in the sid chroot: %v", err)
	}
	return nvimPlace{
		hostDir: hostDir, insideDir: insideDir,
		binDir:    filepath.Dir(server),
		pluginDir: insideDir + "/dsh-refls/editors/nvim",
		argv: func(env []string, script string) []string {
			return c.command(env, "/bin/sh", "-c", script)
		},
		version: firstLine(string(out)),
	}
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return strings.TrimSpace(line)
}

// copyDir copies the regular files under src to dst.
func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, e os.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dst, rel)), 0o755); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
	})
	if err != nil {
		t.Fatalf("copying %s: %v", src, err)
	}
}

// freshNvim is Neovim on a fresh account, in tmux: a HOME holding only
// ~/.config/nvim/init.lua (a snippet of the docs), the demo store at
// ~/.dsh/sessions (dsh's default root) and the demo workspace at
// ~/workspace; no ~/.cache, no ~/.local. dsh-refls is on PATH.
type freshNvim struct {
	nvimScreen
	place nvimPlace
	// hostHome and home are the account's home on the host and in Neovim.
	hostHome, home string
	// log is the server's log file, where the snippets put it
	// (stdpath('cache')/dsh-refls.log), as Neovim sees it; hostLog on the host.
	log, hostLog string
	// rate is the session "Add rate limiting to the API".
	rate dshgen.Expected
	// lines counts the buffer lines read back, to tag each answer apart.
	lines int
}

// startFreshNvim writes the account with the docs' snippet as its init.lua,
// starts Neovim on the workspace's message.md and waits for the server's
// first session index. more, when given, writes further sessions into the
// store (hostRoot, on the host) for the workspace (as Neovim sees it)
// before Neovim starts.
func startFreshNvim(t *testing.T, place nvimPlace, snippet string, more ...func(hostRoot, workspace string)) *freshNvim {
	t.Helper()
	initLua := strings.ReplaceAll(docSnippet(t, snippet), snippetPluginPath, place.pluginDir)
	f := &freshNvim{place: place, hostHome: filepath.Join(place.hostDir, "home"), home: place.insideDir + "/home"}
	d := newDemoSetupAt(t, f.hostHome, f.home)
	// dsh keeps its sessions in ~/.dsh/sessions: the snippets' root.
	if err := os.MkdirAll(filepath.Join(f.hostHome, ".dsh"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(f.hostHome, "sessions"), filepath.Join(f.hostHome, ".dsh", "sessions")); err != nil {
		t.Fatal(err)
	}
	d.root = f.home + "/.dsh/sessions"
	for _, write := range more {
		write(filepath.Join(f.hostHome, ".dsh", "sessions"), d.workspace)
	}
	writeFiles(t, f.hostHome, map[string]string{".config/nvim/init.lua": initLua})
	t.Logf("%s, ~/.config/nvim/init.lua:\n%s", place.version, initLua)
	f.rate = demoSession(t, rateSession)
	f.log = f.home + "/.cache/nvim/dsh-refls.log"
	f.hostLog = filepath.Join(f.hostHome, ".cache", "nvim", "dsh-refls.log")

	env := []string{
		"HOME=" + f.home,
		"PATH=" + place.binDir + ":/usr/local/bin:/usr/bin:/bin",
		"TERM=xterm-256color",
		"LANG=C.UTF-8",
	}
	tmux := tmuxRunner{t: t, socket: filepath.Join(place.hostDir, "tmux.sock"), env: isolatedEnv(place.hostDir, "TERM=xterm-256color")}
	script := "cd '" + d.workspace + "' && exec nvim message.md"
	tmux.run(append([]string{"new-session", "-d", "-s", "dsh", "-x", fmt.Sprint(freshWidth), "-y", fmt.Sprint(freshHeight)},
		place.argv(env, script)...)...)
	t.Cleanup(func() {
		cmd := exec.Command("tmux", "-S", tmux.socket, "kill-server")
		cmd.Env = tmux.env
		_ = cmd.Run()
		awaitServersExit(t, f.log)
		if t.Failed() {
			data, _ := os.ReadFile(f.hostLog)
			t.Logf("server log %s:\n%s", f.log, data)
		}
	})
	f.nvimScreen = nvimScreen{tmux: tmux, demo: d, log: f.hostLog}
	waitFor(t, "the server's log in ~/.cache/nvim and its first session index", func() (bool, string) {
		data, _ := os.ReadFile(f.hostLog)
		return strings.Contains(string(data), "session index built"), f.screen() + "\n" + string(data)
	})
	return f
}

func (f *freshNvim) screen() string { return f.tmux.run("capture-pane", "-p", "-t", "dsh") }

// demoSession is the demo store's session titled title. The demo's ids
// and titles are fixed; they are read from a copy of the store written
// for the purpose.
func demoSession(t *testing.T, title string) dshgen.Expected {
	t.Helper()
	facts, err := dshgen.DemoStoreFor(t.TempDir(), "/demo/workspace", time.Now())
	if err != nil {
		t.Fatalf("writing the demo store: %v", err)
	}
	for _, f := range facts {
		if f.Title == title {
			return f
		}
	}
	t.Fatalf("the demo store has no session titled %q", title)
	return dshgen.Expected{}
}

// quit ends Neovim with :qa! and waits for its pane to close and then for
// its server to exit.
func (f *freshNvim) quit(t *testing.T) {
	t.Helper()
	f.keys("Escape")
	f.text(":qa!")
	f.keys("Enter")
	deadline := time.Now().Add(screenWait)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), screenWait)
		cmd := exec.CommandContext(ctx, "tmux", "-S", f.tmux.socket, "has-session", "-t", "dsh")
		cmd.Env = f.tmux.env
		err := cmd.Run()
		cancel()
		if err != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Neovim still runs %v after :qa!:\n%s", screenWait, f.screen())
		}
		time.Sleep(screenPoll)
	}
	awaitServersExit(t, f.log)
}

// TestNeovimInstallSnippets holds the install snippets of
// editors/nvim/README.md and :help dsh_refls (doc/dsh_refls.txt) to those
// of docs/editors.md, which the fresh-account tests run as init.lua: a
// user copying from any of the three gets the lines that were tested.
func TestNeovimInstallSnippets(t *testing.T) {
	nvimDir := filepath.Join(repoRoot(t), "editors", "nvim")
	readme, err := os.ReadFile(filepath.Join(nvimDir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	help, err := os.ReadFile(filepath.Join(nvimDir, "doc", "dsh_refls.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, marker := range []string{snippetLspEnable, snippetSetup} {
		snippet := docSnippet(t, marker)
		if !strings.Contains(string(readme), "```lua\n"+snippet+"```\n") {
			t.Errorf("editors/nvim/README.md lacks the %s snippet of docs/editors.md:\n%s", marker, snippet)
		}
		// A help example: after a line ending in ">", indented, up to "<".
		var indented strings.Builder
		for _, line := range strings.SplitAfter(strings.TrimSuffix(snippet, "\n"), "\n") {
			indented.WriteString("    " + line)
		}
		if !strings.Contains(string(help), ">\n\n"+indented.String()+"\n<\n") {
			t.Errorf("doc/dsh_refls.txt lacks the %s snippet of docs/editors.md as an example block:\n%s", marker, indented.String())
		}
	}
}
