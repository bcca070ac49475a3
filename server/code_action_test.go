package server

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/dsh-refls/dsh-refls/sessionref"

	"github.com/dsh-refls/dsh-refls/internal/lsptest"
)

// featureInit initializes h with the feature capabilities an editor such
// as VS Code declares (code action literals, showDocument, inlay hints
// with refresh, workspace symbols) on top of o.
func featureInit(t *testing.T, h *harness, o initOptions) initializeResult {
	t.Helper()
	p := initParams(o)
	caps := p["capabilities"].(map[string]any)
	td := caps["textDocument"].(map[string]any)
	td["codeAction"] = map[string]any{"codeActionLiteralSupport": map[string]any{
		"codeActionKind": map[string]any{"valueSet": []string{"quickfix"}}}}
	td["inlayHint"] = map[string]any{}
	caps["window"].(map[string]any)["showDocument"] = map[string]any{"support": true}
	caps["workspace"] = map[string]any{"symbol": map[string]any{}, "inlayHint": map[string]any{"refreshSupport": true}}
	var res initializeResult
	h.mustCall("initialize", p, &res)
	h.notify("initialized", map[string]any{})
	return res
}

type wireAction struct {
	Title       string         `json:"title"`
	Kind        string         `json:"kind"`
	IsPreferred bool           `json:"isPreferred"`
	Diagnostics []diagnostic   `json:"diagnostics"`
	Edit        *workspaceEdit `json:"edit"`
	Command     *command       `json:"command"`
}

// applyEdit applies the edits of one document of a WorkspaceEdit to text,
// as a client does: all ranges refer to the text before the edit.
func applyEdit(t *testing.T, text, uri string, we *workspaceEdit) string {
	t.Helper()
	if we == nil {
		t.Fatal("no edit")
	}
	edits := slices.Clone(we.Changes[uri])
	if len(edits) == 0 || len(we.Changes) != 1 {
		t.Fatalf("edit changes %+v, want edits of %s only", we.Changes, uri)
	}
	m := NewMapper(text, EncodingUTF16)
	type span struct {
		start, end int
		text       string
	}
	var spans []span
	for _, e := range edits {
		s, err1 := m.Offset(e.Range.Start)
		en, err2 := m.Offset(e.Range.End)
		if err1 != nil || err2 != nil {
			t.Fatalf("edit range %+v outside the text", e.Range)
		}
		spans = append(spans, span{s, en, e.NewText})
	}
	slices.SortFunc(spans, func(a, b span) int { return b.start - a.start })
	for i, sp := range spans {
		if i > 0 && sp.end > spans[i-1].start {
			t.Fatalf("overlapping edits %+v", spans)
		}
		text = text[:sp.start] + sp.text + text[sp.end:]
	}
	return text
}

// actionsAt asks for the code actions of the whole of line n of uri.
func actionsAt(t *testing.T, h *harness, uri string, line int) []wireAction {
	t.Helper()
	var out []wireAction
	h.mustCall("textDocument/codeAction", map[string]any{"textDocument": map[string]any{"uri": uri},
		"range":   Range{Start: Position{line, 0}, End: Position{line, 10000 / 10}},
		"context": map[string]any{"diagnostics": []any{}}}, &out)
	return out
}

