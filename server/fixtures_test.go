package server

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/dsh-refls/dsh-refls/sessionref"
	"github.com/dsh-refls/dsh-refls/sessionref/prepare"
	"github.com/dsh-refls/dsh-refls/sessionref/titles"
)

// expectedSession is one entry of the fixtures' expected.json.
type expectedSession struct {
	Name               string  `json:"name"`
	SessionID          string  `json:"sessionId"`
	Cwd                *string `json:"cwd"`
	DisplayTitle       string  `json:"displayTitle"`
	Mention            string  `json:"mention"`
	CapturedThroughSeq *int64  `json:"capturedThroughSeq"`
	Snapshot           struct {
		Stats prepare.Stats `json:"stats"`
	} `json:"snapshot65536"`
}

func loadExpected(t *testing.T, root string) map[string]expectedSession {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, "..", "..", "expected.json"))
	if err != nil {
		t.Fatalf("reading expected.json: %v", err)
	}
	var list []expectedSession
	if err := json.Unmarshal(data, &list); err != nil {
		t.Fatalf("decoding expected.json: %v", err)
	}
	out := map[string]expectedSession{}
	for _, e := range list {
		out[e.Name] = e
	}
	return out
}

// fixtureHarness serves the real session index of the shared fixtures.
func fixtureHarness(t *testing.T, o initOptions) (*harness, map[string]expectedSession) {
	t.Helper()
	root := fixturesRoot(t)
	exp := loadExpected(t, root)
	h := newHarness(t, Options{SessionsRoot: root})
	if o.settings == nil {
		o.settings = map[string]any{}
	}
	o.settings["sessionId"] = exp["multi-turn"].SessionID
	o.settings["cwd"] = "/home/dev/alpha"
	if o.root == "" {
		o.root = t.TempDir()
	}
	h.initialize(o)
	waitStatus(t, h, func(st statusResult) bool { return !st.Building && st.SessionsIndexed > 0 })
	return h, exp
}

func TestFixturesCompletionAndResolve(t *testing.T) {
	h, exp := fixtureHarness(t, initOptions{utf8: false, markdown: true})
	child := exp["subagent-child"]
	// A subagent child (origin "subagent" in dsh's log) is hidden at @…
	pos := h.open("file:///hidden.md", "🇫🇷 ask @CHILD_‸", EncodingUTF16)
	var list wireList
	h.mustCall("textDocument/completion", map[string]any{"textDocument": map[string]any{"uri": "file:///hidden.md"}, "position": pos}, &list)
	for _, it := range list.Items {
		if it.Label == child.DisplayTitle {
			t.Errorf("the subagent child %q is offered without @all:", it.Label)
		}
	}
	// …and listed after @all:.
	pos = h.open("file:///f.md", "🇫🇷 ask @all:CHILD_‸", EncodingUTF16)
	h.mustCall("textDocument/completion", map[string]any{"textDocument": map[string]any{"uri": "file:///f.md"}, "position": pos}, &list)
	var item *wireItem
	for i := range list.Items {
		if list.Items[i].Label == child.DisplayTitle {
			item = &list.Items[i]
		}
		if list.Items[i].Label == exp["multi-turn"].DisplayTitle {
			t.Error("the target session is offered")
		}
	}
	if item == nil {
		t.Fatalf("%q not offered: %+v", child.DisplayTitle, list.Items)
	}
	_, replace, newText := editOf(t, *item)
	wantMention := sessionref.Mention(child.DisplayTitle, child.SessionID)
	if newText != wantMention || newText != child.Mention {
		t.Errorf("inserted %q, want %q", newText, child.Mention)
	}
	// 🇫🇷 is four UTF-16 units: "🇫🇷 ask " is 9.
	if replace.Start != (Position{0, 9}) || replace.End != pos {
		t.Errorf("replace range %+v, want 0:9–%+v", replace, pos)
	}
	var resolved wireItem
	h.mustCall("completionItem/resolve", item, &resolved)
	if resolved.Doc == nil || !strings.Contains(resolved.Doc.Value, "messages kept") {
		t.Fatalf("resolve documentation = %+v", resolved.Doc)
	}
}

