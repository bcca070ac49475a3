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

// emacsScreen is Emacs with eglot and dsh-refls.el, in tmux, on a demo store.
type emacsScreen struct {
	tmux  tmuxRunner
	demo  demoSetup
	evals int // tags each emacsScreen.eval answer apart
}

// startEmacsScreen writes the demo store and workspace (plus extra files),
// starts Emacs on the message file with dsh-refls-settings (a plist body
// after :sessionsRoot) and waits for eglot and the first index build.
func startEmacsScreen(t *testing.T, settings string, extra map[string]string) *emacsScreen {
	t.Helper()
	emacs, eglotDir := lookEglot(t)
	bin := buildServer(t)
	dir := t.TempDir()
	d := newDemoSetup(t, dir)
	writeFiles(t, d.workspace, extra)
	logFile := filepath.Join(dir, "server.log")
	elisp := filepath.Join(repoRoot(t), "editors", "emacs")
	writeFiles(t, dir, map[string]string{"init.el": fmt.Sprintf(`
(setq native-comp-deferred-compilation nil
      native-comp-async-report-warnings-errors 'silent)
(dolist (d (directory-files %q t "^[a-z]"))
  (add-to-list 'load-path d))
(add-to-list 'load-path %q)
(setq inhibit-startup-screen t
      make-backup-files nil
      auto-save-default nil
      create-lockfiles nil
      eglot-sync-connect 10
      eldoc-idle-delay 0.1)
(require 'dsh-refls)
(setq dsh-refls-program %q
      dsh-refls-log-file %q
      dsh-refls-settings '(:sessionsRoot %q %s))
(add-to-list 'auto-mode-alist '("\\.md\\'" . text-mode))
(add-hook 'text-mode-hook #'eglot-ensure)
(with-eval-after-load 'text-mode
  (define-key text-mode-map (kbd "M-TAB") #'completion-at-point))
`, filepath.Dir(eglotDir), elisp, bin, logFile, d.root, settings)})
	tmux := tmuxRunner{t: t, socket: filepath.Join(dir, "tmux.sock"), env: isolatedEnv(dir, "TERM=xterm-256color")}
	tmux.run("new-session", "-d", "-s", "dsh", "-x", fmt.Sprint(screenWidth), "-y", fmt.Sprint(screenHeight),
		"-c", d.workspace, emacs, "-nw", "-q", "-l", filepath.Join(dir, "init.el"), d.message)
	t.Cleanup(func() {
		cmd := exec.Command("tmux", "-S", tmux.socket, "kill-server")
		cmd.Env = tmux.env
		_ = cmd.Run()
	})
	t.Cleanup(func() {
		if t.Failed() {
			data, _ := os.ReadFile(logFile)
			t.Logf("server log:\n%s", data)
		}
	})
	e := &emacsScreen{tmux: tmux, demo: d}
	// The body index is in once it is saved: completion's answers do not
	// change under the test after that.
	waitFor(t, "eglot to connect and the session and body indexes to be built", func() (bool, string) {
		data, _ := os.ReadFile(logFile)
		s := e.screen()
		return strings.Contains(string(data), "session index built") && strings.Contains(string(data), "recall index saved") &&
			strings.Contains(s, "eglot:"), s + "\n" + string(data)
	})
	return e
}

func (e *emacsScreen) screen() string { return e.tmux.run("capture-pane", "-p", "-t", "dsh") }

// missingFileAndFix types a mention of a file that does not exist on the
// line the cursor opened, waits for its Flymake diagnostic, then takes the
// preferred quick fix (RET at eglot-code-actions' prompt, which shows
// prompt) and checks that the line is fixed and no diagnostic is left.
func (e *emacsScreen) missingFileAndFix(t *testing.T, rec *featureRun, prompt string) {
	t.Helper()
	e.text("See @src/logn.ts now.")
	e.keys("C-a")
	// The mode line counts Flymake's diagnostics. (Only the screen is read
	// while waiting: keystrokes would keep Emacs from the idle time after
	// which eglot sends the change.)
	warned := e.wait(t, "the missing-file diagnostic", func(s string) bool {
		return strings.Contains(s, "See @src/logn.ts now.") && strings.Contains(s, "Flymake[0 1]")
	})
	t.Logf("the missing file's diagnostic:\n%s", warned)
	if got := e.eval(t, "(mapcar #'flymake-diagnostic-text (flymake-diagnostics (line-beginning-position) (line-end-position)))"); !strings.Contains(got, "src/logn.ts") {
		t.Fatalf("the line's diagnostics are %s, want the missing src/logn.ts", got)
	}
	rec.ok(featDiagnostic)
	e.keys("C-s")
	e.text("logn")
	e.keys("Enter", "M-x")
	e.text("eglot-code-actions")
	e.keys("Enter")
	actions := e.wait(t, "the code action prompt", func(s string) bool { return strings.Contains(s, prompt) })
	t.Logf("M-x eglot-code-actions:\n%s", actions)
	e.keys("Enter")
	fixed := e.wait(t, "the applied fix", func(s string) bool {
		return strings.Contains(s, "See @src/login.ts now.") && strings.Contains(s, "Flymake[0 0]")
	})
	t.Logf("after the default (preferred) action:\n%s", fixed)
	if got := e.eval(t, "(length (flymake-diagnostics))"); got != "0" {
		t.Errorf("after the fix the buffer has %s diagnostics, want 0", got)
	}
	rec.ok(featQuickFix)
}

