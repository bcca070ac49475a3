package editors

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"
)

// helixRow is one row of Helix's completion menu on the screen: the label
// (words one space apart), spaces (one after the longest label), then the
// kind Helix prints for the item's kind, then a space, the scroll bar or
// the end of the line.
var helixRow = regexp.MustCompile(`(\S+(?: \S+)*) +(?:reference|file|folder)(?: |▐|$)`)

// helixMenu is the labels of the completion menu's rows on a Helix screen,
// top to bottom.
func helixMenu(screen string) []string {
	var rows []string
	for _, line := range strings.Split(screen, "\n") {
		if m := helixRow.FindStringSubmatch(line); m != nil {
			rows = append(rows, m[1])
		}
	}
	return rows
}

// helixScreen is Helix in tmux, as the account's user.
type helixScreen struct {
	*sidAccount
}

// keys sends tmux key names (Enter, Escape, Space, C-n …).
func (h helixScreen) keys(keys ...string) {
	h.tmux.run(append([]string{"send-keys", "-t", "dsh"}, keys...)...)
}

// text types s literally.
func (h helixScreen) text(s string) { h.tmux.run("send-keys", "-t", "dsh", "-l", "--", s) }

// wait captures the screen until ok accepts it.
func (h helixScreen) wait(t *testing.T, what string, ok func(string) bool) string {
	t.Helper()
	return waitMenu(t, h.tmux, what, ok)
}

// normal leaves Insert mode or closes a popup, and waits for Normal mode.
// Escape goes alone: Helix reads Escape and a key right after it as Alt
// and that key.
func (h helixScreen) normal(t *testing.T) {
	t.Helper()
	h.keys("Escape")
	h.wait(t, "Normal mode", func(s string) bool { return strings.Contains(s, " NOR ") })
}

// command runs a typable command (":w", ":sh …") from Normal mode.
func (h helixScreen) command(cmd string) {
	h.text(cmd)
	h.keys("Enter")
}

// menuFor leaves Insert mode, re-enters it where it was (Escape leaves the
// cursor on the end of the line, i inserts before it) and asks
// for completion (C-x): the menu then holds the one answer to the token
// before the cursor, never a list of an earlier keystroke that Helix
// filters while the next answer is on its way. It waits for a menu that
// holds every label of want and returns its rows.
func (h helixScreen) menuFor(t *testing.T, want ...string) []string {
	t.Helper()
	h.normal(t)
	h.keys("i")
	h.wait(t, "Insert mode", func(s string) bool { return strings.Contains(s, " INS ") })
	h.keys("C-x")
	var rows []string
	h.wait(t, "the menu with "+strings.Join(want, ", "), func(s string) bool {
		rows = helixMenu(s)
		for _, w := range want {
			if indexOf(rows, w) < 0 {
				return false
			}
		}
		return true
	})
	return rows
}

// choose moves down the menu (C-n) until the line that starts with
// prefix shows want, the entry's text that Helix previews in the line as
// an entry is selected, then takes it (Enter). Choosing by what the line
// shows, not by a row number, holds even when a later answer reorders the
// menu.
func (h helixScreen) choose(t *testing.T, prefix, want string) {
	t.Helper()
	prev := helixLine(h.screen(), prefix)
	for range 20 {
		h.keys("C-n")
		s := h.wait(t, "the next entry previewed in the line", func(s string) bool { return helixLine(s, prefix) != prev })
		prev = helixLine(s, prefix)
		if prev == prefix+want {
			h.keys("Enter")
			h.wait(t, "the entry taken", func(s string) bool {
				return helixLine(s, prefix) == prefix+want && len(helixMenu(s)) == 0
			})
			return
		}
	}
	t.Fatalf("no menu entry puts %q in the line:\n%s", want, h.screen())
}

// helixLine is the text of the first line of the buffer on the screen that
// starts with prefix (after the line number), or "".
func helixLine(screen, prefix string) string {
	for _, line := range strings.Split(screen, "\n") {
		if _, text, ok := strings.Cut(line, "  "+prefix); ok && strings.TrimSpace(line[:strings.Index(line, "  "+prefix)]) != "" {
			text, _, _ = strings.Cut(text, "  ")
			return prefix + text
		}
	}
	return ""
}

func indexOf(rows []string, s string) int {
	for i, r := range rows {
		if r == s {
			return i
		}
	}
	return -1
}