func TestFixturesHoverFacts(t *testing.T) {
	h, exp := fixtureHarness(t, initOptions{utf8: true, markdown: false})
	e := exp["packed-chunks"]
	pos := h.open("file:///h.md", "文件 "+e.Mention[:4]+cursor+e.Mention[4:], EncodingUTF8)
	var hv hoverResult
	h.mustCall("textDocument/hover", map[string]any{"textDocument": map[string]any{"uri": "file:///h.md"}, "position": pos}, &hv)
	st := e.Snapshot.Stats
	for _, want := range []string{
		recallOf(st.RetainedMessages, st.OriginalMessages),
		"up to event " + strconv.Itoa(int(*e.CapturedThroughSeq)),
		"budget 64 KB",
		e.SessionID,
	} {
		if !strings.Contains(hv.Contents.Value, want) {
			t.Errorf("hover lacks %q:\n%s", want, hv.Contents.Value)
		}
	}
	if hv.Range.Start != (Position{0, len("文件 ")}) {
		t.Errorf("utf-8 hover range %+v", hv.Range)
	}
}

// recallOf is how the hover says how many messages are kept.
func recallOf(kept, of int) string {
	if kept == of {
		return "all " + strconv.Itoa(of) + " messages kept"
	}
	return strconv.Itoa(kept) + " of " + strconv.Itoa(of) + " messages kept"
}

// TestFixturesPrepareMatchesSessionref checks that dsh/prepare answers
// exactly what prepare.PrepareText returns for the same input (the
// context message id is fresh per call and compared by shape).
func TestFixturesPrepareMatchesSessionref(t *testing.T) {
	spill := t.TempDir()
	h, exp := fixtureHarness(t, initOptions{settings: map[string]any{"spillDir": spill}})
	root := fixturesRoot(t)
	text := "compare " + exp["packed-chunks"].Mention + " with " + exp["fs-edit"].Mention
	var got PrepareResult
	h.mustCall(MethodPrepare, map[string]any{"text": text}, &got)

	ix := titles.NewIndex(root, titles.IndexOptions{})
	if err := ix.Build(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	lim := DefaultConfig().Limits()
	lim.SpillDir = spill
	want, err := prepare.PrepareText(context.Background(), ix.Snapshot(), exp["multi-turn"].SessionID, text, prepare.ModeReplace, nil, lim)
	if err != nil {
		t.Fatal(err)
	}
	if string(got.Content) != string(want.Content) {
		t.Errorf("content %s, want %s", got.Content, want.Content)
	}
	gr, _ := json.Marshal(got.References)
	wr, _ := json.Marshal(want.References)
	if string(gr) != string(wr) {
		t.Errorf("references %s, want %s", gr, wr)
	}
	if got.AdditionalContext == nil || want.AdditionalContext == nil {
		t.Fatal("no context message")
	}
	got.AdditionalContext.ID, want.AdditionalContext.ID = "", ""
	gc, _ := json.Marshal(got.AdditionalContext)
	wc, _ := json.Marshal(want.AdditionalContext)
	if string(gc) != string(wc) {
		t.Errorf("context message differs:\n got %s\nwant %s", gc, wc)
	}
}

// TestFixturesErrorCodes provokes the contract codes through the real
// session index and preparation.
func TestFixturesErrorCodes(t *testing.T) {
	h, exp := fixtureHarness(t, initOptions{settings: map[string]any{"spillDir": t.TempDir()}})
	m := func(name string) string { return exp[name].Mention }
	tests := []struct {
		name   string
		params map[string]any
		code   string
	}{
		{"invalid reference", map[string]any{"text": "x", "references": []any{map[string]any{"label": "no id"}}}, "SESSION_REFERENCE_INVALID_REFERENCE"},
		{"self reference", map[string]any{"text": m("multi-turn")}, "SESSION_REFERENCE_SELF_REFERENCE"},
		{"too many", map[string]any{"text": m("packed-chunks") + m("fs-edit") + m("subagent-child") + m("cancel")}, "SESSION_REFERENCE_TOO_MANY"},
		{"read failed", map[string]any{"text": sessionref.Mention("ghost", "not-in-the-store")}, "SESSION_REFERENCE_READ_FAILED"},
		{"budget exceeded", map[string]any{"text": m("fs-edit"), "maxReferenceBytes": 40}, "SESSION_REFERENCE_BUDGET_EXCEEDED"},
		{"invalid config", map[string]any{"text": m("fs-edit"), "contextWindow": "big"}, "SESSION_REFERENCE_INVALID_CONFIG"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, code := rpcError(t, h.call(MethodPrepare, tt.params, nil))
			if code != tt.code {
				t.Errorf("code %q, want %q", code, tt.code)
			}
		})
	}
}
