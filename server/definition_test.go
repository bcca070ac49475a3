package server

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/dsh-refls/dsh-refls/sessionref"
)

// TestDefinitionOpensThePreview: go to definition and the document link of
// a session mention name a dsh-refls: preview, which dsh/preview serves.
func TestDefinitionOpensThePreview(t *testing.T) {
	opts, _, ws := testOptions(t)
	h := newHarness(t, opts)
	h.initialize(initOptions{root: ws, markdown: true})
	h.waitReady(t)
	mention := sessionref.Mention("the parser", "s-alpha")
	const uri = "file:///def.md"
	pos := h.open(uri, "😀 see "+mention[:6]+cursor+mention[6:]+" and @[x](dsh-session:%%%)", EncodingUTF16)
	var locs []location
	h.mustCall("textDocument/definition", map[string]any{"textDocument": map[string]any{"uri": uri}, "position": pos}, &locs)
	if len(locs) != 1 || !strings.HasPrefix(locs[0].URI, PreviewScheme+":/session/") || !strings.HasSuffix(locs[0].URI, "/Fix%20the%20parser.md") {
		t.Fatalf("definition = %+v, want one dsh-refls: preview named after the session", locs)
	}
	if id, err := sessionOfURI(locs[0].URI); err != nil || id != "s-alpha" {
		t.Errorf("preview URI %s names %q (%v), want s-alpha", locs[0].URI, id, err)
	}
	for _, target := range []string{locs[0].URI, sessionref.EncodeURI("s-alpha")} {
		var prev PreviewResult
		h.mustCall(MethodPreview, map[string]any{"uri": target}, &prev)
		if prev.SessionID != "s-alpha" || prev.Title != "Fix the parser" || !strings.Contains(prev.Markdown, "**Fix the parser**") ||
			!strings.Contains(prev.Markdown, "messages kept") {
			t.Errorf("dsh/preview %s = %+v", target, prev)
		}
	}
	_, code := rpcError(t, h.call(MethodPreview, map[string]any{"uri": "dsh-refls:/status.md"}, nil))
	if code != string(sessionref.CodeInvalidReference) {
		t.Errorf("preview of a URI naming no session: code %q", code)
	}
	// Off the mention: null.
	var none json.RawMessage
	h.mustCall("textDocument/definition", map[string]any{"textDocument": map[string]any{"uri": uri}, "position": Position{0, 1}}, &none)
	if string(none) != "null" {
		t.Errorf("definition off a mention = %s, want null", none)
	}
	// One link per well-formed mention, over the whole mention.
	var links []documentLink
	h.mustCall("textDocument/documentLink", map[string]any{"textDocument": map[string]any{"uri": uri}}, &links)
	start := colOf("😀 see "+mention, mention, EncodingUTF16)
	if len(links) != 1 || links[0].Target != locs[0].URI || links[0].Range.Start.Character != start ||
		links[0].Range.End.Character != start+colOf(mention+"\x00", "\x00", EncodingUTF16) {
		t.Errorf("links = %+v, want one over %q to %s", links, mention, locs[0].URI)
	}
}

// TestPreviewsAreNotDiagnosed: a document of the dsh-refls: scheme (or any
// scheme but file and untitled) gets no diagnostics, however broken.
func TestPreviewsAreNotDiagnosed(t *testing.T) {
	opts, _, ws := testOptions(t)
	h := newHarness(t, opts)
	h.initialize(initOptions{root: ws})
	broken := "@nope.md and " + sessionref.Mention("ghost", "s-ghost")
	for _, uri := range []string{PreviewURI("s-alpha", "Fix the parser"), "git:/x/prompt.md"} {
		h.open(uri, broken, EncodingUTF16)
	}
	// Opened after the others with the same debounce: once its diagnostics
	// are out, theirs would have been too.
	h.open("untitled:Untitled-1", broken, EncodingUTF16)
	if p := h.diagnosticsFor("untitled:Untitled-1", 1); len(p.Diagnostics) != 2 {
		t.Errorf("untitled document: %d diagnostics, want 2: %+v", len(p.Diagnostics), p.Diagnostics)
	}
	for _, n := range h.notesOf("textDocument/publishDiagnostics") {
		var p publishDiagnosticsParams
		if err := json.Unmarshal(n.Params, &p); err != nil {
			t.Fatal(err)
		}
		if !diagnosable(p.URI) {
			t.Errorf("diagnostics published for %s: %+v", p.URI, p.Diagnostics)
		}
	}
	if diagnosable("dsh-refls:/status.md") || !diagnosable("file:///c%3A/x.md") || !diagnosable(`C:\x.md`) {
		t.Error("diagnosable misjudges a scheme")
	}
}