// TestHelixScreen runs Helix 25 from the Debian sid chroot in tmux, as a
// user with a fresh account whose ~/.config/helix/languages.toml is the
// recipe of docs/editors.md as it is, on the demo store at
// ~/.dsh/sessions: typing @ opens the menu (timed); @rate lists the
// rate-limiting session and design notes/rate plan.md first and not the
// session that says "half-migrated"; accepting them inserts the canonical
// mention and @"design notes/rate plan.md"; space k shows the recall
// facts; @src/logn.ts gets a warning whose quick fix (space a) replaces
// it; gd on a session mention, which Helix cannot open, and the shell
// commands docs/editors.md gives for prepare and status. -v prints the
// screens.
func TestHelixScreen(t *testing.T) {
	c := lookSid(t)
	pkg := c.version(t, "hx")
	a := newSidAccount(t, c)
	version := c.output(t, "hx", "--version")
	t.Logf("%s (Debian package hx %s)", version, pkg)
	rec := recordFeatures(t, "Helix", strings.TrimPrefix(version, "helix "))
	recipe := docBlock(t, "<!-- test: helix -->")
	a.write(t, map[string]string{"~/.config/helix/languages.toml": recipe})
	shell := strings.Split(strings.TrimSpace(docBlock(t, "<!-- test: helix-shell -->")), "\n")
	if len(shell) != 2 {
		t.Fatalf("the Helix shell commands of docs/editors.md are not two lines (prepare, status): %q", shell)
	}
	// The account's dsh session, which the prepare command names.
	a.env = append(a.env, "DSH_SESSION_ID=a1b2c3d4-new-session")
	h := helixScreen{a}
	h.start(t, "hx", "message.md")
	logFile := "~/.cache/dsh-refls.log"
	// The body index is in once it is saved: completion's answers do not
	// change under the test after that.
	h.waitLog(t, logFile, "session index built", "recall index saved")
	h.wait(t, "Helix on message.md", func(s string) bool { return strings.Contains(s, "message.md") && strings.Contains(s, " NOR ") })

	// The menu at "@": opened by the trigger character as it is typed.
	h.keys("g", "e", "o")
	h.text("See ")
	h.wait(t, "the typed text", func(s string) bool { return strings.Contains(s, "  See\n") && strings.Contains(s, " INS ") })
	start := time.Now()
	h.text("@")
	at := h.wait(t, "the menu at @", func(s string) bool {
		rows := helixMenu(s)
		// Ten rows show: the sessions, then the first folder.
		return indexOf(rows, demoSessionTitle) >= 0 && indexOf(rows, "design notes/") >= 0
	})
	took := time.Since(start)
	rec.menuTime(took)
	t.Logf("the menu at @ (%v from the keystroke, tmux capture every %v):\n%s", took.Round(time.Millisecond), menuPoll, at)
	if strings.Contains(at, "dist/") {
		t.Errorf("the menu offers dist/, which .gitignore hides:\n%s", at)
	}
	rec.ok(featMenu)

	// "@rate" as typed (Helix filters the list it has until the answer
	// to the last keystroke comes), then its one answer (C-x) for the
	// order.
	h.text("rate")
	typed := h.wait(t, "the menu after typing @rate", func(s string) bool {
		rows := helixMenu(s)
		return strings.Contains(s, "See @rate") && indexOf(rows, rateSession) >= 0 && indexOf(rows, rateFile) >= 0
	})
	t.Logf("the menu as rate is typed:\n%s", typed)
	rows := h.menuFor(t, rateSession, rateFile)
	t.Logf("@rate, C-x: %q", rows)
	// A wrong order is reported when the test ends, so that the flows
	// after it, which do not depend on it, are still recorded.
	var narrowErrs []string
	if len(rows) < 2 || rows[0] != rateSession || rows[1] != rateFile {
		narrowErrs = append(narrowErrs, fmt.Sprintf("Helix lists for @rate %q; want %q then %q first", rows, rateSession, rateFile))
	}
	if i := indexOf(rows, "Migration plan for the billing database"); i >= 0 {
		narrowErrs = append(narrowErrs, fmt.Sprintf("@rate lists the session that only says half-migrated, row %d: %q", i+1, rows))
	}
	if len(narrowErrs) == 0 {
		rec.ok(featNarrow)
	}
	defer func() {
		for _, e := range narrowErrs {
			t.Error(e)
		}
	}()

	// Accept the session: its canonical mention replaces "@rate".
	mention := sessionMention(t, rateSession, demoSessionID(t, rateSession))
	h.choose(t, "See ", mention)
	rec.ok(featAcceptSession)

	// Accept the file with a space: quoted.
	h.normal(t)
	h.keys("o")
	h.text("File: @rate")
	h.menuFor(t, rateFile)
	h.choose(t, "File: ", `@"design notes/rate plan.md"`)
	t.Logf("after accepting the session and the file:\n%s", h.screen())
	rec.ok(featAcceptFile)

	// Hover (space k) on the session mention: the recall facts.
	h.normal(t)
	h.keys("/")
	h.text("limiting")
	h.keys("Enter", "Space", "k")
	hover := h.wait(t, "the hover", func(s string) bool {
		return strings.Contains(s, demoSessionID(t, rateSession)) && strings.Contains(s, "messages kept")
	})
	t.Logf("space k on the mention:\n%s", hover)
	rec.ok(featHover)
	h.normal(t)

	// A missing file: the warning under the line, then the quick fix.
	h.keys("g", "e", "o")
	h.text("See @src/logn.ts now.")
	h.normal(t)
	warned := h.wait(t, "the missing-file diagnostic", func(s string) bool {
		return strings.Contains(s, "See @src/logn.ts now.") && strings.Contains(s, "src/logn.ts does not exist")
	})
	t.Logf("the missing file's diagnostic:\n%s", warned)
	rec.ok(featDiagnostic)
	h.keys("/")
	h.text("logn")
	h.keys("Enter", "Space", "a")
	actions := h.wait(t, "the code actions", func(s string) bool { return strings.Contains(s, "Replace with src/login.ts") })
	t.Logf("space a on the mention:\n%s", actions)
	h.keys("Enter")
	fixed := h.wait(t, "the applied fix", func(s string) bool {
		return strings.Contains(s, "See @src/login.ts now.") && !strings.Contains(s, "does not exist")
	})
	t.Logf("after the quick fix:\n%s", fixed)
	rec.ok(featQuickFix)

	// gd on a session mention: the server answers its dsh-refls: preview
	// URI, which Helix does not open.
	h.keys("/")
	h.text("limiting")
	h.keys("Enter", "g", "d")
	h.wait(t, "gd's answer", func(s string) bool { return strings.Contains(s, "No definition found.") })
	helixLog, _ := os.ReadFile(a.hostPath("~/.cache/helix/helix.log"))
	discarded := "discarding invalid or unsupported URI: unsupported scheme 'dsh-refls'"
	if !strings.Contains(string(helixLog), discarded) {
		t.Errorf("helix.log does not say why gd found nothing (%q):\n%s", discarded, helixLog)
	}
	rec.note(featPreview, "gd says \"No definition found.\": Helix 25.07 opens only file: URIs and drops the server's "+
		"dsh-refls:/session/… preview (helix.log: \""+discarded+"\"); space k shows the recall facts and an excerpt")

	// Prepare and status: no custom commands in Helix; the shell commands
	// of docs/editors.md show the CLI's answers in a popup.
	h.command(":w")
	h.wait(t, "the saved message", func(s string) bool { return strings.Contains(s, "written") })
	h.command(shell[0])
	prepared := h.wait(t, "the prepared message", func(s string) bool {
		return strings.Contains(s, `"content": "Please review the login fix:\nSee @Add rate limiting to the API\n`) &&
			strings.Contains(s, `"additionalContext"`)
	})
	t.Logf("%s:\n%s", shell[0], prepared)
	rec.note(featPrepare, "no custom commands in Helix: "+shell[0]+" shows dsh-refls prepare's JSON (content, references, additionalContext) in a popup")
	h.normal(t)
	h.command(shell[1])
	status := h.wait(t, "the index facts", func(s string) bool {
		return strings.Contains(s, `"root": "`+a.demo.root+`"`) && strings.Contains(s, fmt.Sprintf(`"sessionsIndexed": %d,`, len(demoFacts(t))))
	})
	t.Logf("%s:\n%s", shell[1], status)
	rec.note(featStatus, "no custom commands in Helix: "+shell[1]+" shows the session index facts (root, sessions, skipped) in a popup")
	for _, f := range []string{featFrecency, featScopes, featDirFacts} {
		rec.note(f, "not driven in Helix")
	}
	rec.note(featSearchHit, "no custom commands in Helix: dsh/search has no place in it")
	rec.note(featContinue, "no custom commands in Helix, and a code action's command runs on the server, which cannot open a new buffer in it")
	h.normal(t)
	h.command(":q!")
}
