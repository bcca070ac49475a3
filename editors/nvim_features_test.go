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
		awaitServersExit(t, logFile)
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
	n.tmux.run("send-keys", "-t", "dsh", "-l", "--", s)
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
	// The tag and "=" are joined by Lua, so the typed command line never
	// reads as the answer.
	n.text(fmt.Sprintf(":lua print('%s' .. '=' .. tostring(%s))", tag, expr))
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

	// Typing a word said in a session after "@" lists it, with the
	// excerpt beside it (issue 13): "twenty" is in no title. The body index
	// is built in the background after the title index and completion has
	// no body matches before it; dsh/search answers once it is in.
	if got := n.echo(t, "INDEXED", "select(2, next(vim.lsp.buf_request_sync(0, 'dsh/search', { query = 'twenty' }, 10000))).result[1].displayTitle"); got != demoSessionTitle {
		t.Fatalf("dsh/search twenty found %q, want %q", got, demoSessionTitle)
	}
	n.keys("G", "o")
	n.text("Body: @twenty")
	n.keys("C-x", "C-o")
	body := n.wait(t, "the body match in the menu", func(s string) bool {
		return strings.Contains(s, demoSessionTitle) && strings.Contains(s, "twenty times")
	})
	t.Logf("<C-x><C-o> after @twenty:\n%s", body)
	n.keys("C-e", "Escape")
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

	// <CR> on the excerpt line opens the recall preview of that session,
	// at the message of the match (scrolled there: the header may be off
	// the screen).
	n.keys(":call search('^- user')", "Enter", "Enter")
	preview := n.wait(t, "the recall preview", func(s string) bool {
		return strings.Contains(s, "dsh://recall/") && strings.Contains(s, "## Message of event")
	})
	t.Logf("<CR> on the result:\n%s", preview)
	if got := n.echo(t, "PREVIEWOF", "vim.fn.search('"+n.demo.session.ID+"', 'nw') > 0 and vim.fn.search('messages kept', 'nw') > 0"); got != "true" {
		t.Errorf("the preview is not the session %s's recall preview:\n%s", n.demo.session.ID, preview)
	}
	if got := n.echo(t, "PREVIEWBUF", "vim.bo.buftype .. ',' .. tostring(vim.bo.modifiable) .. ',' .. #vim.diagnostic.get(0)"); got != "nofile,false,0" {
		t.Errorf("the preview is not a read-only undiagnosed scratch buffer: %s", got)
	}
	searchHitAtCursor(t, n.echo)
	n.keys(":qa!", "Enter")
}

// linesFile is a workspace file with numbered-looking lines for line-range
// mentions (issue 14).
const linesFile = "src/lines.txt"

