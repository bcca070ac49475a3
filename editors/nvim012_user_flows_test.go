package editors

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// TestNeovim012LspEnable is Neovim 0.12 (sid chroot) on a fresh account
// whose init.lua is the docs' vim.lsp.enable snippet, no setup(): the menu
// opens as "@" is typed (vim.lsp.completion with autotrigger) and every
// flow of driveNeovimFlows is driven as a user would. -v prints the screens.
func TestNeovim012LspEnable(t *testing.T) {
	place := sidPlace(t)
	rec := recordFeatures(t, "Neovim 0.12 (vim.lsp.enable)", place.version)
	f := startFreshNvim(t, place, snippetLspEnable)
	driveNeovimFlows(t, f, rec, nvimCompletion{autotrigger: true})
}

// TestNeovim012Setup is Neovim 0.12 (sid chroot) on a fresh account whose
// init.lua is the docs' require('dsh_refls').setup() snippet: completion
// with <C-x><C-o> (the plugin's omnifunc) and every flow of
// driveNeovimFlows. -v prints the screens.
func TestNeovim012Setup(t *testing.T) {
	place := sidPlace(t)
	rec := recordFeatures(t, "Neovim 0.12 + setup()", place.version)
	f := startFreshNvim(t, place, snippetSetup)
	driveNeovimFlows(t, f, rec, nvimCompletion{})
}

// TestNeovim07Setup is Debian 12's Neovim 0.7, the oldest supported, on a
// fresh account whose init.lua is the docs' require('dsh_refls').setup()
// snippet: the flows of TestNeovim012Setup on the host, so that the
// record of 0.7 holds every flow, driven the same way.
func TestNeovim07Setup(t *testing.T) {
	place := hostPlace(t)
	if !strings.HasPrefix(place.version, "NVIM v0.7.") {
		t.Skipf("the host's Neovim is %s, not 0.7 (Debian 12: apt-get install -y neovim)", place.version)
	}
	rec := recordFeatures(t, "Neovim 0.7 + setup()", place.version)
	f := startFreshNvim(t, place, snippetSetup)
	driveNeovimFlows(t, f, rec, nvimCompletion{})
}

// nvimCompletion is how a setup completes: autotrigger opens the menu as
// "@" is typed (vim.lsp.completion), else <C-x><C-o> opens it.
type nvimCompletion struct {
	autotrigger bool
}

// menuRows is the completion menu under the screen line that ends with
// line (the line being typed, its cursor at the end): for each screen line
// below it, the text from the menu's column, as long as that column holds
// text. ok is false when no screen line ends with line.
//
// The menu's column is that of line's last "@", give or take
// menuColumnDrift: Neovim 0.7 draws the menu, then may take away the sign
// column under it (the diagnostics of the line went away), which moves the
// text two columns left and leaves the menu where it was.
func menuRows(screen, line string) (rows []string, ok bool) {
	lines := strings.Split(screen, "\n")
	at := -1
	for i, l := range lines {
		if strings.HasSuffix(strings.TrimRight(l, " "), line) {
			at = i
		}
	}
	if at < 0 {
		return nil, false
	}
	col := strings.LastIndex(lines[at], "@")
	if col < 0 {
		return nil, true
	}
	if at+1 < len(lines) {
		col = menuColumn(lines[at+1], col)
	}
	for _, l := range lines[at+1:] {
		if len(l) <= col || l[col] == ' ' {
			break
		}
		rows = append(rows, strings.TrimSpace(l[col:]))
	}
	return rows, true
}

// menuColumnDrift is how far from the "@" menuRows looks for the menu.
const menuColumnDrift = 2

// menuColumn is where the menu's first row, first, starts: the first
// column within menuColumnDrift of col that holds text after blanks only,
// or col when none does.
func menuColumn(first string, col int) int {
	for c := max(0, col-menuColumnDrift); c <= col+menuColumnDrift && c < len(first); c++ {
		if first[c] != ' ' {
			if c > 0 && first[c-1] != ' ' {
				return col // the middle of other text, not a menu's edge
			}
			return c
		}
	}
	return col
}

// rowWith is the index of the first row holding s, or -1.
func rowWith(rows []string, s string) int {
	for i, r := range rows {
		if strings.Contains(r, s) {
			return i
		}
	}
	return -1
}

