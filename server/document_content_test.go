package server

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/dsh-refls/dsh-refls/sessionref"
)

// initializeWithDocumentContent initializes a harness whose client
// declares workspace/textDocumentContent (LSP 3.18) when declare is set.
func initializeWithDocumentContent(t *testing.T, h *harness, ws string, declare bool) initializeResult {
	t.Helper()
	p := initParams(initOptions{root: ws, settings: map[string]any{"sessionId": "s-target", "cwd": testCwd}})
	if declare {
		caps := p["capabilities"].(map[string]any)
		caps["workspace"] = map[string]any{"textDocumentContent": map[string]any{"dynamicRegistration": false}}
	}
	var res initializeResult
	if err := h.call("initialize", p, &res); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	h.notify("initialized", map[string]any{})
	return res
}

func documentText(t *testing.T, h *harness, uri string) string {
	t.Helper()
	var res textDocumentContentResult
	h.mustCall("workspace/textDocumentContent", map[string]any{"uri": uri}, &res)
	return res.Text
}

// TestDocumentContentIsAnnouncedToClientsThatDeclareIt: the scheme is
// announced only to a client that declares workspace/textDocumentContent;
// other clients keep their own views.
func TestDocumentContentIsAnnouncedToClientsThatDeclareIt(t *testing.T) {
	for _, declare := range []bool{false, true} {
		opts, _, ws := testOptions(t)
		h := newHarness(t, opts)
		res := initializeWithDocumentContent(t, h, ws, declare)
		got := res.Capabilities.Workspace
		switch {
		case !declare && got != nil:
			t.Errorf("a client without textDocumentContent is announced %+v", got)
		case declare && (got == nil || got.TextDocumentContent == nil || strings.Join(got.TextDocumentContent.Schemes, ",") != PreviewScheme):
			t.Errorf("a client with textDocumentContent is announced %+v, want the %s scheme", got, PreviewScheme)
		}
	}
}

// TestDocumentContentServesPreviewsStatusAndPreparedViews reads every
// kind of document the server serves: a session's preview (as dsh/preview
// gives it), the index status, and the two views of a prepared message,
// kept for the 20 latest messages.
func TestDocumentContentServesPreviewsStatusAndPreparedViews(t *testing.T) {
	opts, fake, ws := testOptions(t)
	h := newHarness(t, opts)
	initializeWithDocumentContent(t, h, ws, true)
	fake.waitBuilt(t)

	uri := PreviewURI("s-alpha", "Fix the parser")
	var prev PreviewResult
	h.mustCall(MethodPreview, map[string]any{"uri": uri}, &prev)
	if got := documentText(t, h, uri); got != prev.Markdown || !strings.Contains(got, "**Fix the parser**") {
		t.Errorf("the preview document is %q, want dsh/preview's %q", got, prev.Markdown)
	}

	status := documentText(t, h, viewURI(statusDocumentPath))
	for _, want := range []string{"# dsh-refls index status\n", "- **sessionsIndexed**: 5\n", "- **workspaceRoot**: ", "\n## skipped\n\n```json\n"} {
		if !strings.Contains(status, want) {
			t.Errorf("the status document lacks %q:\n%s", want, status)
		}
	}

	text := "See " + sessionref.Mention("Fix the parser", "s-alpha") + " and fix it."
	var first PrepareResult
	h.mustCall(MethodPrepare, map[string]any{"text": text, "views": true}, &first)
	if first.Views == nil || first.Views.Message == "" || first.Views.Context == "" {
		t.Fatalf("dsh/prepare with views returned %+v", first.Views)
	}
	var content string
	if err := json.Unmarshal(first.Content, &content); err != nil {
		t.Fatal(err)
	}
	if got := documentText(t, h, first.Views.Message); got != content || got != "See @Fix the parser and fix it." {
		t.Errorf("the message view is %q, want the prepared content %q", got, content)
	}
	if got := documentText(t, h, first.Views.Context); got != first.AdditionalContext.Content[0].Text || !strings.Contains(got, "<referenced-sessions>") {
		t.Errorf("the context view is %q, want the context message's text", got)
	}

	// Without views, nothing is kept; a message without mentions has no
	// context view.
	var plain PrepareResult
	h.mustCall(MethodPrepare, map[string]any{"text": text}, &plain)
	if plain.Views != nil {
		t.Errorf("dsh/prepare without views returned views %+v", plain.Views)
	}
	for range keptPreparedViews {
		var r PrepareResult
		h.mustCall(MethodPrepare, map[string]any{"text": "no mentions", "views": true}, &r)
		if r.Views == nil || r.Views.Context != "" || documentText(t, h, r.Views.Message) != "no mentions" {
			t.Fatalf("views of a message without mentions: %+v", r.Views)
		}
	}
	if got := documentText(t, h, first.Views.Message); got != goneViewText {
		t.Errorf("the views of the prepared message %d messages ago are %q, want them gone", keptPreparedViews, got)
	}

	for _, bad := range []string{"file:///tmp/x.md", "dsh-refls:/nothing/here.md", "dsh-refls:/session/%%%/x.md"} {
		code, _ := rpcError(t, h.call("workspace/textDocumentContent", map[string]any{"uri": bad}, nil))
		if code != -32602 && code != -32011 {
			t.Errorf("%s: error code %d, want invalid params", bad, code)
		}
	}
}
