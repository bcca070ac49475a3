package server

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/dsh-refls/dsh-refls/internal/dshgen"
	"github.com/dsh-refls/dsh-refls/sessionref"
	"github.com/dsh-refls/dsh-refls/sessionref/prepare"
)

// TestQuoteBounded: each quote keeps whole lines up to 40 lines and 2,000
// characters, marks a cut with a line "…", cuts a first line longer than
// the bound inside it, and quotes blank lines as ">".
func TestQuoteBounded(t *testing.T) {
	numbered := func(n int) string {
		var l []string
		for i := 1; i <= n; i++ {
			l = append(l, fmt.Sprintf("line %d", i))
		}
		return strings.Join(l, "\n")
	}
	quoted := func(lines ...string) string {
		var b strings.Builder
		for _, l := range lines {
			if l == "" {
				b.WriteString(">\n")
			} else {
				b.WriteString("> " + l + "\n")
			}
		}
		return b.String()
	}
	var first40 []string
	for i := 1; i <= 40; i++ {
		first40 = append(first40, fmt.Sprintf("line %d", i))
	}
	// 21 lines of 99 characters: 20 of them (with their newlines) are
	// exactly 2,000 characters.
	hundred := strings.Repeat("é", 99)
	var twenty []string
	for range 20 {
		twenty = append(twenty, hundred)
	}
	cases := []struct {
		name, text, want string
	}{
		{"short", "Fix the parser\n\nthen the tests", quoted("Fix the parser", "", "then the tests")},
		{"CRLF and outer blank lines", "\r\n\na\r\nb\rc\n\n", quoted("a", "b", "c")},
		{"40 lines kept", numbered(40), quoted(first40...)},
		{"41 lines cut", numbered(41), quoted(append(first40, "…")...)},
		{"2,000 characters kept", strings.Join(twenty, "\n"), quoted(twenty...)},
		{"2,001 characters cut at a line", strings.Join(append(twenty, "x"), "\n"), quoted(append(twenty, "…")...)},
		{"one long line", strings.Repeat("ab", 1500), quoted(strings.Repeat("ab", 999) + "…")},
		{"trailing spaces", "a  \n b\t", quoted("a", " b")},
		{"session mentions unlinked", "see " + sessionref.Mention("Old [work]", "s-old") + " and " + sessionref.EncodeURI("s-bare"),
			quoted("see [Old [work]] and [s-bare]")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := quoteBounded(c.text)
			if got != c.want {
				t.Errorf("quoteBounded(%.60q…)\n got %q\nwant %q", c.text, got, c.want)
			}
			if n := strings.Count(got, "\n"); n > continueQuoteLines+1 {
				t.Errorf("%d lines", n)
			}
		})
	}
}

// TestContinueText: the mention first, then the quoted request and
// answer, or what stands in for a missing one.
func TestContinueText(t *testing.T) {
	const men = "@[T](dsh-session:x)"
	cases := []struct {
		name string
		x    prepare.Exchange
		want string
	}{
		{"both", prepare.Exchange{Messages: 2, Request: "Fix it", Answer: "Fixed."},
			men + "\n\nLast request:\n\n> Fix it\n\nLast answer:\n\n> Fixed.\n\n"},
		{"empty session", prepare.Exchange{}, men + "\n\nThat session has no messages yet.\n\n"},
		{"no answer", prepare.Exchange{Messages: 3, Request: "Fix it"},
			men + "\n\nLast request:\n\n> Fix it\n\nNo answer followed it.\n\n"},
		{"answer after a checkpoint", prepare.Exchange{Messages: 2, Answer: "Fixed."},
			men + "\n\nNo request to quote (the session was compacted since its last one).\n\nLast answer:\n\n> Fixed.\n\n"},
		{"checkpoint only", prepare.Exchange{Messages: 1}, men + "\n\nThat session has no request or answer to quote.\n\n"},
	}
	for _, c := range cases {
		if got := continueText(men, &c.x); got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.name, got, c.want)
		}
	}
}

// continueInit initializes h as a code-action client; opens says whether
// it declares that it opens the continued prompt.
func continueInit(t *testing.T, h *harness, ws string, opens bool, settings map[string]any) {
	t.Helper()
	p := initParams(initOptions{root: ws, settings: settings})
	caps := p["capabilities"].(map[string]any)
	caps["textDocument"].(map[string]any)["codeAction"] = map[string]any{"codeActionLiteralSupport": map[string]any{
		"codeActionKind": map[string]any{"valueSet": []string{"quickfix"}}}}
	if opens {
		caps["experimental"] = map[string]any{continueCapability: true}
	}
	h.mustCall("initialize", p, nil)
	h.notify("initialized", map[string]any{})
}