// stableScreen captures the pane until two captures in a row agree, so
// that a check reads a whole redraw rather than one half drawn.
func (f *freshNvim) stableScreen(t *testing.T) string {
	t.Helper()
	prev := f.screen()
	deadline := time.Now().Add(screenWait)
	for {
		time.Sleep(menuPoll)
		s := f.screen()
		if s == prev {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("the screen did not settle in %v:\n%s", screenWait, s)
		}
		prev = s
	}
}

// openMenu types text (ending in "@") on a new last line and opens the
// completion menu as the setup does; it returns the moment the key that
// opens the menu was sent.
func (f *freshNvim) openMenu(t *testing.T, how nvimCompletion, text string) time.Time {
	t.Helper()
	f.keys("Escape", "G", "o")
	before, _ := strings.CutSuffix(text, "@")
	f.text(before)
	f.wait(t, "the typed "+before, func(s string) bool { _, ok := menuRows(s, strings.TrimRight(before, " ")); return ok })
	if how.autotrigger {
		start := time.Now()
		f.text("@")
		return start
	}
	f.text("@")
	f.wait(t, "the typed "+text, func(s string) bool { _, ok := menuRows(s, text); return ok })
	start := time.Now()
	f.keys("C-x", "C-o")
	return start
}

// typeQuery types query after line (which ends in "@", its menu open) a
// keystroke at a time, waiting after each until the menu under the line
// satisfies ok (typed is the query so far, took the time since the key was
// sent), as a user types while watching the menu; vim.lsp.completion drops
// a request when the next key comes before the menu. It returns the last
// menu's rows.
func (f *freshNvim) typeQuery(t *testing.T, line, query string, ok func(typed string, rows []string, took time.Duration) bool) []string {
	t.Helper()
	var rows []string
	for i := range query {
		typed := query[:i+1]
		start := time.Now()
		f.text(query[i : i+1])
		s := f.wait(t, "the menu at "+line+typed, func(s string) bool {
			r, _ := menuRows(s, line+typed)
			return ok(typed, r, time.Since(start))
		})
		rows, _ = menuRows(s, line+typed)
		t.Logf("the menu at %s%s (%v after the key):\n%s", line, typed, time.Since(start).Round(time.Millisecond), s)
	}
	return rows
}

// screenLine is the text of the last screen line holding prefix, from
// prefix on (a sign column may stand before it), or "".
func screenLine(screen, prefix string) string {
	line := ""
	for _, l := range strings.Split(screen, "\n") {
		if i := strings.Index(l, prefix); i >= 0 {
			line = strings.TrimRight(l[i:], " ")
		}
	}
	return line
}

// accept moves through the open menu with <C-n>, which puts each entry
// into the line in turn, until the line that begins with prefix reads
// want, then accepts that entry with <C-y>, leaves Insert mode and returns
// the buffer line. (Whether the first entry is already selected differs
// between a new menu and one refreshed as you type, so the line is read
// rather than the <C-n> counted.)
func (f *freshNvim) accept(t *testing.T, prefix, want string, entries int) string {
	t.Helper()
	line := screenLine(f.screen(), prefix)
	for i := 0; line != want; i++ {
		if i > entries {
			t.Fatalf("<C-n> went round the %d entries of the menu without %q in the line", entries, want)
		}
		before := line
		f.keys("C-n")
		s := f.wait(t, "the next entry in the line", func(s string) bool { return screenLine(s, prefix) != before })
		line = screenLine(s, prefix)
	}
	f.keys("C-y", "Escape")
	f.lines++
	return f.echo(t, fmt.Sprintf("LINE%d", f.lines), "vim.fn.getline('.')")
}

