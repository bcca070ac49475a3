package editors

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// Screen size of the captured Neovim: wide enough for titles and details.
const (
	screenWidth  = 110
	screenHeight = 24
)

// screenWait bounds each wait for the screen or the server log. It is a
// deadline, not a delay: a wait ends as soon as the screen shows what it
// waits for. Emacs loading eglot and starting the server took over 15 s
// once, in a CI run where the test ran beside the VS Code test, Wine and
// the long tests (load 25), so the bound leaves a loaded machine a minute.
const screenWait = 60 * time.Second

// screenPoll is how often the screen and the log are polled.
const screenPoll = 50 * time.Millisecond

// tmuxRunner runs tmux commands against one private server socket.
type tmuxRunner struct {
	t      *testing.T
	socket string
	env    []string
}

// run runs one tmux command and returns its output, failing the test on error.
func (r tmuxRunner) run(args ...string) string {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), screenWait)
	defer cancel()
	cmd := exec.CommandContext(ctx, "tmux", append([]string{"-S", r.socket}, args...)...)
	cmd.Env = r.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		r.t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// waitFor polls fn until it reports true, failing with what after screenWait.
func waitFor(t *testing.T, what string, fn func() (bool, string)) string {
	t.Helper()
	deadline := time.Now().Add(screenWait)
	for {
		ok, last := fn()
		if ok {
			return last
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s; last state:\n%s", what, last)
		}
		time.Sleep(screenPoll)
	}
}

// TestNeovimCompletionScreen runs Neovim with the plugin in tmux on a demo
// store, types "@" and <C-x><C-o>, and checks the completion menu as a user
// sees it. Run with -v to print the captured screen.
func TestNeovimCompletionScreen(t *testing.T) {
	n := startNvimScreen(t, "", nil)
	tmux, d := n.tmux, n.demo
	tmux.run("send-keys", "-t", "dsh", "G", "o", "Sessions to read: @")
	tmux.run("send-keys", "-t", "dsh", "C-x", "C-o")
	screen := waitFor(t, "the completion menu", func() (bool, string) {
		s := tmux.run("capture-pane", "-p", "-t", "dsh")
		return strings.Contains(s, d.session.DisplayTitle) && strings.Contains(s, demoFile), s
	})
	t.Logf("completion menu after typing @ and <C-x><C-o>:\n%s", screen)
	if !strings.Contains(screen, "-- Omni completion") {
		t.Errorf("the screen does not show Omni completion mode:\n%s", screen)
	}
	if strings.Contains(screen, "dist/") {
		t.Errorf("the menu offers dist/, which .gitignore hides:\n%s", screen)
	}

	// Accept the first entry and leave Insert mode: the line holds a mention.
	tmux.run("send-keys", "-t", "dsh", "C-y", "Escape")
	line := waitFor(t, "the accepted mention", func() (bool, string) {
		s := tmux.run("capture-pane", "-p", "-t", "dsh")
		return strings.Contains(s, "Sessions to read: @[") || strings.Contains(s, "Sessions to read: @"+demoFile), s
	})
	t.Logf("after accepting the first entry:\n%s", line)

	// Typing narrows the list: the omnifunc asks the server again, which
	// matches session titles and fuzzy-matches file paths.
	tmux.run("send-keys", "-t", "dsh", "o", "Also @log")
	tmux.run("send-keys", "-t", "dsh", "C-x", "C-o")
	tmux.run("send-keys", "-t", "dsh", "in")
	narrowed := waitFor(t, "the narrowed menu", func() (bool, string) {
		s := tmux.run("capture-pane", "-p", "-t", "dsh")
		return strings.Contains(s, "Also @login") && strings.Contains(s, "src/login.ts") &&
			strings.Contains(s, demoSessionTitle) && !strings.Contains(s, "Checkout page layout"), s
	})
	t.Logf("after typing @login:\n%s", narrowed)

	// "@rate" (issue 11): the menu narrows to the rate-limiting session and
	// the nested file with a space, not to fuzzy noise. Timed from the
	// keystroke that opens the menu, then from the last typed letter.
	tmux.run("send-keys", "-t", "dsh", "C-e", "Escape", "o", "Rate: @")
	start := time.Now()
	tmux.run("send-keys", "-t", "dsh", "C-x", "C-o")
	waitMenu(t, tmux, "the menu at @", func(s string) bool { return strings.Contains(s, "-- Omni completion") && strings.Contains(s, demoFile) })
	atMenu := time.Since(start)
	tmux.run("send-keys", "-t", "dsh", "rat")
	waitMenu(t, tmux, "the menu after @rat", func(s string) bool { return strings.Contains(s, "Rate: @rat") })
	start = time.Now()
	tmux.run("send-keys", "-t", "dsh", "e")
	rate := waitMenu(t, tmux, "the menu narrowed to @rate", func(s string) bool {
		return strings.Contains(s, "Rate: @rate") && strings.Contains(s, rateSession) && strings.Contains(s, rateFile)
	})
	narrowMenu := time.Since(start)
	t.Logf("after typing @rate:\n%s", rate)
	for _, noise := range []string{"docs/migration.md", demoSessionTitle} {
		if strings.Contains(rate, noise) {
			t.Errorf("@rate still offers %q:\n%s", noise, rate)
		}
	}
	t.Logf("keystroke to menu (tmux capture every %v): <C-x><C-o> at @ %v, typing the e of @rate %v",
		menuPoll, atMenu.Round(time.Millisecond), narrowMenu.Round(time.Millisecond))

	// Select and accept the first entry: the session's mention goes in.
	tmux.run("send-keys", "-t", "dsh", "C-n", "C-y", "Escape")
	accepted := waitMenu(t, tmux, "the accepted @rate entry", func(s string) bool { return strings.Contains(s, "Rate: @[Add rate limiting to the API](dsh-session:") })
	t.Logf("after accepting the first @rate entry:\n%s", accepted)
	tmux.run("send-keys", "-t", "dsh", "Escape", ":qa!", "Enter")
}

// menuPoll is how often waitMenu captures the screen: short, since the
// capture times the menu.
const menuPoll = 10 * time.Millisecond

// waitMenu captures the pane until ok accepts it, failing after screenWait.
func waitMenu(t *testing.T, tmux tmuxRunner, what string, ok func(string) bool) string {
	t.Helper()
	s, shown := pollPane(tmux, screenWait, ok)
	if !shown {
		t.Fatalf("timed out waiting for %s; screen:\n%s", what, s)
	}
	return s
}

// pollPane captures the pane every menuPoll until ok accepts it or d has
// passed, and returns the last capture and which.
func pollPane(tmux tmuxRunner, d time.Duration, ok func(string) bool) (string, bool) {
	deadline := time.Now().Add(d)
	for {
		s := tmux.run("capture-pane", "-p", "-t", "dsh")
		if ok(s) {
			return s, true
		}
		if time.Now().After(deadline) {
			return s, false
		}
		time.Sleep(menuPoll)
	}
}
