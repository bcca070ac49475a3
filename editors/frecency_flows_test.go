package editors

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Frecency (issue 30 item 2) in the editors: a session picked from the
// menu ranks first among those that matched alike at the next "@", its
// picks survive a restart, and the forget command forgets them. The
// flows are driven inside the existing setups (the VS Code script's
// frecencyPicks and frecencyAfterRestart, driveNeovimFlows, runEmacs30); their checks
// fail the tests, and docs/editors.md's table has no column for them yet.

// forgetFrecencyState removes the picks a run of the servers started with
// env saved (under its XDG_CACHE_HOME), so that a retry starts without them.
func forgetFrecencyState(t *testing.T, env []string) {
	t.Helper()
	for _, kv := range env {
		if cache, ok := strings.CutPrefix(kv, "XDG_CACHE_HOME="); ok {
			if err := os.RemoveAll(filepath.Join(cache, "dsh-refls", "frecency")); err != nil {
				t.Fatal(err)
			}
			return
		}
	}
	t.Fatal("the editor's environment names no XDG_CACHE_HOME")
}

// nvimPicks is the Lua expression of how many picks the buffer's server
// counted (dsh/status), for f.echo.
const nvimPicks = "require('dsh_refls.compat').request_sync(require('dsh_refls').clients()[1], 'dsh/status', vim.empty_dict(), 5000, 0).result.frecency.picks"

// driveNeovimFrecency runs after driveNeovimFlows accepted the rate
// session and the rate file, each once, from menus (the plugin's
// omnifunc runs the accepted entry's command from CompleteDone; Neovim
// 0.12's vim.lsp.completion runs it itself): the server counted two
// picks, never more; at "@" the rate session, which atRows (the menu at
// "@" before any pick) did not list first, is now the first row; after
// :DshForgetPicks nothing is counted and "@" lists atRows' first row
// first again. Each menu is closed with <C-e> (nothing accepted) and its
// line deleted.
func driveNeovimFrecency(t *testing.T, f *freshNvim, how nvimCompletion, atRows []string) {
	t.Helper()
	if len(atRows) == 0 || strings.Contains(atRows[0], rateSession) {
		t.Fatalf("the menu at @ before any pick has %q first: the check below would prove nothing", atRows)
	}
	if got := f.echo(t, "PICKS", nvimPicks); got != "2" {
		t.Errorf("after accepting a session and a file the server counted %s picks, want 2", got)
	}
	menuAt := func(what string) []string {
		t.Helper()
		f.openMenu(t, how, "Again: @")
		s := f.wait(t, "the menu at @ "+what, func(s string) bool {
			rows, _ := menuRows(s, "Again: @")
			return rowWith(rows, rateSession) >= 0 && rowWith(rows, demoFile) >= 0
		})
		rows, _ := menuRows(s, "Again: @")
		t.Logf("the menu at @ %s:\n%s", what, strings.Join(rows, "\n"))
		f.keys("C-e", "Escape")
		f.keys("d", "d")
		f.wait(t, "the line deleted", func(s string) bool { _, ok := menuRows(s, "Again: @"); return !ok })
		return rows
	}
	if rows := menuAt("after the picks"); !strings.Contains(rows[0], rateSession) {
		t.Errorf("after picking %q the first row at @ is %q, want it", rateSession, rows[0])
	}
	f.text(":DshForgetPicks")
	f.keys("Enter")
	f.wait(t, "the forget command's message", func(s string) bool {
		return strings.Contains(s, "forgot the picks of 2 sessions and files")
	})
	if got := f.echo(t, "FORGOTTEN", nvimPicks); got != "0" {
		t.Errorf("after :DshForgetPicks the server counts %s picks, want 0", got)
	}
	first, _, _ := strings.Cut(atRows[0], "  ")
	if rows := menuAt("after :DshForgetPicks"); !strings.HasPrefix(rows[0], first) {
		t.Errorf("after :DshForgetPicks the first row at @ is %q, want %q as before the picks", rows[0], first)
	}
}