// keys sends tmux key names (Enter, C-x …, M-x) and text.
func (e *emacsScreen) keys(keys ...string) {
	e.tmux.run(append([]string{"send-keys", "-t", "dsh"}, keys...)...)
}

// text types s literally (no key names).
func (e *emacsScreen) text(s string) { e.tmux.run("send-keys", "-t", "dsh", "-l", "--", s) }

// wait captures the screen until ok accepts it.
func (e *emacsScreen) wait(t *testing.T, what string, ok func(string) bool) string {
	t.Helper()
	return waitMenu(t, e.tmux, what, ok)
}

// waitUpTo captures the screen until ok accepts it or d has passed, and
// reports which.
func (e *emacsScreen) waitUpTo(d time.Duration, ok func(string) bool) (string, bool) {
	return pollPane(e.tmux, d, ok)
}

// eval evaluates an Emacs Lisp expression in the selected buffer (M-:) and
// returns what it printed, told apart from earlier answers by a tag.
func (e *emacsScreen) eval(t *testing.T, expr string) string {
	t.Helper()
	e.evals++
	name := fmt.Sprintf("DSHEVAL%d", e.evals)
	tag := name + "="
	e.keys("M-:")
	// The tag and "=" are joined by format, so the typed expression in
	// the minibuffer never reads as the answer.
	e.text(fmt.Sprintf(`(message "%%s=%%S" %q %s)`, name, expr))
	e.keys("Enter")
	s := e.wait(t, "the answer to "+expr, func(s string) bool { return strings.Contains(s, tag) })
	_, v, _ := strings.Cut(s, tag)
	v, _, _ = strings.Cut(v, "\n")
	// M-: echoes the string message returns, in quotes.
	return strings.TrimSuffix(strings.TrimSpace(v), `"`)
}

