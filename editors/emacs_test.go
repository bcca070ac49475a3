package editors

import (
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
// in tmux on the demo store: it opens a prompt, types "@rate", completes
// with completion-at-point and checks the *Completions* list a user sees
// (the rate-limiting session and the nested file, in the server's order), times keystroke to list,
// accepts the session, then runs dsh-refls-prepare and dsh-refls-status and
// checks their buffers are read-only and visit no file. -v prints the screens.
func TestEmacsEglotScreen(t *testing.T) {
	// Emacs mostly waits on its screen: it runs beside the VS Code test.
	t.Parallel()
	e := startEmacsScreen(t, "", nil)
	tmux := e.tmux
	tmux.run("send-keys", "-t", "dsh", "M->", "Enter", "Rate: @rate")
	waitMenu(t, tmux, "the typed @rate", func(s string) bool { return strings.Contains(s, "Rate: @rate") })
	start := time.Now()
	tmux.run("send-keys", "-t", "dsh", "Tab")
	list := waitMenu(t, tmux, "the *Completions* list", func(s string) bool {
		return strings.Contains(s, rateSession) && strings.Contains(s, rateFile)
	})
	took := time.Since(start)
	t.Logf("*Completions* after typing @rate and TAB:\n%s", list)
	t.Logf("keystroke to list (tmux capture every %v): TAB after @rate %v", menuPoll, took.Round(time.Millisecond))
	for _, noise := range []string{"docs/migration.md", demoSessionTitle, "No match"} {
		if strings.Contains(list, noise) {
			t.Errorf("@rate offers %q:\n%s", noise, list)
		}
	}
	// The server's order (the session, then the file whose path holds the
	// word, then the fuzzy ones), as Neovim shows it: *Completions* lays its
	// entries out row by row, so the screen read line by line is its order.
	// Without dsh-refls-server-order, flex's score puts the file first.
	order := []string{rateSession, rateFile, "src/generated/ ", "src/generated/api.ts"}
	if !inOrder(list, order) {
		t.Errorf("*Completions* does not list %q in this order:\n%s", order, list)
	}

	// Accept the session: to the *Completions* window, onto its entry, RET.
	tmux.run("send-keys", "-t", "dsh", "C-x", "o", "C-s", "Add rate", "Enter", "Enter")
	accepted := waitMenu(t, tmux, "the accepted session mention", func(s string) bool {
		return strings.Contains(s, "Rate: @[Add rate limiting to the API](dsh-session:")
	})
	t.Logf("after accepting the session:\n%s", accepted)

	// dsh-refls-prepare: a read-only buffer visiting no file.
	tmux.run("send-keys", "-t", "dsh", "M-x", "dsh-refls-prepare", "Enter")
	prepared := waitMenu(t, tmux, "the prepared message", func(s string) bool {
		return strings.Contains(s, "*dsh-refls prepared*") && strings.Contains(s, "# Prepared message")
	})
	t.Logf("M-x dsh-refls-prepare:\n%s", prepared)
	tmux.run("send-keys", "-t", "dsh", "M-:", `(message "DSH-RO=%s FILE=%s MOD=%s" buffer-read-only buffer-file-name (buffer-modified-p))`, "Enter")
	ro := waitMenu(t, tmux, "the buffer facts", func(s string) bool { return strings.Contains(s, "DSH-RO=") })
	if !strings.Contains(ro, "DSH-RO=t FILE=nil MOD=nil") {
		t.Errorf("the prepared buffer is not read-only, file-less and unmodified:\n%s", ro)
	}

	// dsh-refls-status from that buffer, which has no server of its own.
	tmux.run("send-keys", "-t", "dsh", "M-x", "dsh-refls-status", "Enter")
	status := waitMenu(t, tmux, "the status buffer", func(s string) bool {
		return strings.Contains(s, "*dsh-refls status*") && strings.Contains(s, "# dsh-refls index status")
	})
	t.Logf("M-x dsh-refls-status:\n%s", status)
	tmux.run("send-keys", "-t", "dsh", "C-x", "C-c")
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