// continueStore adds the sessions the continue tests read: one whose last
// turn has tool noise between request and answer, one stopped before an
// answer, one with a secret, one without messages.
func continueStore(t *testing.T) (Options, string) {
	t.Helper()
	opts, fake, ws := testOptions(t)
	at := time.Now().Add(-3 * time.Hour).UnixMilli()
	fake.add(t, dshgen.NewSession("s-cont").Cwd(testCwd).CreatedAt(at).
		Turn(func(tt *dshgen.Turn) {
			tt.UserText("First request")
			tt.Title("Parser work", "provider")
			tt.AssistantText("First answer")
		}).
		Turn(func(tt *dshgen.Turn) {
			tt.UserText("Make the tests pass")
			tt.AssistantToolCall("c1", "shell", `{"cmd":"go test"}`)
			tt.ToolResult("c1", "FAIL tool noise", true)
			tt.AssistantText("Halfway there.")
			tt.AssistantText("All tests pass now.")
		}))
	fake.add(t, dshgen.NewSession("s-stopped").Cwd(testCwd).CreatedAt(at).
		Turn(func(tt *dshgen.Turn) {
			tt.UserText("Earlier")
			tt.Title("Stopped work", "provider")
			tt.AssistantText("Earlier answer")
		}).
		Turn(func(tt *dshgen.Turn) { tt.UserText("Then this"); tt.EndReason("aborted") }))
	fake.add(t, dshgen.NewSession("s-leaky").Cwd(testCwd).CreatedAt(at).
		Turn(func(tt *dshgen.Turn) {
			tt.UserText("Deploy with GITHUB_TOKEN=" + leakyToken)
			tt.Title("Deploy notes", "provider")
			tt.AssistantText("Done; the database password=hunter22 is in the vault now.")
		}))
	fake.add(t, dshgen.NewSession("s-empty").Cwd(testCwd).CreatedAt(at))
	return opts, ws
}

// continueFrom runs the command for id.
func continueFrom(t *testing.T, h *harness, id string) (continueResult, error) {
	t.Helper()
	var res continueResult
	err := h.call("workspace/executeCommand", map[string]any{"command": CommandContinueFrom, "arguments": []any{id}}, &res)
	return res, err
}

