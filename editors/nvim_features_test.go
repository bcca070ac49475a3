package editors

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// nvimScreen is Neovim with the plugin, in tmux, on a demo store.
type nvimScreen struct {
	tmux tmuxRunner
	demo demoSetup
	log  string // the server's log file
}

// startNvimScreen writes the demo store and workspace (plus extra files),
// starts Neovim on the message file in tmux with settings (a Lua table
// body) and waits for the first session index build.
func startNvimScreen(t *testing.T, settings string, extra map[string]string) nvimScreen {
	t.Helper()
	nvim := lookNvim(t)
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not on PATH; install it (apt-get install -y tmux) to drive Neovim in a terminal")
	}
	bin := buildServer(t)
	dir := t.TempDir()
	d := newDemoSetup(t, dir)
	writeFiles(t, d.workspace, extra)
	logFile := filepath.Join(dir, "server.log")
	initLua := filepath.Join(dir, "init.lua")
	plugin := filepath.Join(repoRoot(t), "editors", "nvim")
	writeFiles(t, dir, map[string]string{"init.lua": fmt.Sprintf(`
vim.opt.rtp:prepend(%q)
vim.cmd('filetype on')
vim.cmd('syntax on')
vim.o.completeopt = 'menuone,noinsert'
vim.o.pumheight = 16
require('dsh_refls').setup({
  server_path = %q,
  log_file = %q,
  log_level = 'debug',
  split = 'split',
  settings = { sessionsRoot = %q, %s },
})
`, plugin, bin, logFile, d.root, settings)})
	tmux := tmuxRunner{t: t, socket: filepath.Join(dir, "tmux.sock"), env: isolatedEnv(dir, "TERM=xterm-256color")}
	tmux.run("new-session", "-d", "-s", "dsh", "-x", fmt.Sprint(screenWidth), "-y", fmt.Sprint(screenHeight),
		"-c", d.workspace, nvim, "-u", initLua, "-i", "NONE", "-n", d.message)
	t.Cleanup(func() {
		cmd := exec.Command("tmux", "-S", tmux.socket, "kill-server")
		cmd.Env = tmux.env
		_ = cmd.Run()
	})
	waitFor(t, "the session index to be built", func() (bool, string) {
		data, _ := os.ReadFile(logFile)
		return strings.Contains(string(data), "session index built"), string(data)
	})
	return nvimScreen{tmux: tmux, demo: d, log: logFile}
}

// keys sends tmux key names (Enter, Escape, C-x …) and text.
func (n nvimScreen) keys(keys ...string) {
	n.tmux.run(append([]string{"send-keys", "-t", "dsh"}, keys...)...)
}

// text types s literally (no key names).
func (n nvimScreen) text(s string) {
	n.tmux.run("send-keys", "-t", "dsh", "-l", s)
}

// wait captures the screen until ok accepts it.
func (n nvimScreen) wait(t *testing.T, what string, ok func(string) bool) string {
	t.Helper()
	return waitMenu(t, n.tmux, what, ok)
}

// echo runs a Lua expression in Neovim and waits for its printed value,
// tagged so that it is told apart from anything else on the screen.
func (n nvimScreen) echo(t *testing.T, tag, expr string) string {
	t.Helper()
	n.keys("Escape")
	n.text(fmt.Sprintf(":lua print('%s=' .. tostring(%s))", tag, expr))
	n.keys("Enter")
	s := n.wait(t, tag, func(s string) bool { return strings.Contains(s, tag+"=") })
	_, v, _ := strings.Cut(s, tag+"=")
	v, _, _ = strings.Cut(v, "\n")
	return strings.TrimSpace(v)
}

// TestNeovimSearchScreen runs :DshSearch with the demo's body phrase in
// Neovim (tmux): the scratch buffer lists the session whose conversation
// holds it, with the excerpt, and <CR> on the result opens that session's
// read-only recall preview. -v prints the screens.
func TestNeovimSearchScreen(t *testing.T) {
	// dsh/search needs the body index, off by default (docs/search.md).
	n := startNvimScreen(t, "recallSearch = true", nil)
	n.keys(":DshSearch \"twenty times\"", "Enter")
	results := n.wait(t, "the search results", func(s string) bool {
		return strings.Contains(s, "# dsh-refls search: \"twenty times\"") && strings.Contains(s, "## "+demoSessionTitle)
	})
	t.Logf(":DshSearch \"twenty times\":\n%s", results)
	for _, want := range []string{"1 session.", "run the test twenty times", "user #", n.demo.workspace + " · created "} {
		if !strings.Contains(results, want) {
			t.Errorf("the results lack %q:\n%s", want, results)
		}
	}
	if got := n.echo(t, "SEARCHBUF", "vim.bo.buftype .. ',' .. tostring(vim.bo.modifiable) .. ',' .. vim.api.nvim_buf_get_name(0)"); !strings.HasPrefix(got, "nofile,false,dsh://search/") {
		t.Errorf("the results are not a read-only scratch buffer: %s", got)
	}

	// <CR> on the excerpt line opens the recall preview of that session.
	n.keys(":call search('^- user')", "Enter", "Enter")
	preview := n.wait(t, "the recall preview", func(s string) bool {
		return strings.Contains(s, "dsh://recall/") && strings.Contains(s, "messages kept")
	})
	t.Logf("<CR> on the result:\n%s", preview)
	if !strings.Contains(preview, n.demo.session.ID) {
		t.Errorf("the preview is not the session %s:\n%s", n.demo.session.ID, preview)
	}
	if got := n.echo(t, "PREVIEWBUF", "vim.bo.buftype .. ',' .. tostring(vim.bo.modifiable) .. ',' .. #vim.diagnostic.get(0)"); got != "nofile,false,0" {
		t.Errorf("the preview is not a read-only undiagnosed scratch buffer: %s", got)
	}
	n.keys(":qa!", "Enter")
}
