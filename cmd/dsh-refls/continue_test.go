package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/dsh-refls/dsh-refls/internal/dshgen"
	"github.com/dsh-refls/dsh-refls/sessionref"
)

// lastExchangeOf is the last user request and the last assistant answer
// after it in the generator's own projection of a session.
func lastExchangeOf(e dshgen.Expected) (request, answer string) {
	for i := len(e.Conversation) - 1; i >= 0; i-- {
		m := e.Conversation[i]
		if m.Role == "assistant" && answer == "" && request == "" {
			answer = m.Text
		}
		if m.Role == "user" {
			return m.Text, answer
		}
	}
	return "", answer
}

// TestBinaryContinueFrom: over stdio, a client that declares it opens
// prompts is offered "Continue from this session" on a mention; the
// action's command answers the prompt: the mention first, then the
// session's last request and answer quoted. A client that does not
// declare it gets no such action, and the command still answers.
func TestBinaryContinueFrom(t *testing.T) {
	caps := featureCaps()
	caps["experimental"] = map[string]any{"dshContinueFrom": true}
	p, ws, expected := startLSPWire(t, caps)
	var ref dshgen.Expected
	var request, answer string
	for _, e := range expected[1:] {
		if e.Preparable && !e.Compacted {
			if request, answer = lastExchangeOf(e); request != "" && answer != "" {
				ref = e
				break
			}
		}
	}
	if ref.ID == "" {
		t.Fatal("the demo store has no session with a request and an answer")
	}
	mention := sessionref.Mention(ref.DisplayTitle, ref.ID)
	uri := "file://" + ws + "/prompt.md"
	p.send(map[string]any{"method": "textDocument/didOpen", "params": map[string]any{"textDocument": map[string]any{
		"uri": uri, "languageId": "markdown", "version": 1, "text": "see " + mention}}})
	p.send(map[string]any{"id": 1, "method": "textDocument/codeAction", "params": map[string]any{
		"textDocument": map[string]any{"uri": uri},
		"range":        map[string]any{"start": map[string]any{"line": 0, "character": 6}, "end": map[string]any{"line": 0, "character": 6}},
		"context":      map[string]any{"diagnostics": []any{}}}})
	a := p.expectResult("codeAction", "1")
	var actions []struct {
		Title   string `json:"title"`
		Command *struct {
			Command   string            `json:"command"`
			Arguments []json.RawMessage `json:"arguments"`
		} `json:"command"`
	}
	if err := json.Unmarshal(a.Result, &actions); err != nil {
		t.Fatal(err)
	}
	var cmd *struct {
		Command   string            `json:"command"`
		Arguments []json.RawMessage `json:"arguments"`
	}
	for _, ac := range actions {
		if ac.Title == "Continue from this session" {
			cmd = ac.Command
		}
	}
	if cmd == nil || cmd.Command != "dsh-refls.continueFrom" {
		t.Fatalf("code actions %s, want Continue from this session", a.Result)
	}
	p.send(map[string]any{"id": 2, "method": "workspace/executeCommand", "params": map[string]any{"command": cmd.Command, "arguments": cmd.Arguments}})
	a = p.expectResult("executeCommand", "2")
	var res struct {
		Text      string `json:"text"`
		SessionID string `json:"sessionId"`
	}
	if err := json.Unmarshal(a.Result, &res); err != nil {
		t.Fatal(err)
	}
	firstLine := func(s string) string { return strings.TrimSpace(strings.SplitN(strings.TrimSpace(s), "\n", 2)[0]) }
	wantReq := "Last request:\n\n> " + firstLine(request) + "\n"
	wantAns := "Last answer:\n\n> " + firstLine(answer) + "\n"
	if res.SessionID != ref.ID || !strings.HasPrefix(res.Text, mention+"\n\n") || !strings.Contains(res.Text, wantReq) ||
		!strings.Contains(res.Text, wantAns) || strings.Index(res.Text, wantReq) > strings.Index(res.Text, wantAns) {
		t.Errorf("continueFrom answered %s\nwant the mention, then %q, then %q", a.Result, wantReq, wantAns)
	}
	p.send(map[string]any{"id": 3, "method": "workspace/executeCommand", "params": map[string]any{"command": cmd.Command, "arguments": []any{"no-such-session"}}})
	if a := p.response(); a.Error == nil || !strings.Contains(a.Error.Message, "no-such-session") {
		t.Errorf("an unknown session answered %+v", a)
	}
	p.finish()

	// Without the capability: no action, the command still answers.
	p, ws, _ = startLSPWire(t, featureCaps())
	uri = "file://" + ws + "/prompt.md"
	p.send(map[string]any{"method": "textDocument/didOpen", "params": map[string]any{"textDocument": map[string]any{
		"uri": uri, "languageId": "markdown", "version": 1, "text": "see " + mention}}})
	p.send(map[string]any{"id": 1, "method": "textDocument/codeAction", "params": map[string]any{
		"textDocument": map[string]any{"uri": uri},
		"range":        map[string]any{"start": map[string]any{"line": 0, "character": 6}, "end": map[string]any{"line": 0, "character": 6}},
		"context":      map[string]any{"diagnostics": []any{}}}})
	if a := p.expectResult("codeAction", "1"); strings.Contains(string(a.Result), "continueFrom") {
		t.Errorf("offered to a client that does not open prompts: %s", a.Result)
	}
	p.send(map[string]any{"id": 2, "method": "workspace/executeCommand", "params": map[string]any{"command": "dsh-refls.continueFrom", "arguments": []any{ref.ID}}})
	if a := p.expectResult("executeCommand", "2"); !strings.Contains(string(a.Result), `"sessionId":"`+ref.ID+`"`) {
		t.Errorf("the command without the action answered %s", a.Result)
	}
	p.finish()
}