// driveNeovimFlows drives the user flows of docs/editors.md in a fresh
// account's Neovim and records each that passed:
//   - "@" opens a menu with a session and a file (timed);
//   - typing "rate" narrows it, each keystroke timed, to the rate-limiting
//     session and design notes/rate plan.md as the first two rows, with no
//     "Migration plan…" (the server's ranking);
//   - accepting the session inserts its canonical mention, accepting the
//     file `@"design notes/rate plan.md"`;
//   - K on the mention shows the recall facts;
//   - a mention of a missing file gets a diagnostic, whose quick fix
//     (vim.lsp.buf.code_action) fixes the line and clears it;
//   - a directory mention over the token budget: its diagnostic, K with
//     its facts and tree, the quick fix that narrows it
//     (directoryFactsFlow);
//   - gd on the mention opens its read-only recall preview;
//   - :DshPrepare and :DshStatus show the prepared context and the index;
//   - the session scopes (scopeFlow): @all: lists the hidden subagent
//     child, and K on its mention names its parent;
//   - :checkhealth dsh_refls reports no error;
//   - :qa! ends Neovim and its server.
func driveNeovimFlows(t *testing.T, f *freshNvim, rec *featureRun, how nvimCompletion) {
	d := f.demo
	mention := sessionMention(t, f.rate.DisplayTitle, f.rate.ID)

	// "@": the menu with sessions and files.
	start := f.openMenu(t, how, "Rate: @")
	atMenu := f.wait(t, "the menu at @", func(s string) bool {
		rows, _ := menuRows(s, "Rate: @")
		return rowWith(rows, d.session.DisplayTitle) >= 0 && rowWith(rows, demoFile) >= 0
	})
	atTime := time.Since(start)
	atRows, _ := menuRows(atMenu, "Rate: @")
	rec.menuTime(atTime)
	t.Logf("the menu at @ (%v after the key):\n%s", atTime.Round(time.Millisecond), atMenu)
	if strings.Contains(atMenu, "dist/") {
		t.Errorf("the menu offers dist/, which .gitignore hides:\n%s", atMenu)
	}
	rec.ok(featMenu)

	// "rate", a keystroke at a time: each one's menu holds the
	// rate-limiting session (its title has "rate" at a word start).
	var times []string
	f.typeQuery(t, "Rate: @", "rate", func(typed string, rows []string, took time.Duration) bool {
		if rowWith(rows, rateSession) < 0 || (typed == "rate" && rowWith(rows, rateFile) < 0) {
			return false
		}
		rec.menuTime(took)
		times = append(times, fmt.Sprintf("@%s %v", typed, took.Round(time.Millisecond)))
		return true
	})
	t.Logf("keystroke to menu: @ %v, %s", atTime.Round(time.Millisecond), strings.Join(times, ", "))
	rateScreen := f.stableScreen(t)
	rows, _ := menuRows(rateScreen, "Rate: @rate")
	// The ranking is the server's: its verdict is given at the end, so
	// that the flows that follow, which take rows by their text, are
	// still driven and recorded when only the order is wrong.
	narrowed := len(rows) >= 2 && strings.Contains(rows[0], rateSession) && strings.Contains(rows[1], rateFile) &&
		!strings.Contains(rateScreen, "Migration plan")
	if narrowed {
		rec.ok(featNarrow)
	}
	defer func() {
		if !narrowed {
			t.Errorf("@rate: the first two rows are not %q and %q, or \"Migration plan…\" is listed; rows:\n%s",
				rateSession, rateFile, strings.Join(rows, "\n"))
		}
	}()

	// Accepting the session: its canonical mention replaces "@rate".
	if rowWith(rows, rateSession) < 0 {
		t.Fatalf("the menu at @rate has no row %q", rateSession)
	}
	want := "Rate: " + mention
	if got := f.accept(t, "Rate: @", want, len(rows)); got != want {
		t.Errorf("after accepting %q the buffer line is\n%q, want\n%q", rateSession, got, want)
	}
	rec.ok(featAcceptSession)

	// Accepting a file with a space: quoted.
	f.openMenu(t, how, "File: @")
	f.wait(t, "the menu at @", func(s string) bool {
		rows, _ := menuRows(s, "File: @")
		return rowWith(rows, demoFile) >= 0
	})
	rows = f.typeQuery(t, "File: @", "rate", func(typed string, rows []string, _ time.Duration) bool {
		return rowWith(rows, rateSession) >= 0 && (typed != "rate" || rowWith(rows, rateFile) >= 0)
	})
	want = `File: @"` + rateFile + `"`
	if got := f.accept(t, "File: @", want, len(rows)); got != want {
		t.Errorf("after accepting %q the buffer line is %q, want %q", rateFile, got, want)
	}
	rec.ok(featAcceptFile)

	// Frecency: the two accepts were counted once each, the session
	// picked ranks first at "@", and :DshForgetPicks forgets.
	driveNeovimFrecency(t, f, how, atRows)
	rec.ok(featFrecency)

	// Hover (K) on the session mention: the recall facts.
	f.text(":2")
	f.keys("Enter", "0", "f[", "K")
	hover := f.wait(t, "the hover", func(s string) bool {
		return strings.Contains(s, "messages kept") && strings.Contains(s, "budget")
	})
	t.Logf("K on the mention:\n%s", hover)
	if !strings.Contains(hover, f.rate.ID) {
		t.Errorf("the hover does not name the session %s:\n%s", f.rate.ID, hover)
	}
	rec.ok(featHover)
	f.keys("Escape", "0")
	f.wait(t, "the hover closed", func(s string) bool { return !strings.Contains(s, "messages kept") })

	// A missing file: its diagnostic, then the quick fix.
	f.keys("G", "o")
	f.text("See @src/logn.ts now.")
	f.keys("Escape")
	f.wait(t, "the diagnostic's sign or text", func(s string) bool {
		for _, l := range strings.Split(s, "\n") {
			if strings.Contains(l, "See @src/logn.ts now.") && (strings.HasPrefix(l, "W ") || strings.Contains(l, "■")) {
				return true
			}
		}
		return false
	})
	f.keys("0", "f@")
	f.text(":lua vim.diagnostic.open_float()")
	f.keys("Enter")
	diag := f.wait(t, "the diagnostic's message", func(s string) bool {
		return strings.Contains(s, "src/logn.ts does not exist")
	})
	t.Logf("the missing file's diagnostic:\n%s", diag)
	rec.ok(featDiagnostic)
	f.keys("Escape", "0", "f@")
	f.text(":lua vim.lsp.buf.code_action()")
	f.keys("Enter")
	actions := f.wait(t, "the code actions", func(s string) bool { return strings.Contains(s, "Replace with src/login.ts") })
	t.Logf("vim.lsp.buf.code_action():\n%s", actions)
	f.keys("1", "Enter")
	f.wait(t, "the fixed line", func(s string) bool {
		return strings.Contains(s, "See @src/login.ts now.") && !strings.Contains(s, "Replace with")
	})
	f.wait(t, "no diagnostic left", func(s string) bool {
		for _, l := range strings.Split(s, "\n") {
			if strings.Contains(l, "See @src/login.ts now.") {
				return !strings.HasPrefix(l, "W ") && !strings.Contains(l, "■")
			}
		}
		return false
	})
	if got := f.echo(t, "DIAGS", "#vim.diagnostic.get(0)"); got != "0" {
		t.Errorf("after the fix the buffer has %s diagnostics, want 0", got)
	}
	rec.ok(featQuickFix)

	directoryFactsFlow(t, f)
	rec.ok(featDirFacts)

	continueFlow(t, f)
	rec.ok(featContinue)

	// Go to definition (gd) on the session mention: its recall preview.
	f.text(":2")
	f.keys("Enter", "0", "f[", "g", "d")
	preview := f.wait(t, "the recall preview", func(s string) bool {
		return strings.Contains(s, "**"+rateSession+"**") && strings.Contains(s, "messages kept")
	})
	t.Logf("gd on the mention:\n%s", preview)
	if got := f.echo(t, "PREVIEW", "vim.bo.buftype .. ',' .. tostring(vim.bo.modifiable) .. ',' .. #vim.diagnostic.get(0)"); got != "nofile,false,0" {
		t.Errorf("the preview is not a read-only, undiagnosed scratch buffer: %s", got)
	}
	rec.ok(featPreview)
	f.text(":only | buffer message.md")
	f.keys("Enter")
	f.wait(t, "back in the message", func(s string) bool { return strings.Contains(s, "See @src/login.ts now.") })

	// :DshPrepare: the message with its <referenced-sessions> context.
	f.text(":DshPrepare")
	f.keys("Enter")
	prepared := f.wait(t, "the prepared message", func(s string) bool {
		return strings.Contains(s, "<referenced-sessions>") && strings.Contains(s, "dsh://prepared/")
	})
	t.Logf(":DshPrepare:\n%s", prepared)
	rec.ok(featPrepare)
	f.text(":only | buffer message.md")
	f.keys("Enter")

	// :DshStatus: the index facts.
	f.text(":DshStatus")
	f.keys("Enter")
	status := f.wait(t, "the index status", func(s string) bool {
		return strings.Contains(s, "# dsh-refls index status") && strings.Contains(s, "- sessionsIndexed: 9")
	})
	t.Logf(":DshStatus:\n%s", status)
	root := fmt.Sprintf("vim.fn.search('^- sessionsRoot: %s$', 'n')", d.root)
	if got := f.echo(t, "ROOTLINE", root); got == "0" {
		t.Errorf("the status does not give the sessions root %s:\n%s", d.root, status)
	}
	rec.ok(featStatus)
	f.text(":only | buffer message.md")
	f.keys("Enter")

	// The session scopes: @all: lists the hidden subagent child.
	f.scopeFlow(t, how)
	rec.ok(featScopes)
	f.text(":only | buffer message.md")
	f.keys("Enter")

	// :DshSearch, <CR> on a match: the preview at the hit's message.
	f.searchHitFlow(t)
	rec.ok(featSearchHit)
	f.text(":only | buffer message.md")
	f.keys("Enter")

	// :checkhealth dsh_refls: no error on a working setup.
	f.text(":checkhealth dsh_refls")
	f.keys("Enter")
	health := f.wait(t, "the health report", func(s string) bool {
		return strings.Contains(s, "dsh_refls: running servers") && strings.Contains(s, "root "+d.workspace)
	})
	t.Logf(":checkhealth dsh_refls:\n%s", health)
	if strings.Contains(health, "ERROR") || strings.Contains(health, "WARNING") {
		t.Errorf("the health report warns or has an error:\n%s", health)
	}

	// Quitting ends the server, and its log stayed out of Neovim's.
	f.quit(t)
	for _, p := range []string{".local/state/nvim/lsp.log", ".cache/nvim/lsp.log"} {
		if data, err := os.ReadFile(f.hostHome + "/" + p); err == nil && strings.Contains(string(data), "[ERROR]") {
			t.Errorf("Neovim's LSP log ~/%s has [ERROR] lines:\n%s", p, data)
		}
	}
}