// TestNeovimLineRangesFixesSymbols drives the issue-14 features through
// Neovim 0.7's own LSP client in tmux: completion after `#` of a file
// mention offers line ranges, hover on `@file#L2-4` shows those lines and
// :DshFollow opens its document link (the file at line 2), a
// missing file's warning offers a quick fix that vim.lsp.buf.code_action()
// applies (and the warning goes), and vim.lsp.buf.workspace_symbol() lists
// a session whose quickfix entry opens its recall preview. -v prints the
// screens.
func TestNeovimLineRangesFixesSymbols(t *testing.T) {
	n := startNvimScreen(t, "", map[string]string{linesFile: "alpha line\nbravo line\ncharlie line\ndelta line\n"})

	// Completion after "#": the typed start line, to the end, as items.
	n.keys("G", "o")
	n.text("Lines: @" + linesFile + "#L2")
	n.keys("C-x", "C-o")
	menu := n.wait(t, "the line-range menu", func(s string) bool {
		return strings.Contains(s, "L2-4") && strings.Contains(s, "line 2 of 4")
	})
	t.Logf("<C-x><C-o> after @%s#L2:\n%s", linesFile, menu)
	// noinsert selects the first entry; <C-n> moves to the second.
	n.keys("C-n")
	n.wait(t, "the second entry selected", func(s string) bool { return strings.Contains(s, "match 2 of 2") })
	n.keys("C-y", "Escape")
	n.wait(t, "the accepted range", func(s string) bool { return strings.Contains(s, "Lines: @"+linesFile+"#L2-4\n") })

	// Hover on the mention: kind, size and the lines themselves.
	n.text(":lua vim.lsp.buf.hover()")
	n.keys("Enter")
	hover := n.wait(t, "the hover with lines", func(s string) bool {
		return strings.Contains(s, "bravo line") && strings.Contains(s, "delta line")
	})
	t.Logf("hover on @%s#L2-4:\n%s", linesFile, hover)
	if strings.Contains(hover, "alpha line") {
		t.Errorf("the hover shows line 1, outside L2-4:\n%s", hover)
	}
	n.keys("0") // moving closes the hover window

	// Its document link: :DshFollow opens the file at the range's first line.
	n.keys("f@", ":DshFollow", "Enter")
	followed := n.wait(t, "the linked file at line 2", func(s string) bool {
		return strings.Contains(s, "bravo line") && strings.Contains(s, linesFile) && strings.Contains(s, "2,1")
	})
	t.Logf(":DshFollow on @%s#L2-4:\n%s", linesFile, followed)
	n.keys(":b message.md", "Enter")
	n.wait(t, "back in the message", func(s string) bool { return strings.Contains(s, "Lines: @"+linesFile+"#L2-4") })

	// A session mention's link: its recall preview.
	n.keys("o")
	n.text("Read " + n.demo.mention + " first.")
	n.keys("Escape", "0", "f@", ":DshFollow", "Enter")
	linked := n.wait(t, "the linked session's preview", func(s string) bool {
		return strings.Contains(s, "dsh://recall/") && strings.Contains(s, "**"+demoSessionTitle+"**")
	})
	t.Logf(":DshFollow on a session mention:\n%s", linked)
	n.keys(":close", "Enter", "d", "d")
	n.wait(t, "the mention line removed", func(s string) bool { return !strings.Contains(s, "Read @[") })

	// A missing file: a warning, and the quick fix that replaces the path.
	n.keys("o")
	n.text("See @src/logn.ts now.")
	n.keys("Escape")
	warned := n.wait(t, "the missing-file diagnostic", func(s string) bool { return strings.Contains(s, "src/logn.ts") && strings.Contains(s, "■") })
	t.Logf("the missing file's diagnostic:\n%s", warned)
	n.keys("0", "f@")
	n.text(":lua vim.lsp.buf.code_action()")
	n.keys("Enter")
	actions := n.wait(t, "the code action menu", func(s string) bool {
		return strings.Contains(s, "Code actions:") && strings.Contains(s, "Replace with src/login.ts")
	})
	t.Logf("vim.lsp.buf.code_action():\n%s", actions)
	_, first, _ := strings.Cut(actions, "Code actions:")
	if !strings.Contains(strings.SplitN(strings.TrimLeft(first, "\n"), "\n", 2)[0], "1: Replace with src/login.ts") {
		t.Errorf("the first (preferred) action is not the closest path:\n%s", actions)
	}
	n.keys("1", "Enter")
	fixed := n.wait(t, "the applied fix", func(s string) bool {
		return strings.Contains(s, "See @src/login.ts now.") && !strings.Contains(s, "■")
	})
	t.Logf("after applying action 1:\n%s", fixed)
	if got := n.echo(t, "DIAGS", "#vim.diagnostic.get(0)"); got != "0" {
		t.Errorf("after the fix the buffer has %s diagnostics, want 0", got)
	}

	// Workspace symbols: the session by a word of its title, in the
	// quickfix list; <CR> on it opens the recall preview.
	n.text(":lua vim.lsp.buf.workspace_symbol('rate')")
	n.keys("Enter")
	symbols := n.wait(t, "the workspace symbols", func(s string) bool {
		return strings.Contains(s, "Symbols matching 'rate'") && strings.Contains(s, rateSession)
	})
	t.Logf("vim.lsp.buf.workspace_symbol('rate'):\n%s", symbols)
	n.keys("Enter")
	preview := n.wait(t, "the preview of the symbol", func(s string) bool {
		return strings.Contains(s, "**"+rateSession+"**") && strings.Contains(s, "messages kept")
	})
	t.Logf("<CR> on the symbol:\n%s", preview)
	if got := n.echo(t, "SYMBUF", "vim.bo.buftype .. ',' .. tostring(vim.bo.modifiable) .. ',' .. #vim.diagnostic.get(0) .. ',' .. #require('dsh_refls').clients(0)"); got != "nofile,false,0,0" {
		t.Errorf("the symbol's preview is not a read-only, unattached, undiagnosed buffer: %s", got)
	}
	n.keys(":qa!", "Enter")
}