// TestQuickFixes: each diagnostic kind offers a fix; applying the preferred
// one leaves a document without diagnostics.
func TestQuickFixes(t *testing.T) {
	cases := []struct {
		name     string
		text     string
		title    string // the title of the preferred fix
		want     string // the text after applying it
		settings map[string]any
	}{
		{"unknown session", "see " + sessionref.Mention("Fix the parsr", "s-ghost") + " now",
			"Replace with @[Fix the parser](…)", "see " + sessionref.Mention("Fix the parser", "s-alpha") + " now", nil},
		{"malformed session", "see @[Huge log](dsh-session:%%%) now",
			"Replace with @[Huge log](…)", "see " + sessionref.Mention("Huge log", "s-delta") + " now", nil},
		{"bare URI", "see " + sessionref.EncodeURI("s-alpha") + " now",
			"Write as @[Fix the parser](…)", "see " + sessionref.Mention("Fix the parser", "s-alpha") + " now", nil},
		{"self reference", "a " + sessionref.Mention("me", "s-target") + " b",
			"Remove the reference to this session", "a b", map[string]any{"sessionId": "s-target"}},
		{"too many", sessionref.Mention("a", "s-alpha") + " " + sessionref.Mention("d", "s-delta") + " " +
			sessionref.Mention("b", "s-beta") + " and " + sessionref.Mention("a2", "s-delta"),
			"Remove the mentions beyond the first 1 sessions", sessionref.Mention("a", "s-alpha") + " and",
			map[string]any{"maxReferences": 1}},
		{"missing file", "read @src/mian.go#L1 first", "Replace with src/main.go", "read @src/main.go#L1 first", nil},
		{"missing quoted file", `read @"my docs/gide.md" first`, "Replace with my docs/guide.md", `read @"my docs/guide.md" first`, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			opts, fake, ws := testOptions(t)
			h := newHarness(t, opts)
			res := featureInit(t, h, initOptions{root: ws, settings: c.settings})
			if res.Capabilities.CodeActionProvider == nil || !slices.Equal(res.Capabilities.CodeActionProvider.CodeActionKinds, []string{"quickfix"}) {
				t.Fatalf("codeActionProvider = %+v", res.Capabilities.CodeActionProvider)
			}
			fake.waitBuilt(t)
			h.waitReady(t)
			uri := "file:///fix.md"
			h.open(uri, c.text, EncodingUTF16)
			if c.name != "bare URI" {
				if d := h.diagnosticsFor(uri, 1); len(d.Diagnostics) == 0 {
					t.Fatalf("no diagnostic to fix in %q", c.text)
				}
			}
			actions := actionsAt(t, h, uri, 0)
			var preferred []wireAction
			for _, a := range actions {
				if a.Kind != "quickfix" {
					t.Errorf("action %q of kind %q", a.Title, a.Kind)
				}
				if a.IsPreferred {
					preferred = append(preferred, a)
				}
			}
			if len(preferred) != 1 || preferred[0].Title != c.title {
				t.Fatalf("preferred fixes %+v, want one titled %q (all: %+v)", preferred, c.title, actions)
			}
			fixed := applyEdit(t, c.text, uri, preferred[0].Edit)
			if fixed != c.want {
				t.Errorf("fixed text\n got %q\nwant %q", fixed, c.want)
			}
			h.notify("textDocument/didChange", map[string]any{"textDocument": map[string]any{"uri": uri, "version": 2},
				"contentChanges": []map[string]any{{"text": fixed}}})
			if d := h.diagnosticsFor(uri, 2); len(d.Diagnostics) != 0 {
				t.Errorf("diagnostics after the fix: %+v", d.Diagnostics)
			}
		})
	}
}

// TestQuickFixOpenPreview: an over-budget source offers the preview, a
// command that asks the client to show the dsh-refls: URI.
func TestQuickFixOpenPreview(t *testing.T) {
	opts, _, ws := testOptions(t)
	h := newHarness(t, opts)
	res := featureInit(t, h, initOptions{root: ws, settings: map[string]any{"maxReferenceBytes": testSmallBytes}})
	if res.Capabilities.ExecuteCommandProvider == nil || !slices.Equal(res.Capabilities.ExecuteCommandProvider.Commands, []string{CommandAccepted, CommandForgetPicks, CommandOpenPreview, CommandContinueFrom}) {
		t.Fatalf("executeCommandProvider = %+v", res.Capabilities.ExecuteCommandProvider)
	}
	uri := "file:///big.md"
	h.open(uri, "big "+sessionref.Mention("d", "s-delta"), EncodingUTF16)
	if d := h.diagnosticsFor(uri, 1); len(d.Diagnostics) != 1 || d.Diagnostics[0].Code != string(sessionref.CodeBudgetExceeded) {
		t.Fatalf("diagnostics %+v", d.Diagnostics)
	}
	actions := actionsAt(t, h, uri, 0)
	if len(actions) != 1 || actions[0].Command == nil || actions[0].Title != "Open recall preview" || actions[0].Edit != nil {
		t.Fatalf("actions %+v", actions)
	}
	cmd := actions[0].Command
	h.mustCall("workspace/executeCommand", map[string]any{"command": cmd.Command, "arguments": cmd.Arguments}, nil)
	want := PreviewURI("s-delta", "Huge log")
	var shown []string
	for _, c := range h.editor.Matching(lsptest.ServerCall("window/showDocument")) {
		var p showDocumentParams
		_ = json.Unmarshal(c.Params, &p)
		shown = append(shown, p.URI)
	}
	if !slices.Equal(shown, []string{want}) {
		t.Errorf("showDocument asked for %v, want [%s]", shown, want)
	}
	err := h.call("workspace/executeCommand", map[string]any{"command": "nonesuch", "arguments": []any{}}, nil)
	if code, _ := rpcError(t, err); code != -32602 {
		t.Errorf("unknown command: code %d, want -32602", code)
	}
}

// TestCodeActionsNeedClientSupport: without code action literals (or
// showDocument) the server advertises neither, nor the preview command;
// the frecency commands are for every client.
func TestCodeActionsNeedClientSupport(t *testing.T) {
	opts, _, ws := testOptions(t)
	h := newHarness(t, opts)
	res := h.initialize(initOptions{root: ws})
	raw, _ := json.Marshal(res.Capabilities)
	for _, k := range []string{"codeActionProvider", CommandOpenPreview, "inlayHintProvider", "workspaceSymbolProvider"} {
		if strings.Contains(string(raw), k) {
			t.Errorf("advertised %s to a client without it: %s", k, raw)
		}
	}
	if c := res.Capabilities.ExecuteCommandProvider; c == nil || !slices.Equal(c.Commands, []string{CommandAccepted, CommandForgetPicks, CommandContinueFrom}) {
		t.Errorf("executeCommandProvider %s, want the frecency commands", raw)
	}
}
