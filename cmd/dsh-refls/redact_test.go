package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/dsh-refls/dsh-refls/internal/dshgen"
	"github.com/dsh-refls/dsh-refls/sessionref"
	"github.com/dsh-refls/dsh-refls/sessionref/prepare"
)

// leakyToken is a GitHub-style token assembled at run time, so that no
// secret scanner takes this file for a leak.
var leakyToken = "gh" + "p_" + strings.Repeat("aZ3kQ9", 6)

// leakyStore writes one session whose messages hold a token and a password.
func leakyStore(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	s := dshgen.NewSession("s-leaky").Cwd("/w").CreatedAt(1000).Title("Deploy notes", "provider").
		UserText("Deploy with GITHUB_TOKEN=" + leakyToken).AssistantText("Stored; password=hunter22 is in the vault.")
	if _, err := s.Save(root, dshgen.Raw); err != nil {
		t.Fatal(err)
	}
	return root
}

// TestCLIPrepareRedactSecrets: `prepare --redact-secrets` replaces the
// secrets and counts them in the reference record; without the flag the
// output is dsh's, with no "redactions" at all.
func TestCLIPrepareRedactSecrets(t *testing.T) {
	root := leakyStore(t)
	args := []string{"prepare", "--sessions-root", root, "--session", "s-target", "--spill-dir", "", "--text", "see " + sessionref.Mention("Deploy", "s-leaky")}
	plain, errOut, code := runCLI(t, nil, args...)
	if code != 0 {
		t.Fatalf("prepare exited %d: %s", code, errOut)
	}
	if strings.Contains(plain, "redact") || !strings.Contains(plain, "hunter22") || !strings.Contains(plain, leakyToken) {
		t.Errorf("without the flag the secrets are recalled as said and nothing is counted:\n%s", plain)
	}
	out, errOut, code := runCLI(t, nil, append(args, "--redact-secrets")...)
	if code != 0 {
		t.Fatalf("prepare --redact-secrets exited %d: %s", code, errOut)
	}
	var res prepare.TextResult
	if err := json.Unmarshal([]byte(out), &res); err != nil || res.AdditionalContext == nil {
		t.Fatalf("output %s: %v", out, err)
	}
	facts := res.AdditionalContext.Source.References[0]
	prompt := res.AdditionalContext.Content[0].Text
	if facts.Redactions == nil || *facts.Redactions != 2 {
		t.Errorf("redactions %v, want 2:\n%s", facts.Redactions, out)
	}
	if strings.Contains(out, "hunter22") || strings.Contains(out, leakyToken) ||
		!strings.Contains(prompt, "GITHUB_TOKEN=[redacted: github-token]") || !strings.Contains(prompt, "password=[redacted: password]") {
		t.Errorf("prompt:\n%s", prompt)
	}
}

// TestBinaryRedactSecrets drives the server over pipes: with redactSecrets
// on, dsh/prepare and hover show the replacements and the count; a
// non-boolean value is INVALID_CONFIG.
func TestBinaryRedactSecrets(t *testing.T) {
	root := leakyStore(t)
	ws := t.TempDir()
	mention := sessionref.Mention("Deploy", "s-leaky")
	p := startWire(t, "--sessions-root", root, "--watch", "off")
	p.send(map[string]any{"id": "init", "method": "initialize", "params": map[string]any{
		"processId": nil, "rootUri": "file://" + ws, "capabilities": map[string]any{},
		"initializationOptions": map[string]any{"sessionId": "s-target", "redactSecrets": true}}})
	p.expectResult("initialize", `"init"`)
	p.send(map[string]any{"method": "initialized", "params": map[string]any{}})

	p.send(map[string]any{"id": "prep", "method": "dsh/prepare", "params": map[string]any{"text": "see " + mention}})
	a := p.expectResult("dsh/prepare", `"prep"`)
	var res prepare.TextResult
	if err := json.Unmarshal(a.Result, &res); err != nil || res.AdditionalContext == nil {
		t.Fatalf("prepare %s: %v", a.Result, err)
	}
	if r := res.AdditionalContext.Source.References[0].Redactions; r == nil || *r != 2 || strings.Contains(string(a.Result), "hunter22") {
		t.Errorf("prepare: %s", a.Result)
	}

	p.send(map[string]any{"method": "textDocument/didOpen", "params": map[string]any{"textDocument": map[string]any{
		"uri": "file://" + ws + "/p.md", "languageId": "markdown", "version": 1, "text": mention}}})
	p.send(map[string]any{"id": "hover", "method": "textDocument/hover", "params": map[string]any{
		"textDocument": map[string]any{"uri": "file://" + ws + "/p.md"}, "position": map[string]any{"line": 0, "character": 3}}})
	a = p.expectResult("hover", `"hover"`)
	var hv struct {
		Contents struct {
			Value string `json:"value"`
		} `json:"contents"`
	}
	if err := json.Unmarshal(a.Result, &hv); err != nil || !strings.Contains(hv.Contents.Value, "2 secrets redacted") ||
		strings.Contains(hv.Contents.Value, leakyToken) || !strings.Contains(hv.Contents.Value, "[redacted: github-token]") {
		t.Errorf("hover %s (%v)", a.Result, err)
	}

	p.send(map[string]any{"id": "down", "method": "shutdown"})
	p.expectResult("shutdown", `"down"`)
	p.send(map[string]any{"method": "exit"})
	if _, code := p.finish(); code != 0 {
		t.Errorf("exit code %d\nstderr:\n%s", code, p.stderr.String())
	}

	// A non-boolean value fails initialize with INVALID_CONFIG, by name.
	q := startWire(t, "--sessions-root", root, "--watch", "off")
	q.send(map[string]any{"id": "init", "method": "initialize", "params": map[string]any{
		"processId": nil, "capabilities": map[string]any{}, "initializationOptions": map[string]any{"redactSecrets": "yes"}}})
	f := q.next().Raw
	var e struct {
		ID    string `json:"id"`
		Error struct {
			Message string `json:"message"`
			Data    struct {
				Code string `json:"code"`
			} `json:"data"`
		} `json:"error"`
	}
	if err := json.Unmarshal(f, &e); err != nil || e.ID != "init" || e.Error.Data.Code != string(sessionref.CodeInvalidConfig) ||
		!strings.Contains(e.Error.Message, "redactSecrets") {
		t.Errorf("redactSecrets \"yes\": %s (%v)", f, err)
	}
}
