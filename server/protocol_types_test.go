package server

import (
	"bytes"
	"encoding/json"
	"testing"

	"go.lsp.dev/protocol"

	"github.com/dsh-refls/dsh-refls/sessionref"
)

// decodeStrict decodes raw into v with protocol's own codec, then checks
// that v encodes back to the same JSON: a field of ours with a name, type or
// shape protocol's types do not have is dropped or changed, and fails here.
func decodeStrict(t *testing.T, what string, raw json.RawMessage, v any) {
	t.Helper()
	if err := protocol.Unmarshal(raw, v); err != nil {
		t.Errorf("%s does not decode into %T: %v\n%s", what, v, err, raw)
		return
	}
	back, err := protocol.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var a, b any
	if json.Unmarshal(raw, &a) != nil || json.Unmarshal(back, &b) != nil {
		t.Fatalf("%s: not JSON", what)
	}
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	if !bytes.Equal(ja, jb) {
		t.Errorf("%s changes through %T:\nours:     %s\nprotocol: %s", what, v, ja, jb)
	}
}

// TestResultsDecodeIntoProtocolTypes: what the server sends for initialize,
// completion, resolve, hover and diagnostics decodes strictly into
// go.lsp.dev/protocol's types and re-encodes unchanged, so the hand-written
// shapes of protocol_types.go cannot drift from the protocol.
func TestResultsDecodeIntoProtocolTypes(t *testing.T) {
	opts, fake, ws := testOptions(t)
	h := newHarness(t, opts)
	var init json.RawMessage
	if err := h.call("initialize", initParams(initOptions{root: ws, markdown: true, labelDetails: true, insertReplace: true,
		settings: map[string]any{"sessionId": "s-target"}}), &init); err != nil {
		t.Fatal(err)
	}
	h.notify("initialized", map[string]any{})
	decodeStrict(t, "initialize", init, &protocol.InitializeResult{})
	fake.waitBuilt(t)

	pos := h.open("file:///p.md", "see @par‸", EncodingUTF16)
	var list json.RawMessage
	h.mustCall("textDocument/completion", map[string]any{"textDocument": map[string]any{"uri": "file:///p.md"}, "position": pos}, &list)
	decodeStrict(t, "completion", list, &protocol.CompletionList{})

	var items struct{ Items []json.RawMessage }
	if err := json.Unmarshal(list, &items); err != nil || len(items.Items) == 0 {
		t.Fatalf("completion list %s: %v", list, err)
	}
	var resolved json.RawMessage
	h.mustCall("completionItem/resolve", items.Items[0], &resolved)
	decodeStrict(t, "completionItem/resolve", resolved, &protocol.CompletionItem{})

	mention := sessionref.Mention("Fix the parser", "s-alpha")
	hpos := h.open("file:///h.md", "@[Fix‸"+mention[len("@[Fix"):]+" "+sessionref.Mention("ghost", "s-ghost"), EncodingUTF16)
	var hover json.RawMessage
	h.mustCall("textDocument/hover", map[string]any{"textDocument": map[string]any{"uri": "file:///h.md"}, "position": hpos}, &hover)
	decodeStrict(t, "hover", hover, &protocol.Hover{})

	p := h.diagnosticsFor("file:///h.md", 1)
	if len(p.Diagnostics) == 0 {
		t.Fatal("no diagnostic for the unknown session")
	}
	for _, n := range h.notesOf("textDocument/publishDiagnostics") {
		decodeStrict(t, "publishDiagnostics", n.Params, &protocol.PublishDiagnosticsParams{})
	}
}