// TestEmacsFeatures drives dsh-refls.el and eglot 1.9 in Emacs 28 (tmux):
// a word said in a session, typed after "@", lists that session with the
// excerpt (M-TAB, as docs/editors.md binds it); completion after "#" offers line ranges; eldoc's hover on a
// line-range mention shows those lines and dsh-refls-follow visits its
// document link; a missing file's diagnostic offers a quick fix that
// eglot-code-actions applies (no diagnostic is left); a directory mention
// over the token budget shows its facts and tree and is narrowed by the
// default code action (directoryFacts); M-. on a session
// mention and xref-find-apropos (the server's workspace symbols) open the
// read-only recall preview; M-x dsh-refls-search finds a session by a
// phrase said in it, RET opening its preview; and @all: lists the hidden
// subagent child (scopeFlow). -v prints the screens.
func TestEmacsFeatures(t *testing.T) {
	// Emacs mostly waits on its screen: it runs beside the VS Code test.
	t.Parallel()
	// dsh/search needs the body index, off by default (docs/search.md).
	files := corpusFiles()
	files[linesFile] = "alpha line\nbravo line\ncharlie line\ndelta line\n"
	e := startEmacsScreen(t, ":recallSearch t", files)
	rec := recordEmacs28(t)

	// Typing a word said in a session after "@" lists it, with the
	// excerpt beside it (issue 13): "twenty" is in no title. The body index
	// is built in the background after the title index and completion has
	// no body matches before it; dsh/search answers once it is in.
	if got := e.eval(t, fmt.Sprintf(`(equal (plist-get (aref (jsonrpc-request (dsh-refls--server) :dsh/search '(:query "twenty")) 0) :displayTitle) %q)`, demoSessionTitle)); got != "t" {
		t.Fatalf("dsh/search twenty did not find %q first: %s", demoSessionTitle, got)
	}
	e.keys("M->", "Enter")
	e.text("Body: @twenty")
	e.keys("M-Tab")
	body := e.wait(t, "the body match in *Completions*", func(s string) bool {
		return strings.Contains(s, "*Completions*") && strings.Contains(s, demoSessionTitle) && strings.Contains(s, "twenty times")
	})
	t.Logf("M-TAB after @twenty:\n%s", body)
	// Moving out of the word ends the completion (C-g could land inside
	// an eglot request, which inhibits quitting).
	e.keys("C-a", "C-k")
	e.wait(t, "the line cleared", func(s string) bool { return !strings.Contains(s, "Body: @twenty") })

	// The session scopes: M-TAB after @all:audit lists the demo's hidden
	// subagent child, eldoc on its mention names its parent, and the
	// defcustoms reach the server options (the plist wins).
	e.scopeFlow(t)
	rec.ok(featScopes)
	rec.note(featFrecency, "not driven in Emacs 28; the Emacs 30 rows drive it with the same dsh-refls.el and server")

	// Completion after "#": the typed start line and the range to the end.
	e.text("Lines: @" + linesFile + "#L2")
	// "L2" is itself a completion: the first M-TAB says so, the second lists.
	e.keys("M-Tab")
	e.wait(t, "the first M-TAB's answer", func(s string) bool { return strings.Contains(s, "Complete, but not unique") })
	e.keys("M-Tab")
	ranges := e.wait(t, "the line-range completions", func(s string) bool {
		return strings.Contains(s, "*Completions*") && strings.Contains(s, "L2-4") && strings.Contains(s, "line 2 of 4")
	})
	t.Logf("M-TAB after @%s#L2:\n%s", linesFile, ranges)
	if !inOrder(ranges, []string{"L2 ", "L2-4 "}) {
		t.Errorf("*Completions* does not list L2, then L2-4:\n%s", ranges)
	}
	e.keys("C-x", "o", "C-s")
	e.text("L2-")
	e.keys("Enter", "Enter")
	e.wait(t, "the accepted range", func(s string) bool { return strings.Contains(s, "Lines: @"+linesFile+"#L2-4\n") })

	// Hover (eldoc) on a line-range mention: the lines themselves.
	e.keys("C-b", "C-b")
	e.wait(t, "eldoc's hover in the echo area", func(s string) bool { return strings.Contains(s, linesFile+": file") })
	e.keys("M-x")
	e.text("eldoc-doc-buffer")
	e.keys("Enter")
	hover := e.wait(t, "the *eldoc* buffer with the lines", func(s string) bool {
		return strings.Contains(s, "bravo line") && strings.Contains(s, "delta line") && strings.Contains(s, "*eldoc")
	})
	t.Logf("eldoc on @%s#L2-4 (M-x eldoc-doc-buffer):\n%s", linesFile, hover)
	if strings.Contains(hover, "alpha line") {
		t.Errorf("the hover shows line 1, outside L2-4:\n%s", hover)
	}
	rec.ok(featHover)
	e.keys("C-x", "1")

	// Its document link: dsh-refls-follow visits the file on line 2.
	e.keys("M-x")
	e.text("dsh-refls-follow")
	e.keys("Enter")
	followed := e.wait(t, "the linked file on line 2", func(s string) bool {
		return strings.Contains(s, "lines.txt") && strings.Contains(s, "bravo line") && strings.Contains(s, " L2 ")
	})
	t.Logf("M-x dsh-refls-follow on @%s#L2-4:\n%s", linesFile, followed)
	e.keys("C-x", "b")
	e.text("message.md")
	e.keys("Enter")
	e.wait(t, "back in the message", func(s string) bool { return strings.Contains(s, "message.md") && strings.Contains(s, "Lines: @") })

	// A missing file: its diagnostic, then the preferred quick fix.
	e.keys("C-e", "Enter")
	// eglot 1.9 names the preferred action as the prompt's default.
	e.missingFileAndFix(t, rec, "Pick an action (default Replace with src/login.ts)")

	// A directory mention over the token budget (issue 30 item 3).
	e.directoryFacts(t)
	rec.ok(featDirFacts)

	// M-. on a session mention: its recall preview, read-only, no file.
	e.keys("C-e", "Enter")
	e.text("Read " + e.demo.mention + " first.")
	e.keys("C-a")
	e.keys("C-s")
	e.text("flaky")
	e.keys("Enter", "M-.")
	def := e.wait(t, "the preview from M-.", func(s string) bool {
		return strings.Contains(s, "*dsh-refls preview: "+demoSessionTitle+"*") && strings.Contains(s, "messages kept")
	})
	t.Logf("M-. on the mention:\n%s", def)
	if got := e.eval(t, "(list buffer-read-only buffer-file-name (buffer-modified-p) (eglot-managed-p))"); got != "(t nil nil nil)" {
		t.Errorf("the preview is not read-only, file-less, unmodified and unmanaged: %s", got)
	}
	rec.ok(featPreview)
	// dsh-refls-follow on the mention (its document link): the preview too.
	e.keys("C-x", "b")
	e.text("message.md")
	e.keys("Enter")
	e.wait(t, "back in the message", func(s string) bool { return strings.Contains(s, "message.md") && strings.Contains(s, "Read @[") })
	e.keys("M-x")
	e.text("dsh-refls-follow")
	e.keys("Enter")
	linked := e.wait(t, "the linked session's preview", func(s string) bool {
		return strings.Contains(s, "*dsh-refls preview: "+demoSessionTitle+"*") && strings.Contains(s, "message.md") && strings.Contains(s, "messages kept")
	})
	t.Logf("M-x dsh-refls-follow on the mention:\n%s", linked)

	// Continue from the session of the mention (issue 30 item 5).
	toMessage := func() {
		e.keys("C-x", "b")
		e.text("message.md")
		e.keys("Enter")
		e.wait(t, "back in the message", func(s string) bool { return strings.Contains(s, "message.md") && strings.Contains(s, "Read @[") })
	}
	toMessage()
	e.continueFlow(t, e.demo.session, toMessage)
	rec.ok(featContinue)

	// xref-find-apropos: the server's workspace symbols, one per session.
	e.keys("C-x", "b")
	e.text("message.md")
	e.keys("Enter", "C-M-.")
	e.wait(t, "the apropos prompt", func(s string) bool { return strings.Contains(s, "Search for pattern") })
	e.text("rate")
	e.keys("Enter")
	list := e.wait(t, "the *xref* list of symbols", func(s string) bool {
		return strings.Contains(s, "*xref*") && strings.Contains(s, rateSession+" · "+e.demo.workspace)
	})
	t.Logf("xref-find-apropos rate:\n%s", list)
	e.keys("C-n", "Enter") // from the group's heading onto its entry
	sym := e.wait(t, "the preview of the symbol", func(s string) bool {
		return strings.Contains(s, "*dsh-refls preview: "+rateSession+"*") && strings.Contains(s, "messages kept")
	})
	t.Logf("RET on the symbol:\n%s", sym)

	// M-x dsh-refls-search: the session holding the phrase, RET opens it.
	e.keys("M-x")
	e.text("dsh-refls-search")
	e.keys("Enter")
	e.wait(t, "the search prompt", func(s string) bool { return strings.Contains(s, "Search sessions:") })
	e.text(`"twenty times"`)
	e.keys("Enter")
	results := e.wait(t, "the search results", func(s string) bool {
		return strings.Contains(s, "*dsh-refls search*") && strings.Contains(s, "## "+demoSessionTitle)
	})
	t.Logf("M-x dsh-refls-search \"twenty times\":\n%s", results)
	for _, want := range []string{"1 session.", "run the test twenty times", "- user #"} {
		if !strings.Contains(results, want) {
			t.Errorf("the results lack %q:\n%s", want, results)
		}
	}
	if got := e.eval(t, "(list major-mode buffer-read-only buffer-file-name)"); got != "(dsh-refls-search-mode t nil)" {
		t.Errorf("the results are not a read-only buffer visiting no file: %s", got)
	}
	e.keys("C-s")
	e.text("- user")
	e.keys("Enter", "Enter")
	// On a match line the preview opens at the message (scrolled there:
	// the header may be off the screen), point on the hit.
	opened := e.wait(t, "the preview from the result", func(s string) bool {
		return strings.Contains(s, "*dsh-refls preview: "+demoSessionTitle+"*") && strings.Contains(s, "## Message of event")
	})
	t.Logf("RET on the result:\n%s", opened)
	if got := e.eval(t, "(save-excursion (goto-char (point-min)) (and (search-forward \""+e.demo.session.ID+"\" nil t) t))"); got != "t" {
		t.Errorf("the preview from the result does not name the session %s:\n%s", e.demo.session.ID, opened)
	}
	if got := e.eval(t, "(list (string= (downcase (buffer-substring-no-properties (point) (+ (point) 12))) \"twenty times\") (> (line-number-at-pos) 5) (seq-some (lambda (o) (eq (overlay-get o 'face) 'dsh-refls-hit)) (overlays-at (point))))"); got != "(t t t)" {
		t.Errorf("point in the preview opened from the match: %s, want on the highlighted hit \"twenty times\" below the header", got)
	}
	rec.ok(featSearchHit)
	e.keys("C-x", "C-c")
}
