package editors

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/dsh-refls/dsh-refls/internal/dshgen"
)

// continueQuotes are the lines the prompt that continues from e must
// hold: the first line of its last request and of the last answer after
// it, each quoted ("> "), from the generator's own projection of e.
func continueQuotes(t *testing.T, e dshgen.Expected) (request, answer string) {
	t.Helper()
	for i := len(e.Conversation) - 1; i >= 0; i-- {
		m := e.Conversation[i]
		if m.Role == "assistant" && answer == "" && request == "" {
			answer = m.Text
		}
		if m.Role == "user" {
			request = m.Text
			break
		}
	}
	if request == "" || answer == "" {
		t.Fatalf("session %q has no request and answer to continue from: %+v", e.DisplayTitle, e.Conversation)
	}
	first := func(s string) string {
		return "> " + strings.TrimSpace(strings.SplitN(strings.TrimSpace(s), "\n", 2)[0])
	}
	return first(request), first(answer)
}

// continueParams are the browser script's continueFrom: the file with the
// demo mention, the session's title and the quoted lines its prompt holds.
func continueParams(t *testing.T, d demoSetup) map[string]any {
	request, answer := continueQuotes(t, d.session)
	return map[string]any{"file": "continue.md", "title": d.session.DisplayTitle, "request": request, "answer": answer}
}

// continueFlow drives "continue from a session" in Neovim (a step of
// driveNeovimFlows, on message.md, whose line 2 mentions the rate
// session): :DshContinue on the mention, the code action "Continue from
// this session" (vim.lsp.buf.code_action), and :DshContinue off any
// mention, which asks with vim.ui.select. Each opens a new unsaved
// Markdown buffer attached to the server: the mention on line 1, then the
// session's last request and answer quoted.
func continueFlow(t *testing.T, f *freshNvim) {
	request, answer := continueQuotes(t, f.rate)
	title := f.rate.DisplayTitle
	want := func(how string, n int) {
		t.Helper()
		screen := f.wait(t, how+": the new prompt", func(s string) bool {
			return strings.Contains(s, "Last answer:") && strings.Contains(s, "dsh-continue-"+strconv.Itoa(n))
		})
		t.Logf("%s:\n%s", how, screen)
		facts := "table.concat({vim.bo.filetype, vim.bo.buftype, #require('dsh_refls').clients(0), " +
			"tostring(vim.fn.getline(1):find([[@[" + title + "](dsh-session:]], 1, true) == 1), " +
			"tostring(vim.fn.getline(3) == 'Last request:' and vim.fn.getline(5) == [[" + request + "]]), " +
			"tostring(vim.fn.getline(7) == 'Last answer:' and vim.fn.getline(9) == [[" + answer + "]]), " +
			"vim.api.nvim_buf_get_name(0)}, ',')"
		wantFacts := fmt.Sprintf("markdown,nofile,1,true,true,true,untitled://dsh-continue-%d.md", n)
		if got := f.echo(t, "CONT"+strconv.Itoa(n), facts); got != wantFacts {
			t.Errorf("%s: the prompt buffer is %s, want %s (filetype, buftype, clients, mention first, request, answer, name)", how, got, wantFacts)
		}
		f.text(":only | buffer message.md")
		f.keys("Enter")
		f.wait(t, "back in the message", func(s string) bool { return strings.Contains(s, "message.md") })
	}
	number := func(screen, item string) string {
		m := regexp.MustCompile(`(\d+): ` + regexp.QuoteMeta(item)).FindStringSubmatch(screen)
		if m == nil {
			t.Fatalf("no numbered %q in:\n%s", item, screen)
		}
		return m[1]
	}

	f.keys("Escape")
	f.text(":2")
	f.keys("Enter", "0", "f[")
	f.text(":DshContinue")
	f.keys("Enter")
	want(":DshContinue on the mention", 1)

	f.text(":2")
	f.keys("Enter", "0", "f[")
	f.text(":lua vim.lsp.buf.code_action()")
	f.keys("Enter")
	actions := f.wait(t, "the continue code action", func(s string) bool { return strings.Contains(s, "Continue from this session") })
	t.Logf("vim.lsp.buf.code_action() on the mention:\n%s", actions)
	f.text(number(actions, "Continue from this session"))
	f.keys("Enter")
	want("the code action", 2)

	f.text(":1")
	f.keys("Enter")
	f.text(":DshContinue")
	f.keys("Enter")
	picker := f.wait(t, "the session picker", func(s string) bool {
		return strings.Contains(s, "Continue from session") && strings.Contains(s, title)
	})
	t.Logf(":DshContinue off any mention:\n%s", picker)
	f.text(number(picker, title))
	f.keys("Enter")
	want(":DshContinue from the picker", 3)
}

// continueFlow drives "continue from a session" in Emacs with eglot, from
// a message buffer whose point is inside a mention of session s:
// M-x dsh-refls-continue, then eglot-code-actions' default action
// "Continue from this session". Each opens a new buffer that visits no
// file, the mention on its first line, then the session's last request
// and answer quoted. back returns to the message buffer.
func (e *emacsScreen) continueFlow(t *testing.T, s dshgen.Expected, back func()) {
	t.Helper()
	request, answer := continueQuotes(t, s)
	name := "*dsh-refls continue: " + s.DisplayTitle + "*"
	check := func(how, buffer string) {
		t.Helper()
		screen := e.wait(t, how+": the new prompt", func(s string) bool {
			return strings.Contains(s, buffer) && strings.Contains(s, "Last answer:")
		})
		t.Logf("%s:\n%s", how, screen)
		// The text as docs/editors.md gives it: mention, request, answer.
		text := sessionMention(t, s.DisplayTitle, s.ID) + "\n\nLast request:\n\n" + request + "\n\nLast answer:\n\n" + answer + "\n\n"
		expr := fmt.Sprintf("(list (equal (buffer-name) %q) (and (memq major-mode '(markdown-mode text-mode)) t) buffer-file-name "+
			"(equal (buffer-string) %q) (eobp))", buffer, text)
		const want = "(t t nil t t)"
		if got := e.eval(t, expr); got != want {
			t.Errorf("%s: the prompt buffer is %s, want %s (name, mode, file, text, point at the end)", how, got, want)
		}
	}
	e.keys("M-x")
	e.text("dsh-refls-continue")
	e.keys("Enter")
	check("M-x dsh-refls-continue on the mention", name)
	back()
	e.keys("M-x")
	e.text("eglot-code-actions")
	e.keys("Enter")
	e.wait(t, "the continue action offered", func(s string) bool { return strings.Contains(s, "Continue from this session") })
	e.keys("Enter")
	check("eglot-code-actions on the mention", name+"<2>")
	back()
}
