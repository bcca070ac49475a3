package editors

import (
	"fmt"
	"maps"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// lookEglot returns emacs and the directory of Debian's eglot package, or
// skips the test with the reason.
func lookEglot(t *testing.T) (string, string) {
	t.Helper()
	emacs, err := exec.LookPath("emacs")
	if err != nil {
		t.Skip("emacs is not on PATH; install it (apt-get install -y emacs-nox elpa-eglot) to run the Emacs test")
	}
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not on PATH; install it (apt-get install -y tmux) to drive Emacs in a terminal")
	}
	dirs, _ := filepath.Glob("/usr/share/emacs/site-lisp/elpa/eglot-*")
	if len(dirs) == 0 {
		t.Skip("eglot is not installed; Emacs 28 needs Debian's elpa-eglot (apt-get install -y elpa-eglot)")
	}
	return emacs, dirs[len(dirs)-1]
}

// TestEmacsEglotScreen runs Emacs with eglot and editors/emacs/dsh-refls.el
// in tmux on the demo store: it opens a prompt, types "@" and completes
// with M-TAB (completion-at-point, as docs/editors.md binds it), then
// "@rate": *Completions* starts with the rate-limiting session and the
// nested file (the server's order) and does not list the session that says
// "half-migrated"; it times keystroke to list, accepts the session and the
// file with a space, then runs dsh-refls-prepare and dsh-refls-status and
// checks their buffers are read-only and visit no file. -v prints the
// screens.
func TestEmacsEglotScreen(t *testing.T) {
	// Emacs mostly waits on its screen: it runs beside the VS Code test.
	t.Parallel()
	e := startEmacsScreen(t, "", nil)
	rec := recordEmacs28(t)
	tmux := e.tmux
	tmux.run("send-keys", "-t", "dsh", "M->", "Enter", "Rate: @")
	waitMenu(t, tmux, "the typed @", func(s string) bool { return strings.Contains(s, "Rate: @\n") })
	start := time.Now()
	tmux.run("send-keys", "-t", "dsh", "M-Tab")
	at := waitMenu(t, tmux, "the *Completions* list at @", func(s string) bool {
		entries := completionEntries(s)
		return entryIndex(entries, demoSessionTitle) >= 0 && entryIndex(entries, demoFile) >= 0
	})
	took := time.Since(start)
	rec.menuTime(took)
	t.Logf("*Completions* after typing @ and M-TAB (%v from the keystroke, tmux capture every %v):\n%s", took.Round(time.Millisecond), menuPoll, at)
	rec.ok(featMenu)

	tmux.run("send-keys", "-t", "dsh", "rate")
	waitMenu(t, tmux, "the typed @rate", func(s string) bool { return strings.Contains(s, "Rate: @rate") })
	start = time.Now()
	tmux.run("send-keys", "-t", "dsh", "M-Tab")
	var entries []string
	list := waitMenu(t, tmux, "the *Completions* list for @rate", func(s string) bool {
		entries = completionEntries(s)
		return entryIndex(entries, rateSession) >= 0 && entryIndex(entries, rateFile) >= 0
	})
	took = time.Since(start)
	rec.menuTime(took)
	t.Logf("*Completions* after typing @rate and M-TAB:\n%s", list)
	t.Logf("keystroke to list (tmux capture every %v): M-TAB after @rate %v", menuPoll, took.Round(time.Millisecond))
	for _, noise := range []string{"docs/migration.md", demoSessionTitle, "No match"} {
		if strings.Contains(list, noise) {
			t.Errorf("@rate offers %q:\n%s", noise, list)
		}
	}
	// The server's order, which flex would change (it put the file
	// first): *Completions* lays its entries out row by row. A wrong
	// order is reported when the test ends, so that the flows after it,
	// which do not depend on it, are still recorded.
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

	// Accept the session: to the *Completions* window, onto its entry, RET.
	tmux.run("send-keys", "-t", "dsh", "C-x", "o", "C-s", "Add rate", "Enter", "Enter")
	accepted := waitMenu(t, tmux, "the accepted session mention", func(s string) bool {
		return strings.Contains(s, "Rate: @[Add rate limiting to the API](dsh-session:")
	})
	t.Logf("after accepting the session:\n%s", accepted)
	rec.ok(featAcceptSession)

	// The file with a space: quoted.
	tmux.run("send-keys", "-t", "dsh", "C-e", "Enter", "File: @rate")
	waitMenu(t, tmux, "the typed File: @rate", func(s string) bool { return strings.Contains(s, "File: @rate\n") })
	tmux.run("send-keys", "-t", "dsh", "M-Tab")
	waitMenu(t, tmux, "the *Completions* list with the file", func(s string) bool { return entryIndex(completionEntries(s), rateFile) >= 0 })
	tmux.run("send-keys", "-t", "dsh", "C-x", "o", "C-s", "design notes/", "Enter", "Enter")
	file := waitMenu(t, tmux, "the accepted file", func(s string) bool { return strings.Contains(s, `File: @"design notes/rate plan.md"`) })
	t.Logf("after accepting the file:\n%s", file)
	rec.ok(featAcceptFile)

	// dsh-refls-prepare: a read-only buffer visiting no file.
	tmux.run("send-keys", "-t", "dsh", "M-x", "dsh-refls-prepare", "Enter")
	prepared := waitMenu(t, tmux, "the prepared message", func(s string) bool {
		return strings.Contains(s, "*dsh-refls prepared*") && strings.Contains(s, "# Prepared message") &&
			strings.Contains(s, "Rate: @"+rateSession+"\n")
	})
	t.Logf("M-x dsh-refls-prepare:\n%s", prepared)
	tmux.run("send-keys", "-t", "dsh", "M-:", `(message "DSH-RO=%s FILE=%s MOD=%s" buffer-read-only buffer-file-name (buffer-modified-p))`, "Enter")
	ro := waitMenu(t, tmux, "the buffer facts", func(s string) bool { return strings.Contains(s, "DSH-RO=") })
	if !strings.Contains(ro, "DSH-RO=t FILE=nil MOD=nil") {
		t.Errorf("the prepared buffer is not read-only, file-less and unmodified:\n%s", ro)
	}
	rec.ok(featPrepare)

	// dsh-refls-status from that buffer, which has no server of its own.
	tmux.run("send-keys", "-t", "dsh", "M-x", "dsh-refls-status", "Enter")
	status := waitMenu(t, tmux, "the status buffer", func(s string) bool {
		return strings.Contains(s, "*dsh-refls status*") && strings.Contains(s, "# dsh-refls index status")
	})
	t.Logf("M-x dsh-refls-status:\n%s", status)
	rec.ok(featStatus)
	tmux.run("send-keys", "-t", "dsh", "C-x", "C-c")
}