// TestContinueFromCommand: the command answers the prompt from the
// projection (no tool output, the last answer of the last turn), says
// what is missing, redacts with redactSecrets on, and refuses an unknown
// session and malformed arguments.
func TestContinueFromCommand(t *testing.T) {
	opts, ws := continueStore(t)
	h := newHarness(t, opts)
	continueInit(t, h, ws, false, map[string]any{"sessionId": "s-target"})
	h.waitReady(t)

	res, err := continueFrom(t, h, "s-cont")
	if err != nil {
		t.Fatal(err)
	}
	want := sessionref.Mention("Parser work", "s-cont") + "\n\nLast request:\n\n> Make the tests pass\n\nLast answer:\n\n> All tests pass now.\n\n"
	if res.Text != want || res.Title != "Parser work" || res.SessionID != "s-cont" || res.Redactions != nil {
		t.Errorf("s-cont: %+v\nwant text %q", res, want)
	}
	res, err = continueFrom(t, h, "s-stopped")
	if err != nil || !strings.HasSuffix(res.Text, "Last request:\n\n> Then this\n\nNo answer followed it.\n\n") {
		t.Errorf("s-stopped: %q, %v", res.Text, err)
	}
	res, err = continueFrom(t, h, "s-empty")
	if err != nil || res.Text != sessionref.Mention("s-empty", "s-empty")+"\n\nThat session has no messages yet.\n\n" {
		t.Errorf("s-empty: %q, %v", res.Text, err)
	}
	res, err = continueFrom(t, h, "s-leaky")
	if err != nil || !strings.Contains(res.Text, "hunter22") || !strings.Contains(res.Text, leakyToken) {
		t.Errorf("redaction off: %q, %v", res.Text, err)
	}
	h.notify("workspace/didChangeConfiguration", map[string]any{"settings": map[string]any{"dsh": map[string]any{"sessionId": "s-target", "redactSecrets": true}}})
	deadline := time.Now().Add(testTimeout)
	for {
		res, err = continueFrom(t, h, "s-leaky")
		if err != nil || res.Redactions != nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err != nil || res.Redactions == nil || *res.Redactions != 2 || strings.Contains(res.Text, "hunter22") ||
		strings.Contains(res.Text, leakyToken) || !strings.Contains(res.Text, "[redacted: ") {
		t.Errorf("redaction on: %+v, %v", res, err)
	}

	if _, err := continueFrom(t, h, "s-ghost"); err == nil {
		t.Error("an unknown session was continued from")
	} else if code, data := rpcError(t, err); code == -32602 || data != string(sessionref.CodeReadFailed) || !strings.Contains(err.Error(), "s-ghost") {
		t.Errorf("unknown session: %d %s %v", code, data, err)
	}
	for _, args := range []any{[]any{}, []any{"a", "b"}, []any{7}, []any{""}} {
		err := h.call("workspace/executeCommand", map[string]any{"command": CommandContinueFrom, "arguments": args}, nil)
		if code, _ := rpcError(t, err); code != -32602 {
			t.Errorf("arguments %v: code %d, want -32602", args, code)
		}
	}
}

// TestContinueFromCodeAction: a client that opens prompts is offered
// "Continue from this session" on a known mention, with the command and
// the id; not on the target session, an unknown one, outside the mention,
// for a quickfix-only request, nor to a client that does not open prompts.
func TestContinueFromCodeAction(t *testing.T) {
	text := "a " + sessionref.Mention("Parser work", "s-cont") + " b\n" +
		sessionref.Mention("me", "s-target") + " " + sessionref.Mention("ghost", "s-ghost") + "\n" +
		"plain line\n" +
		sessionref.Mention("Parser work", "s-cont") + " " + sessionref.Mention("Stopped work", "s-stopped") + "\n"
	continueActs := func(acts []wireAction) []wireAction {
		var out []wireAction
		for _, a := range acts {
			if a.Command != nil && a.Command.Command == CommandContinueFrom {
				out = append(out, a)
			}
		}
		return out
	}
	for _, opens := range []bool{true, false} {
		opts, ws := continueStore(t)
		h := newHarness(t, opts)
		continueInit(t, h, ws, opens, map[string]any{"sessionId": "s-target"})
		uri := "file:///c.md"
		h.open(uri, text, EncodingUTF16)
		acts := continueActs(actionsAt(t, h, uri, 0))
		if !opens {
			if len(acts) != 0 {
				t.Errorf("offered to a client that does not open prompts: %+v", acts)
			}
			continue
		}
		if len(acts) != 1 || acts[0].Title != "Continue from this session" || acts[0].Kind != "" ||
			fmt.Sprint(acts[0].Command.Arguments) != "[s-cont]" {
			t.Fatalf("line 0: %+v", acts)
		}
		raw, _ := json.Marshal(acts[0].Command.Arguments)
		var res continueResult
		h.mustCall("workspace/executeCommand", map[string]any{"command": acts[0].Command.Command, "arguments": json.RawMessage(raw)}, &res)
		if !strings.HasPrefix(res.Text, sessionref.Mention("Parser work", "s-cont")+"\n") {
			t.Errorf("the action's command answered %q", res.Text)
		}
		if acts := continueActs(actionsAt(t, h, uri, 1)); len(acts) != 0 {
			t.Errorf("line 1 (target and unknown): %+v", acts)
		}
		if acts := continueActs(actionsAt(t, h, uri, 2)); len(acts) != 0 {
			t.Errorf("line 2 (no mention): %+v", acts)
		}
		acts = continueActs(actionsAt(t, h, uri, 3))
		if len(acts) != 2 || acts[0].Title != "Continue from Parser work" || acts[1].Title != "Continue from Stopped work" {
			t.Errorf("line 3 (two sessions): %+v", acts)
		}
		var only []wireAction
		h.mustCall("textDocument/codeAction", map[string]any{"textDocument": map[string]any{"uri": uri},
			"range":   Range{Start: Position{0, 0}, End: Position{0, 1000}},
			"context": map[string]any{"diagnostics": []any{}, "only": []string{"quickfix"}}}, &only)
		if acts := continueActs(only); len(acts) != 0 {
			t.Errorf("a quickfix-only request got %+v", acts)
		}
	}
}