// emacsPicks is the Emacs Lisp expression of how many picks the buffer's
// server counted (dsh/status), with the buffer's changes sent first (eglot
// sends them when idle).
const emacsPicks = "(progn (eglot--signal-textDocument/didChange) " +
	"(plist-get (plist-get (jsonrpc-request (eglot-current-server) :dsh/status eglot--{}) :frecency) :picks))"

// driveEmacsFrecency runs after runEmacs30 accepted the rate session and
// the rate file from *Completions*, each once; eglot runs no item
// commands, so the server counted them by the edits that inserted them,
// once the buffer moved on. Two picks, never more; at "@" the session
// is the first entry, which atEntries (*Completions* at "@" before any
// pick) did not have first; with dsh-refls.el, M-x
// dsh-refls-forget-picks forgets them and atEntries' first is first
// again. Each list is left with C-g and its line removed.
func driveEmacsFrecency(t *testing.T, e *emacsScreen, lib bool, atEntries []string) {
	t.Helper()
	if len(atEntries) == 0 || strings.HasPrefix(atEntries[0], rateSession) {
		t.Fatalf("*Completions* at @ before any pick has %q first: the check below would prove nothing", atEntries)
	}
	// The line after the file moves the buffer on: the file's pick counts.
	e.keys("C-e", "Enter")
	e.text("Again: ")
	// The screen holds no trailing space.
	e.wait(t, "the typed Again:", func(s string) bool { return strings.Contains(s, "Again:\n") })
	if got := e.eval(t, emacsPicks); got != "2" {
		t.Errorf("after accepting a session and a file the server counted %s picks, want 2", got)
	}
	listAt := func(what string) []string {
		t.Helper()
		e.text("@")
		e.wait(t, "the typed Again: @", func(s string) bool { return strings.Contains(s, "Again: @\n") })
		e.keys("M-Tab")
		var entries []string
		list := e.wait(t, "*Completions* at @ "+what, func(s string) bool {
			entries = completionEntries(s)
			return entryIndex(entries, rateSession) >= 0 && entryIndex(entries, demoFile) >= 0
		})
		t.Logf("M-TAB after @ %s:\n%s", what, list)
		e.keys("C-g")
		e.wait(t, "*Completions* closed", func(s string) bool { return !strings.Contains(s, "possible completions") })
		if got := e.eval(t, emacsClearLine); got != "t" {
			t.Fatalf("the line does not read \"Again: \" after removing the @: %s", got)
		}
		return entries
	}
	if entries := listAt("after the picks"); entryIndex(entries, rateSession) != 0 {
		t.Errorf("after picking %q *Completions* at @ lists %q", rateSession, entries)
	}
	if !lib {
		e.eval(t, emacsDropLine)
		return
	}
	e.keys("M-x")
	e.text("dsh-refls-forget-picks")
	e.keys("Enter")
	e.wait(t, "the forget command's message", func(s string) bool {
		return strings.Contains(echoArea(s), "forgot the picks of 2 sessions and files")
	})
	if got := e.eval(t, emacsPicks); got != "0" {
		t.Errorf("after dsh-refls-forget-picks the server counts %s picks, want 0", got)
	}
	first, _, _ := strings.Cut(atEntries[0], "  ")
	if entries := listAt("after dsh-refls-forget-picks"); len(entries) == 0 || !strings.HasPrefix(entries[0], first) {
		t.Errorf("after dsh-refls-forget-picks *Completions* at @ lists %q, want %q first as before the picks", entries, first)
	}
	e.eval(t, emacsDropLine)
}

// emacsClearLine puts "Again: " in place of the line at point and says
// whether the line reads so; emacsDropLine removes the line at point and
// its newline.
const (
	emacsClearLine = `(progn (delete-region (line-beginning-position) (line-end-position)) (insert "Again: ") ` +
		`(string= (buffer-substring-no-properties (line-beginning-position) (line-end-position)) "Again: "))`
	emacsDropLine = `(progn (delete-region (1- (line-beginning-position)) (line-end-position)) t)`
)
