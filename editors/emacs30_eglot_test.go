package editors

import (
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// emacs30Setup is one way docs/editors.md has an Emacs user set eglot up.
type emacs30Setup struct {
	editor string // the feature record's name
	marker string // the docs/editors.md line before the init.el block
	lib    bool   // whether the block loads editors/emacs/dsh-refls.el
}

// TestEmacs30DshReflsEl runs Emacs 30 (built-in eglot) from the Debian sid
// chroot with the init.el that docs/editors.md gives for dsh-refls.el, in
// a fresh account; see runEmacs30 for the flows. -v prints the screens.
func TestEmacs30DshReflsEl(t *testing.T) {
	runEmacs30(t, emacs30Setup{editor: "Emacs 30 eglot + dsh-refls.el", marker: "<!-- test: emacs-dsh-refls -->", lib: true})
}

// TestEmacs30PlainEglot is TestEmacs30DshReflsEl with the plain-eglot lines
// of docs/editors.md (no dsh-refls.el): no prepare or status command, and
// M-. on a session mention visits a file buffer named after the preview
// URI, which the record notes.
func TestEmacs30PlainEglot(t *testing.T) {
	runEmacs30(t, emacs30Setup{editor: "Emacs 30 plain eglot", marker: "<!-- test: emacs-plain-eglot -->"})
}

// runEmacs30 starts `emacs -nw message.md` as a user whose ~/.emacs.d/init.el
// is the block of docs/editors.md after setup.marker, as it is (the
// dsh-refls.el it loads is at ~/src/dsh-refls/editors/emacs, the path the
// block names; the chroot's site-lisp and its markdown-mode load as for any
// user), and drives it in tmux: the Markdown buffer's TAB is markdown-mode's
// and M-TAB completes; M-TAB after "@" lists sessions and files
// (timed); after "@rate" *Completions* starts with the rate-limiting session
// and design notes/rate plan.md (timed) and does not list the session that
// says "half-migrated"; M-<down> and M-RET take the session (its canonical
// mention) and the file (@"design notes/rate plan.md"); eldoc's buffer shows
// the recall facts; @src/logn.ts gets a Flymake warning and
// eglot-code-actions fixes it; M-. on the mention; dsh-refls-prepare and
// dsh-refls-status with dsh-refls.el.
func runEmacs30(t *testing.T, setup emacs30Setup) {
	c := lookSid(t)
	pkg := c.version(t, "emacs-nox")
	c.version(t, "elpa-markdown-mode")
	a := newSidAccount(t, c)
	out := c.output(t, "emacs", "-Q", "--batch", "--eval",
		`(progn (require 'lisp-mnt) (princ (format "%s %s" emacs-version (with-temp-buffer (insert-file-contents (locate-library "eglot.el")) (lm-version)))))`)
	version, eglotVersion, _ := strings.Cut(out, " ")
	t.Logf("Emacs %s, eglot %s (Debian package emacs-nox %s)", version, eglotVersion, pkg)
	rec := recordFeatures(t, setup.editor, version+" (eglot "+eglotVersion+")")

	a.write(t, map[string]string{"~/.emacs.d/init.el": docBlock(t, setup.marker)})
	if setup.lib {
		lib, err := os.ReadFile(filepath.Join(repoRoot(t), "editors", "emacs", "dsh-refls.el"))
		if err != nil {
			t.Fatal(err)
		}
		a.write(t, map[string]string{"~/src/dsh-refls/editors/emacs/dsh-refls.el": string(lib)})
	}
	a.start(t, "emacs", "-nw", "message.md")
	// The log file dsh-refls.el names by default, and the plain lines too:
	// its directory did not exist (newSidAccount), the server makes it.
	logFile := "~/.cache/dsh-refls.log"
	a.waitLog(t, logFile, "session index built", "recall index saved")
	e := &emacsScreen{tmux: a.tmux, demo: a.demo}
	started := e.wait(t, "eglot managing the Markdown buffer", func(s string) bool {
		return strings.Contains(s, "(Markdown") && strings.Contains(s, "[eglot:workspace]")
	})
	t.Logf("Emacs on message.md:\n%s", started)
	// TAB is markdown-mode's; M-TAB completes.
	keys := `(list major-mode (key-binding (kbd "TAB")) (key-binding (kbd "M-TAB")))`
	if got := e.eval(t, keys); got != "(markdown-mode markdown-cycle completion-at-point)" {
		t.Errorf("%s is %s, want (markdown-mode markdown-cycle completion-at-point)", keys, got)
	}

	// M-TAB after "@": the sessions, then the files.
	e.keys("M->", "Enter")
	e.text("See @")
	e.wait(t, "the typed @", func(s string) bool { return strings.Contains(s, "See @\n") })
	start := time.Now()
	e.keys("M-Tab")
	at := e.wait(t, "*Completions* at @", func(s string) bool {
		entries := completionEntries(s)
		return entryIndex(entries, demoSessionTitle) >= 0 && entryIndex(entries, demoFile) >= 0
	})
	took := time.Since(start)
	rec.menuTime(took)
	t.Logf("M-TAB after @ (%v from the keystroke, tmux capture every %v):\n%s", took.Round(time.Millisecond), menuPoll, at)
	if strings.Contains(at, "dist/") {
		t.Errorf("*Completions* offers dist/, which .gitignore hides:\n%s", at)
	}
	rec.ok(featMenu)

	// "@rate", M-TAB: the session and the file first. A wrong order is
	// reported when the test ends, so that the flows after it, which do
	// not depend on it, are still recorded.
	entries := e.completeRate(t, rec)
	var narrowErrs []string
	if entryIndex(entries, rateSession) != 0 || entryIndex(entries, rateFile) != 1 {
		narrowErrs = append(narrowErrs, fmt.Sprintf("*Completions* for @rate lists %q; want %q then %q first", entries, rateSession, rateFile))
	}
	if i := entryIndex(entries, "Migration plan for the billing database"); i >= 0 {
		narrowErrs = append(narrowErrs, fmt.Sprintf("@rate lists the session that only says half-migrated, entry %d: %q", i+1, entries))
	}
	if len(narrowErrs) == 0 {
		rec.ok(featNarrow)
	}
	defer func() {
		for _, msg := range narrowErrs {
			t.Error(msg)
		}
	}()

	// M-<down> to the session's entry, M-RET: its canonical mention.
	mention := sessionMention(t, rateSession, demoSessionID(t, rateSession))
	e.choose(entries, rateSession)
	e.wait(t, "the accepted session", func(s string) bool { return strings.Contains(s, "See "+mention) })
	rec.ok(featAcceptSession)

	// The file with a space: quoted.
	e.keys("C-e", "Enter")
	e.text("File: @rate")
	e.wait(t, "the typed File: @rate", func(s string) bool { return strings.Contains(s, "File: @rate\n") })
	e.keys("M-Tab")
	e.wait(t, "*Completions* for the file", func(s string) bool {
		entries = completionEntries(s)
		return entryIndex(entries, rateFile) >= 0
	})
	e.choose(entries, rateFile)
	accepted := e.wait(t, "the accepted file", func(s string) bool { return strings.Contains(s, `File: @"design notes/rate plan.md"`) })
	t.Logf("after accepting the session and the file:\n%s", accepted)
	rec.ok(featAcceptFile)

	// Frecency: eglot runs no item commands; the server counted both
	// accepts by their edits, once each.
	driveEmacsFrecency(t, e, setup.lib, completionEntries(at))
	rec.ok(featFrecency)
	for _, f := range []string{featScopes, featDirFacts} {
		rec.note(f, "not driven in Emacs 30; the Emacs 28 row with dsh-refls.el drives it through eglot 1.9")
	}

	e.eglotFlows(t, rec, setup.lib, a.demo.workspace, "message.md", eglotVersion)

	// Prepare and status.
	if !setup.lib {
		rec.note(featPrepare, "no command without dsh-refls.el")
		rec.note(featStatus, "no command without dsh-refls.el")
		return
	}
	e.keys("M-x")
	e.text("dsh-refls-prepare")
	e.keys("Enter")
	prepared := e.wait(t, "the prepared message", func(s string) bool {
		return strings.Contains(s, "*dsh-refls prepared*") && strings.Contains(s, "See @"+rateSession+"\n") &&
			strings.Contains(s, "# Context (sent as a separate user message)")
	})
	t.Logf("M-x dsh-refls-prepare:\n%s", prepared)
	if got := e.eval(t, "(list buffer-read-only buffer-file-name (buffer-modified-p))"); got != "(t nil nil)" {
		t.Fatalf("the prepared buffer is not read-only, file-less and unmodified: %s", got)
	}
	rec.ok(featPrepare)
	e.keys("M-x")
	e.text("dsh-refls-status")
	e.keys("Enter")
	status := e.wait(t, "the status buffer", func(s string) bool {
		return strings.Contains(s, "*dsh-refls status*") && strings.Contains(s, "# dsh-refls index status") &&
			strings.Contains(s, "- sessionsRoot: "+a.demo.root)
	})
	t.Logf("M-x dsh-refls-status:\n%s", status)
	rec.ok(featStatus)
}

// eglotFlows drives what eglot does by itself, in the message buffer
// (named message) that holds a mention of the rate-limiting session and
// lines starting "File: @": eldoc's buffer on the mention shows the recall
// facts; @src/logn.ts gets a Flymake warning and eglot-code-actions fixes
// it; M-. on the mention opens its preview with dsh-refls.el (lib), and
// without it visits an empty buffer of a file under workspace named after
// the preview URI, which the record notes. It returns in the message.
func (e *emacsScreen) eglotFlows(t *testing.T, rec *featureRun, lib bool, workspace, message, eglotVersion string) {
	t.Helper()
	// Hover: eldoc, all of it in eldoc's buffer.
	e.keys("M-<", "C-s")
	e.text("limiting")
	// A motion command after the search: eldoc 1.11 (Emacs 28) asks only
	// after one.
	e.keys("Enter", "C-b")
	// The echo area (below the last mode line) shows the hover once eldoc
	// has asked; eldoc's buffer exists from then on.
	inEcho := func(s string) bool { return strings.Contains(echoArea(s), rateSession) }
	echo, shown := e.waitUpTo(5*time.Second, inEcho)
	if !shown {
		// eldoc's idle timer once never showed it (Emacs 30, a CI run
		// under load, the echo area empty for the whole wait): ask as
		// a person would, with M-x eldoc.
		t.Logf("no hover in the echo area after 5 s; M-x eldoc:\n%s", echo)
		e.keys("M-x")
		e.text("eldoc")
		e.keys("Enter")
		echo = e.wait(t, "the hover in the echo area", inEcho)
	}
	t.Logf("eldoc on the session mention:\n%s", echo)
	e.keys("M-x")
	e.text("eldoc-doc-buffer")
	e.keys("Enter")
	hover := e.wait(t, "the hover in eldoc's buffer", func(s string) bool {
		return strings.Contains(s, "*eldoc") && strings.Contains(s, demoSessionID(t, rateSession)) && strings.Contains(s, "messages kept")
	})
	t.Logf("eldoc on the session mention (M-x eldoc-doc-buffer):\n%s", hover)
	rec.ok(featHover)
	e.keys("C-x", "1")

	// A missing file: Flymake's warning, then the quick fix.
	e.keys("M->", "Enter")
	e.missingFileAndFix(t, rec, "Replace with src/login.ts")

	// M-. on the session mention.
	e.keys("M-<", "C-s")
	e.text("limiting")
	e.keys("Enter", "M-.")
	if lib {
		preview := e.wait(t, "the preview from M-.", func(s string) bool {
			return strings.Contains(s, "*dsh-refls preview: "+rateSession+"*") && strings.Contains(s, "messages kept")
		})
		t.Logf("M-. on the mention:\n%s", preview)
		if got := e.eval(t, "(list buffer-read-only buffer-file-name (buffer-modified-p) (eglot-managed-p))"); got != "(t nil nil nil)" {
			t.Fatalf("the preview is not read-only, file-less, unmodified and unmanaged: %s", got)
		}
		rec.ok(featPreview)
	} else {
		// The buffer is named after the URI's last part: the title and
		// ".md", its spaces as %20 or not.
		visited := e.wait(t, "what M-. opens", func(s string) bool {
			return strings.Contains(s, "Add%20rate%20limiting%20to%20the%20API.md") || strings.Contains(s, "Add rate limiting to the API.md ")
		})
		t.Logf("M-. on the mention:\n%s", visited)
		// M-: prints a string with its quotes.
		file := strings.Trim(e.eval(t, "buffer-file-name"), `\"`)
		size := e.eval(t, "(buffer-size)")
		id := base64.RawURLEncoding.EncodeToString([]byte(`"` + demoSessionID(t, rateSession) + `"`))
		if !strings.Contains(file, "/session/"+id+"/") || size != "0" {
			t.Fatalf("M-. visits %s (%s bytes), want an empty buffer of a file named after the preview URI", file, size)
		}
		shown := strings.NewReplacer(workspace, "<workspace>", id, "<id>").Replace(file)
		rec.note(featPreview, "M-. visits an empty buffer of the file "+shown+": eglot "+
			eglotVersion+" reads the server's dsh-refls: preview URI as a file path; dsh-refls.el opens the preview")
	}
	e.keys("C-x", "b")
	e.text(message)
	e.keys("Enter")
	e.wait(t, "back in the message", func(s string) bool { return strings.Contains(s, message) && strings.Contains(s, "File: @") })
	if lib {
		// Continue from the rate session, point still in its mention.
		e.continueFlow(t, demoSession(t, rateSession), func() {
			e.keys("C-x", "b")
			e.text(message)
			e.keys("Enter")
			e.wait(t, "back in the message", func(s string) bool { return strings.Contains(s, message) && strings.Contains(s, "File: @") })
		})
		rec.ok(featContinue)
		rec.note(featSearchHit, "not driven in Emacs 30; the Emacs 28 row drives dsh-refls-search with the same dsh-refls.el")
	} else {
		rec.note(featContinue, "no command without dsh-refls.el")
		rec.note(featSearchHit, "no command without dsh-refls.el")
	}
}

// echoArea is what an Emacs screen shows below its last mode line (a line
// that starts "-U", the coding systems): the echo area.
func echoArea(screen string) string {
	lines := strings.Split(screen, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.HasPrefix(lines[i], "-U") {
			return strings.Join(lines[i+1:], "\n")
		}
	}
	return ""
}

// completeRate types "rate" after the "See @" being typed, presses M-TAB
// and waits until *Completions* lists the rate-limiting session and the
// rate plan; it records the time from the keystroke and returns the
// entries in their order.
func (e *emacsScreen) completeRate(t *testing.T, rec *featureRun) []string {
	t.Helper()
	e.text("rate")
	e.wait(t, "the typed @rate", func(s string) bool { return strings.Contains(s, "See @rate\n") })
	start := time.Now()
	e.keys("M-Tab")
	var entries []string
	list := e.wait(t, "*Completions* for @rate", func(s string) bool {
		entries = completionEntries(s)
		return entryIndex(entries, rateSession) >= 0 && entryIndex(entries, rateFile) >= 0
	})
	took := time.Since(start)
	rec.menuTime(took)
	t.Logf("M-TAB after @rate (%v from the keystroke):\n%s", took.Round(time.Millisecond), list)
	return entries
}

// choose takes the entry of *Completions* that starts with label, as an
// Emacs 30 user does from the buffer: M-<down> to it, M-RET.
func (e *emacsScreen) choose(entries []string, label string) {
	for range entryIndex(entries, label) + 1 {
		e.keys("M-Down")
	}
	e.keys("M-Enter")
}

// completionEntries are the entries of the *Completions* list on an Emacs
// screen, in the order the list lays them out (row by row, its columns
// apart by two spaces or more), each with its annotation.
func completionEntries(screen string) []string {
	var entries []string
	in := false
	for _, line := range strings.Split(screen, "\n") {
		switch {
		case strings.Contains(line, "possible completions:") || strings.Contains(line, "Possible completions are:"):
			in = true
		case in && strings.Contains(line, "*Completions*"):
			return entries
		case in:
			for _, e := range columnGap.Split(strings.TrimSpace(line), -1) {
				if e != "" {
					entries = append(entries, e)
				}
			}
		}
	}
	return entries
}

// columnGap is the space between two columns of a list on the screen.
var columnGap = regexp.MustCompile(` {2,}`)

// entryIndex is the index of the first entry that starts with label, or -1.
func entryIndex(entries []string, label string) int {
	for i, e := range entries {
		if e == label || strings.HasPrefix(e, label+" ") {
			return i
		}
	}
	return -1
}