// TestNeovim012RanksAMovedSession: a session whose header names another
// project but which dsh 0.2.1 moved into this workspace
// (working-directory/change) is this workspace's: at "@" it is the first
// row, the newest of this workspace's sessions, in Neovim 0.12's own
// completion (vim.lsp.enable, the docs' snippet); its header alone would
// put it after every session of this workspace.
func TestNeovim012RanksAMovedSession(t *testing.T) {
	place := sidPlace(t)
	f := startFreshNvim(t, place, snippetLspEnable, writeMovedSession(t, 10*time.Minute))
	f.openMenu(t, nvimCompletion{autotrigger: true}, "See @")
	screen := f.wait(t, "the menu at @ with the moved session", func(s string) bool {
		rows, _ := menuRows(s, "See @")
		return rowWith(rows, movedTitle) >= 0 && rowWith(rows, f.demo.session.DisplayTitle) >= 0
	})
	rows, _ := menuRows(screen, "See @")
	t.Logf("the menu at @:\n%s", strings.Join(rows, "\n"))
	if len(rows) == 0 || !strings.Contains(rows[0], movedTitle) || !strings.Contains(rows[0], "workspace") {
		t.Errorf("the first row at @ is not %q in this workspace (its directory, workspace, beside it):\n%s", movedTitle, strings.Join(rows, "\n"))
	}
	f.quit(t)
}

// TestMenuRowsFindsTheMenu: menuRows reads the menu under the "@", and
// under it two columns off, as Neovim 0.7 leaves it when the sign column
// goes away under an open menu, or as far the other way.
func TestMenuRowsFindsTheMenu(t *testing.T) {
	for _, tc := range []struct {
		name, screen string
		want         []string
	}{
		{"under the @", "  File: @rate\n        rate limiter  s\n        rate table    s\n~\n", []string{"rate limiter  s", "rate table    s"}},
		{"two columns right", "File: @rate\n        rate limiter  s\n        rate table    s\n~\n", []string{"rate limiter  s", "rate table    s"}},
		{"two columns left", "    File: @rate\n        rate limiter  s\n~\n", []string{"rate limiter  s"}},
		{"no menu", "  File: @rate\n~\n~\n", nil},
	} {
		rows, ok := menuRows(tc.screen, "File: @rate")
		if !ok || strings.Join(rows, "|") != strings.Join(tc.want, "|") {
			t.Errorf("%s: menuRows = %q, %v; want %q", tc.name, rows, ok, tc.want)
		}
	}
}
