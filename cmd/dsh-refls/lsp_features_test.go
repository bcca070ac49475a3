package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dsh-refls/dsh-refls/internal/dshgen"
	"github.com/dsh-refls/dsh-refls/sessionref"
)

// startLSPWire starts the binary on a demo store with a workspace holding
// src/lines.txt (12 lines), initialized with caps.
func startLSPWire(t *testing.T, caps map[string]any) (*wireProc, string, []dshgen.Expected) {
	t.Helper()
	store, ws := t.TempDir(), t.TempDir()
	expected, err := dshgen.DemoStoreFor(store, ws, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(ws, "src"), 0o755); err != nil {
		t.Fatal(err)
	}
	lines := strings.Repeat("some line\n", 12)
	if err := os.WriteFile(filepath.Join(ws, "src", "lines.txt"), []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	p := startWire(t, "--sessions-root", store, "--watch", "poll")
	p.send(map[string]any{"id": "init", "method": "initialize", "params": map[string]any{
		"processId": nil, "rootUri": "file://" + ws, "capabilities": caps,
		"initializationOptions": map[string]any{"sessionId": expected[0].ID, "cwd": ws}}})
	p.expectResult("initialize", `"init"`)
	p.send(map[string]any{"method": "initialized", "params": map[string]any{}})
	return p, ws, expected
}

func TestBinaryLineRanges(t *testing.T) {
	p, ws, _ := startLSPWire(t, map[string]any{})
	uri := "file://" + ws + "/prompt.md"
	text := "ok @src/lines.txt#L2-3\npast @src/lines.txt#L10-13"
	p.send(map[string]any{"method": "textDocument/didOpen", "params": map[string]any{"textDocument": map[string]any{
		"uri": uri, "languageId": "markdown", "version": 1, "text": text}}})
	var diags struct {
		Diagnostics []struct {
			Range struct {
				Start struct{ Line int } `json:"start"`
			} `json:"range"`
			Severity int    `json:"severity"`
			Message  string `json:"message"`
		} `json:"diagnostics"`
	}
	if err := json.Unmarshal(p.notification("textDocument/publishDiagnostics"), &diags); err != nil {
		t.Fatal(err)
	}
	if len(diags.Diagnostics) != 1 || diags.Diagnostics[0].Range.Start.Line != 1 || diags.Diagnostics[0].Severity != 2 ||
		!strings.Contains(diags.Diagnostics[0].Message, "has 12 lines: the range L10-13 is past its end") {
		t.Errorf("diagnostics = %+v, want one warning on line 1", diags.Diagnostics)
	}

	p.send(map[string]any{"id": 1, "method": "textDocument/hover", "params": map[string]any{
		"textDocument": map[string]any{"uri": uri}, "position": map[string]any{"line": 0, "character": 6}}})
	a := p.expectResult("hover", "1")
	var hv struct {
		Contents struct{ Value string } `json:"contents"`
	}
	if err := json.Unmarshal(a.Result, &hv); err != nil || !strings.Contains(hv.Contents.Value, "Lines 2–3 of 12\nsome line\nsome line\n") {
		t.Errorf("hover = %s (%v)", a.Result, err)
	}

	p.send(map[string]any{"id": 2, "method": "dsh/prepare", "params": map[string]any{"text": text}})
	a = p.expectResult("prepare", "2")
	var prep struct {
		Files json.RawMessage `json:"files"`
	}
	if err := json.Unmarshal(a.Result, &prep); err != nil {
		t.Fatal(err)
	}
	want := `[{"path":"src/lines.txt","kind":"file","range":{"start":2,"end":3}},{"path":"src/lines.txt","kind":"file","range":{"start":10,"end":13}}]`
	if string(prep.Files) != want {
		t.Errorf("files = %s, want %s", prep.Files, want)
	}
	if _, code := p.finish(); code != 1 {
		// No shutdown was sent: the exit code says so (LSP: 1).
		t.Errorf("exit code %d, want 1 without shutdown", code)
	}
}

// featureCaps are the capabilities VS Code declares for the editor
// features beyond completion and hover.
func featureCaps() map[string]any {
	return map[string]any{
		"textDocument": map[string]any{
			"codeAction": map[string]any{"codeActionLiteralSupport": map[string]any{
				"codeActionKind": map[string]any{"valueSet": []string{"quickfix"}}}},
			"inlayHint": map[string]any{},
		},
		"window":    map[string]any{"showDocument": map[string]any{"support": true}},
		"workspace": map[string]any{"symbol": map[string]any{}, "inlayHint": map[string]any{"refreshSupport": true}},
	}
}

func TestBinaryQuickFix(t *testing.T) {
	p, ws, expected := startLSPWire(t, featureCaps())
	ref := expected[1]
	typo := ref.DisplayTitle[:len(ref.DisplayTitle)-1]
	uri := "file://" + ws + "/prompt.md"
	text := "see @[" + typo + "](dsh-session:%%%) and @src/line.txt"
	p.send(map[string]any{"method": "textDocument/didOpen", "params": map[string]any{"textDocument": map[string]any{
		"uri": uri, "languageId": "markdown", "version": 1, "text": text}}})
	p.send(map[string]any{"id": 1, "method": "textDocument/codeAction", "params": map[string]any{
		"textDocument": map[string]any{"uri": uri},
		"range":        map[string]any{"start": map[string]any{"line": 0, "character": 0}, "end": map[string]any{"line": 0, "character": len(text)}},
		"context":      map[string]any{"diagnostics": []any{}}}})
	a := p.expectResult("codeAction", "1")
	var actions []struct {
		Title       string `json:"title"`
		IsPreferred bool   `json:"isPreferred"`
	}
	if err := json.Unmarshal(a.Result, &actions); err != nil {
		t.Fatal(err)
	}
	var preferred []string
	for _, ac := range actions {
		if ac.IsPreferred {
			preferred = append(preferred, ac.Title)
		}
	}
	want := []string{"Replace with @[" + ref.DisplayTitle + "](…)", "Replace with src/lines.txt"}
	if strings.Join(preferred, "|") != strings.Join(want, "|") {
		t.Errorf("preferred fixes %q, want %q (all %s)", preferred, want, a.Result)
	}
	p.finish()
}

func TestBinaryFileLinks(t *testing.T) {
	p, ws, _ := startLSPWire(t, map[string]any{})
	uri := "file://" + ws + "/prompt.md"
	p.send(map[string]any{"method": "textDocument/didOpen", "params": map[string]any{"textDocument": map[string]any{
		"uri": uri, "languageId": "markdown", "version": 1, "text": "see @src/lines.txt#L3-4 and @nope.md"}}})
	p.send(map[string]any{"id": 1, "method": "textDocument/documentLink", "params": map[string]any{"textDocument": map[string]any{"uri": uri}}})
	a := p.expectResult("documentLink", "1")
	var links []struct {
		Target string `json:"target"`
	}
	if err := json.Unmarshal(a.Result, &links); err != nil {
		t.Fatal(err)
	}
	want := "file://" + filepath.ToSlash(filepath.Join(ws, "src", "lines.txt")) + "#L3-4"
	if len(links) != 1 || links[0].Target != want {
		t.Errorf("links %s, want one to %s", a.Result, want)
	}
	p.finish()
}

func TestBinaryInlayHints(t *testing.T) {
	p, ws, expected := startLSPWire(t, featureCaps())
	ref := expected[1]
	uri := "file://" + ws + "/prompt.md"
	p.send(map[string]any{"method": "textDocument/didOpen", "params": map[string]any{"textDocument": map[string]any{
		"uri": uri, "languageId": "markdown", "version": 1, "text": "see " + sessionref.Mention(ref.DisplayTitle, ref.ID)}}})
	p.send(map[string]any{"id": 1, "method": "textDocument/inlayHint", "params": map[string]any{"textDocument": map[string]any{"uri": uri},
		"range": map[string]any{"start": map[string]any{"line": 0, "character": 0}, "end": map[string]any{"line": 1, "character": 0}}}})
	a := p.expectResult("inlayHint", "1")
	var hints []struct {
		Label string `json:"label"`
	}
	if err := json.Unmarshal(a.Result, &hints); err != nil {
		t.Fatal(err)
	}
	if len(hints) != 1 || !strings.HasPrefix(hints[0].Label, "· ") || !strings.Contains(hints[0].Label, "msg") {
		t.Errorf("hints = %s, want one recall hint", a.Result)
	}
	p.finish()
}

func TestBinaryWorkspaceSymbols(t *testing.T) {
	p, _, expected := startLSPWire(t, featureCaps())
	ref := expected[1]
	p.send(map[string]any{"id": 1, "method": "workspace/symbol", "params": map[string]any{"query": ref.ID}})
	a := p.expectResult("workspace/symbol", "1")
	var syms []struct {
		Name     string `json:"name"`
		Location struct {
			URI string `json:"uri"`
		} `json:"location"`
	}
	if err := json.Unmarshal(a.Result, &syms); err != nil {
		t.Fatal(err)
	}
	if len(syms) != 1 || syms[0].Name != ref.DisplayTitle || !strings.HasPrefix(syms[0].Location.URI, "dsh-refls:/session/") {
		t.Errorf("workspace/symbol %q = %s, want %q at its preview", ref.ID, a.Result, ref.DisplayTitle)
	}
	p.finish()
}