// emacs28Setup is the feature table's name of Emacs 28 with Debian's eglot
// 1.9 and dsh-refls.el, which TestEmacsEglotScreen and TestEmacsFeatures
// drive.
const emacs28Setup = "Emacs 28 eglot 1.9 + dsh-refls.el"

// recordEmacs28 is the feature record of emacs28Setup, shared by its tests.
func recordEmacs28(t *testing.T) *featureRecord {
	t.Helper()
	emacs, eglotDir := lookEglot(t)
	return recordSetup(t, emacs28Setup, emacsVersion(t, emacs)+" (eglot "+strings.TrimPrefix(filepath.Base(eglotDir), "eglot-")+")")
}

// emacsVersion is the version emacs prints first ("28.2").
func emacsVersion(t *testing.T, emacs string) string {
	t.Helper()
	out, err := exec.Command(emacs, "--version").Output()
	if err != nil {
		t.Fatalf("%s --version: %v", emacs, err)
	}
	first, _, _ := strings.Cut(string(out), "\n")
	return strings.TrimPrefix(strings.TrimSpace(first), "GNU Emacs ")
}

// setupRecords holds what the tests of one editor setup recorded in this
// run. Each test writes the setup's one record file when it ends; with
// this, each writes every flow the setup's tests recorded so far, so the
// last one to end writes them all.
var setupRecords struct {
	mu   sync.Mutex
	held map[string]*featureRecord
}

// recordSetup is recordFeatures for a setup that more than one test
// drives: the record a test writes holds the flows, times and notes of
// the setup's tests that ended before it too.
func recordSetup(t *testing.T, editor, version string) *featureRecord {
	t.Helper()
	locked := false
	// Cleanups run last in, first out: the merge, then the write
	// (recordFeatures), then the unlock, so that no other test's merge
	// and write come between.
	t.Cleanup(func() {
		if locked {
			setupRecords.mu.Unlock()
		}
	})
	r := recordFeatures(t, editor, version)
	t.Cleanup(func() {
		setupRecords.mu.Lock()
		locked = true
		if setupRecords.held == nil {
			setupRecords.held = map[string]*featureRecord{}
		}
		held := setupRecords.held[editor]
		if held == nil {
			held = &featureRecord{Notes: map[string]string{}}
			setupRecords.held[editor] = held
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		for _, f := range r.Passed {
			if !slices.Contains(held.Passed, f) {
				held.Passed = append(held.Passed, f)
			}
		}
		held.MenuMs = append(held.MenuMs, r.MenuMs...)
		maps.Copy(held.Notes, r.Notes)
		r.Passed = slices.Clone(held.Passed)
		r.MenuMs = slices.Clone(held.MenuMs)
		r.Notes = maps.Clone(held.Notes)
	})
	return r
}

// inOrder reports whether every string of want occurs in s, each after the
// previous one.
func inOrder(s string, want []string) bool {
	at := 0
	for _, w := range want {
		i := strings.Index(s[at:], w)
		if i < 0 {
			return false
		}
		at += i + len(w)
	}
	return true
}
