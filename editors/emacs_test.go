package editors

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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
func recordEmacs28(t *testing.T) *featureRun {
	t.Helper()
	emacs, eglotDir := lookEglot(t)
	return recordFeatures(t, emacs28Setup, emacsVersion(t, emacs)+" (eglot "+strings.TrimPrefix(filepath.Base(eglotDir), "eglot-")+")")
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

// TestEmacs28PlainEglot runs Emacs 28 with Debian's eglot 1.9 and no
// dsh-refls.el, in tmux, as a user with a fresh home whose
// ~/.emacs.d/init.el is the plain-eglot block of docs/editors.md as it is
// (the server on PATH, the demo store at ~/.dsh/sessions): M-TAB after "@"
// lists sessions and files; after "@rate" *Completions* starts with the
// rate-limiting session and design notes/rate plan.md (the substring
// style keeps the server's order); RET in *Completions* takes the session
// and the file; M-TAB after @rtpl, the server's sole (fuzzy) match,
// inserts @"design notes/rate plan.md"; then eglot's own flows
// (emacsScreen.eglotFlows): eldoc, the diagnostic and its quick fix, M-. The prompt is a .txt file: the host has no
// markdown-mode. -v prints the screens.
func TestEmacs28PlainEglot(t *testing.T) {
	t.Parallel()
	emacs, eglotDir := lookEglot(t)
	bin := buildServer(t)
	rec := recordFeatures(t, "Emacs 28 plain eglot", emacsVersion(t, emacs)+" (eglot "+strings.TrimPrefix(filepath.Base(eglotDir), "eglot-")+")")
	dir := t.TempDir()
	d := newDemoSetup(t, dir)
	home := filepath.Join(dir, "home")
	if err := os.MkdirAll(filepath.Join(home, ".dsh"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(d.root, filepath.Join(home, ".dsh", "sessions")); err != nil {
		t.Fatal(err)
	}
	server, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	writeFiles(t, home, map[string]string{
		".emacs.d/init.el": docBlock(t, "<!-- test: emacs-plain-eglot -->"),
		// Debian's elpa-seq is compiled natively on first use, in the
		// background, and its warnings would split the screen at some
		// moment: not in this new home (a user sees them once).
		".emacs.d/early-init.el": "(setq native-comp-deferred-compilation nil)\n",
	})
	writeFiles(t, d.workspace, map[string]string{"message.txt": "Please review the login fix:\n"})
	binDir := filepath.Join(home, ".local", "bin")
	if err := os.MkdirAll(binDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(binDir, "dsh-refls"), server, 0o755); err != nil {
		t.Fatal(err)
	}
	logFile := filepath.Join(home, ".cache", "dsh-refls.log")
	tmux := tmuxRunner{t: t, socket: filepath.Join(dir, "tmux.sock"),
		env: isolatedEnv(dir, "TERM=xterm-256color", "PATH="+binDir+":"+os.Getenv("PATH"))}
	tmux.run("new-session", "-d", "-s", "dsh", "-x", fmt.Sprint(sidScreenWidth), "-y", fmt.Sprint(sidScreenHeight),
		"-c", d.workspace, emacs, "-nw", "message.txt")
	t.Cleanup(func() {
		cmd := exec.Command("tmux", "-S", tmux.socket, "kill-server")
		cmd.Env = tmux.env
		_ = cmd.Run()
		awaitHomeServersExit(t, home)
	})
	e := &emacsScreen{tmux: tmux, demo: d}
	waitFor(t, "eglot to connect and the session and body indexes to be built", func() (bool, string) {
		data, _ := os.ReadFile(logFile)
		s := e.screen()
		return strings.Contains(string(data), "session index built") && strings.Contains(string(data), "recall index saved") &&
			strings.Contains(s, "[eglot:workspace]"), s + "\n" + string(data)
	})

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
	rec.ok(featMenu)

	entries := e.completeRate(t, rec)
	if entryIndex(entries, rateSession) != 0 || entryIndex(entries, rateFile) != 1 {
		t.Errorf("*Completions* for @rate lists %q; want %q then %q first", entries, rateSession, rateFile)
	}
	if i := entryIndex(entries, "Migration plan for the billing database"); i >= 0 {
		t.Errorf("@rate lists the session that only says half-migrated, entry %d: %q", i+1, entries)
	}
	// A session found by what was said in it is labelled with that text,
	// which holds the word: substring lists it.
	said := false
	for _, entry := range entries {
		said = said || strings.HasPrefix(entry, "“") && strings.Contains(entry, " in Weekly notes <summary> & email")
	}
	if !said {
		t.Errorf("@rate does not list the session that says it, labelled with what it says: %q", entries)
	}
	rec.ok(featNarrow)

	e.keys("C-x", "o", "C-s")
	e.text("Add rate")
	e.keys("Enter", "Enter")
	mention := sessionMention(t, rateSession, demoSessionID(t, rateSession))
	e.wait(t, "the accepted session", func(s string) bool { return strings.Contains(s, "See "+mention) })
	rec.ok(featAcceptSession)

	e.keys("C-e", "Enter")
	e.text("File: @rate")
	e.wait(t, "the typed File: @rate", func(s string) bool { return strings.Contains(s, "File: @rate\n") })
	e.keys("M-Tab")
	e.wait(t, "*Completions* with the file", func(s string) bool { return entryIndex(completionEntries(s), rateFile) >= 0 })
	e.keys("C-x", "o", "C-s")
	e.text("design notes/")
	e.keys("Enter", "Enter")
	file := e.wait(t, "the accepted file", func(s string) bool { return strings.Contains(s, `File: @"design notes/rate plan.md"`) })
	t.Logf("after accepting the session and the file:\n%s", file)
	rec.ok(featAcceptFile)

	// A match whose label does not hold the typed text: substring has
	// none, and the styles of completion-styles that follow it take the
	// server's answer (partial-completion keeps an item whose filterText
	// starts with the typed word); the sole match goes in as it is.
	e.keys("C-e", "Enter")
	e.text("Fuzzy: @rtpl")
	e.wait(t, "the typed Fuzzy: @rtpl", func(s string) bool { return strings.Contains(s, "Fuzzy: @rtpl\n") })
	e.keys("M-Tab")
	fuzzy := e.wait(t, "the fuzzy match taken", func(s string) bool { return strings.Contains(s, `Fuzzy: @"design notes/rate plan.md"`) })
	t.Logf("M-TAB after @rtpl:\n%s", fuzzy)

	e.eglotFlows(t, rec, false, d.workspace, "message.txt", strings.TrimPrefix(filepath.Base(eglotDir), "eglot-"))
	rec.note(featPrepare, "no command without dsh-refls.el")
	rec.note(featStatus, "no command without dsh-refls.el")
	for _, f := range []string{featFrecency, featScopes, featDirFacts} {
		rec.note(f, "not driven with plain eglot 1.9; the server is the one of the rows that drive it")
	}
	rec.note(featContinue, "no command without dsh-refls.el")
	rec.note(featSearchHit, "no command without dsh-refls.el")
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
