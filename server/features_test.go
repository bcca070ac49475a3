package server

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf16"

	"github.com/dsh-refls/dsh-refls/internal/dshgen"
	"github.com/dsh-refls/dsh-refls/sessionref"
	"github.com/dsh-refls/dsh-refls/sessionref/titles"
)

// wireItem is a completion item as the client decodes it.
type wireItem struct {
	Label        string          `json:"label"`
	Kind         int             `json:"kind"`
	Detail       string          `json:"detail"`
	SortText     string          `json:"sortText"`
	FilterText   string          `json:"filterText"`
	LabelDetails *labelDetails   `json:"labelDetails"`
	TextEdit     json.RawMessage `json:"textEdit"`
	Data         json.RawMessage `json:"data"`
	Doc          *markupContent  `json:"documentation"`
}

type wireList struct {
	IsIncomplete bool       `json:"isIncomplete"`
	Items        []wireItem `json:"items"`
}

// editOf decodes an item's edit: the replace range and new text.
func editOf(t *testing.T, it wireItem) (Range, Range, string) {
	t.Helper()
	var e struct {
		Range   *Range `json:"range"`
		Insert  *Range `json:"insert"`
		Replace *Range `json:"replace"`
		NewText string `json:"newText"`
	}
	if err := json.Unmarshal(it.TextEdit, &e); err != nil {
		t.Fatalf("textEdit %s: %v", it.TextEdit, err)
	}
	if e.Range != nil {
		return *e.Range, *e.Range, e.NewText
	}
	if e.Insert == nil || e.Replace == nil {
		t.Fatalf("textEdit %s has neither range nor insert/replace", it.TextEdit)
	}
	return *e.Insert, *e.Replace, e.NewText
}

// isInsertReplaceEdit reports whether it's edit has the shape of an
// InsertReplaceEdit (insert and replace, no range) rather than a TextEdit
// (range only); any other shape fails the test.
func isInsertReplaceEdit(t *testing.T, it wireItem) bool {
	t.Helper()
	var e map[string]json.RawMessage
	if err := json.Unmarshal(it.TextEdit, &e); err != nil {
		t.Fatalf("textEdit %s: %v", it.TextEdit, err)
	}
	_, hasRange := e["range"]
	_, hasInsert := e["insert"]
	_, hasReplace := e["replace"]
	switch {
	case hasInsert && hasReplace && !hasRange:
		return true
	case hasRange && !hasInsert && !hasReplace:
		return false
	}
	t.Fatalf("textEdit %s is neither a TextEdit nor an InsertReplaceEdit", it.TextEdit)
	return false
}

func TestCompletion(t *testing.T) {
	tests := []struct {
		name   string
		line   string // with the cursor marker
		token  string // the whole token the edit must span
		symbol string // what Emacs takes for the symbol before point
		caps   initOptions
		labels []string // labels that must be offered
		absent []string // labels that must not be offered
	}{
		{"emoji before at, utf-16", "😀 see @par‸", "@par", "par", initOptions{}, []string{"Fix the parser", "src/parser.go"}, []string{"The current session"}},
		{"cursor at the end, insert/replace", "see @par‸", "@par", "par", initOptions{insertReplace: true}, []string{"Fix the parser", "src/parser.go"}, nil},
		{"emoji before at, utf-8", "😀 see @par‸", "@par", "par", initOptions{utf8: true}, []string{"Fix the parser", "src/parser.go"}, nil},
		{"CJK before at, insert/replace", "文件 @sr‸c/main", "@src/main", "sr", initOptions{insertReplace: true}, []string{"src/"}, nil},
		{"directory listing", "@src/‸", "@src/", "src/", initOptions{}, []string{"src/main.go", "src/parser.go"}, []string{"Fix the parser"}},
		{"quoted directory", `@"my d‸`, `@"my d`, "d", initOptions{}, []string{"my docs/"}, nil},
		{"emoji before quoted, utf-16", `😀 @"my d‸`, `@"my d`, "d", initOptions{}, []string{"my docs/"}, nil},
		{"emoji before quoted, utf-8", `😀 @"my d‸`, `@"my d`, "d", initOptions{utf8: true}, []string{"my docs/"}, nil},
		{"cursor inside the token, utf-16", "😀 see @pa‸r", "@par", "pa", initOptions{}, []string{"Fix the parser", "src/parser.go"}, nil},
		{"cursor inside the token, utf-8, insert/replace", "😀 see @pa‸r", "@par", "pa", initOptions{utf8: true, insertReplace: true}, []string{"Fix the parser", "src/parser.go"}, nil},
		{"hidden only when asked", "@.hi‸", "@.hi", "hi", initOptions{}, []string{".hidden/"}, nil},
		// A subagent child is listed after the switch that shows hidden kinds.
		{"descriptor label", "@all:direct‸", "@all:direct", "direct", initOptions{labelDetails: true}, []string{"Check direct child"}, nil},
		{"subagent child hidden", "@direct‸", "@direct", "direct", initOptions{labelDetails: true}, nil, []string{"Check direct child"}},
		{"after a dot, no symbol", "@src/main.‸", "@src/main.", "", initOptions{}, []string{"src/main.go"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts, fake, ws := testOptions(t)
			h := newHarness(t, opts)
			tt.caps.root = ws
			tt.caps.settings = map[string]any{"sessionId": "s-target", "cwd": "/home/dev/proj"}
			res := h.initialize(tt.caps)
			fake.waitBuilt(t)
			enc := PositionEncoding(res.Capabilities.PositionEncoding)
			marked := "first line\n" + tt.line + "\nlast"
			pos := h.open("file:///doc.md", marked, enc)
			var list wireList
			h.mustCall("textDocument/completion", map[string]any{"textDocument": map[string]any{"uri": "file:///doc.md"}, "position": pos}, &list)
			text, _ := splitMarked(t, marked, enc)
			line := strings.Split(text, "\n")[1]
			wantStart := Position{Line: 1, Character: colOf(line, tt.token, enc)}
			wantEnd := Position{Line: 1, Character: wantStart.Character + colOf(tt.token+"\x00", "\x00", enc)}
			// typed is the token text from the @ to the cursor.
			typed := line[strings.Index(line, tt.token):strings.Index(tt.line, cursor)]
			got := map[string]wireItem{}
			for i, it := range list.Items {
				got[it.Label] = it
				insert, replace, newText := editOf(t, it)
				if replace.Start != wantStart || replace.End != wantEnd {
					t.Errorf("%q: replace range %+v, want %+v–%+v", it.Label, replace, wantStart, wantEnd)
				}
				// Without insert/replace support the one range is the
				// replace range, checked above.
				if tt.caps.insertReplace && (insert.End != pos || insert.Start != wantStart) {
					t.Errorf("%q: insert range %+v, want %+v–%+v", it.Label, insert, wantStart, pos)
				}
				// VS Code fuzzy-matches the text from the range start to
				// the cursor against filterText: it must match at the same
				// place, after the same text, in every item, so that all
				// score alike and sortText keeps the server's order.
				lead := strings.Index(it.FilterText, typed)
				if lead < 0 || (lead > 0 && it.FilterText[lead-1] != ' ') {
					t.Errorf("%q: filterText %q does not hold the typed %q at a word start", it.Label, it.FilterText, typed)
				} else if i > 0 && it.FilterText[:lead] != list.Items[0].FilterText[:strings.Index(list.Items[0].FilterText, typed)] {
					t.Errorf("%q: filterText %q does not start like %q's, %q", it.Label, it.FilterText, list.Items[0].Label, list.Items[0].FilterText)
				}
				if covered := textInRange(t, line, insert, enc); tt.caps.insertReplace && covered != typed {
					t.Errorf("%q: insert range covers %q, want the typed %q", it.Label, covered, typed)
				}
				// eglot 1.9 keeps an item only when filterText starts with
				// the symbol before point; nvim-cmp matches its keyword there.
				if !strings.HasPrefix(it.FilterText, tt.symbol) {
					t.Errorf("%q: filterText %q does not start with %q, which eglot compares", it.Label, it.FilterText, tt.symbol)
				}
				if want := fmt.Sprintf("%05d", i+1); it.SortText != want {
					t.Errorf("%q: sortText %q, want %q", it.Label, it.SortText, want)
				}
				if !strings.HasPrefix(newText, "@") {
					t.Errorf("%q: newText %q", it.Label, newText)
				}
				// A client that supports insert/replace gets an
				// InsertReplaceEdit (insert and replace, no range); any
				// other client a TextEdit (range only).
				if got := isInsertReplaceEdit(t, it); got != tt.caps.insertReplace {
					t.Errorf("%q: insertReplaceSupport=%v but edit %s", it.Label, tt.caps.insertReplace, it.TextEdit)
				}
			}
			for _, l := range tt.labels {
				if _, ok := got[l]; !ok {
					t.Errorf("label %q missing from %v", l, keys(got))
				}
			}
			for _, l := range tt.absent {
				if _, ok := got[l]; ok {
					t.Errorf("label %q offered", l)
				}
			}
			if it, ok := got["Fix the parser"]; ok {
				_, _, newText := editOf(t, it)
				if newText != sessionref.Mention("Fix the parser", "s-alpha") {
					t.Errorf("session newText %q", newText)
				}
				if it.Kind != completionKindReference {
					t.Errorf("session kind %d", it.Kind)
				}
			}
			if it, ok := got["my docs/"]; ok {
				if _, _, newText := editOf(t, it); newText != `@"my docs/` {
					t.Errorf("quoted directory newText %q, want the quote left open", newText)
				}
			}
			if it, ok := got["Check direct child"]; ok {
				if it.LabelDetails == nil || it.LabelDetails.Description == "" {
					t.Errorf("labelDetails missing though supported: %+v", it)
				}
			}
		})
	}
}

// textInRange is the text of line (line 1 of the test document) that r
// covers, converting columns in enc by counting code units.
func textInRange(t *testing.T, line string, r Range, enc PositionEncoding) string {
	t.Helper()
	if r.Start.Line != 1 || r.End.Line != 1 {
		t.Fatalf("range %+v is not on line 1", r)
	}
	byteAt := func(col int) int {
		if enc == EncodingUTF8 {
			return col
		}
		units := 0
		for i, ru := range line {
			if units >= col {
				return i
			}
			units += len(utf16.Encode([]rune{ru}))
		}
		return len(line)
	}
	start, end := byteAt(r.Start.Character), byteAt(r.End.Character)
	if start > end || end > len(line) {
		t.Fatalf("range %+v outside line %q", r, line)
	}
	return line[start:end]
}

func keys(m map[string]wireItem) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// completeAt opens marked as uri and asks for completion at its cursor.
func completeAt(t *testing.T, h *harness, uri, marked string) wireList {
	t.Helper()
	var list wireList
	pos := h.open(uri, marked, EncodingUTF16)
	h.mustCall("textDocument/completion", map[string]any{"textDocument": map[string]any{"uri": uri}, "position": pos}, &list)
	return list
}

// labelsOf lists the labels of a completion list in order.
func labelsOf(list wireList) []string {
	out := make([]string, 0, len(list.Items))
	for _, it := range list.Items {
		out = append(out, it.Label)
	}
	return out
}

// TestCompletionNarrowsOnTheServer: every list is incomplete, so clients
// ask again on each keystroke, and what `@` did not list (a session past
// candidateLimit, a nested file past fileMaxResults) is reached by typing.
func TestCompletionNarrowsOnTheServer(t *testing.T) {
	opts, fake, ws := testOptions(t)
	old := time.Now().Add(-30 * 24 * time.Hour).UnixMilli()
	fake.add(t, dshgen.NewSession("s-rate").Cwd(testOtherCwd).CreatedAt(old).Turn(func(turn *dshgen.Turn) {
		turn.UserText("plan the rates")
		turn.Title("Rate plan for the shop", "provider")
		turn.AssistantText("Planned.")
	}))
	for _, f := range []string{"design notes/rate plan.md", "a1.md", "a2.md", "a3.md"} {
		p := filepath.Join(ws, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(f), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	h := newHarness(t, opts)
	h.initialize(initOptions{root: ws, settings: map[string]any{"candidateLimit": 2, "fileMaxResults": 3}})
	// While the indexes build and after: always incomplete.
	list := completeAt(t, h, "file:///c.md", "@‸")
	if !list.IsIncomplete {
		t.Error("completion at @ is not incomplete")
	}
	h.waitReady(t)
	list = completeAt(t, h, "file:///c.md", "@‸")
	if !list.IsIncomplete {
		t.Error("completion at @ after the build is not incomplete")
	}
	for _, l := range labelsOf(list) {
		if l == "Rate plan for the shop" || l == "design notes/rate plan.md" {
			t.Fatalf("@ already lists %q (%v): the limits do not cut here, the test proves nothing", l, labelsOf(list))
		}
	}
	list = completeAt(t, h, "file:///c.md", "@rate‸")
	got := labelsOf(list)
	if !list.IsIncomplete || !slices.Contains(got, "Rate plan for the shop") || !slices.Contains(got, "design notes/rate plan.md") {
		t.Errorf("@rate: incomplete %v, items %v; want the session past the limit and the nested file", list.IsIncomplete, got)
	}
	// Not a trigger: an empty list, not null.
	pos := h.open("file:///b.md", "mail a@b‸", EncodingUTF16)
	var raw json.RawMessage
	h.mustCall("textDocument/completion", map[string]any{"textDocument": map[string]any{"uri": "file:///b.md"}, "position": pos}, &raw)
	if !strings.Contains(string(raw), `"items":[]`) {
		t.Errorf("no-trigger completion = %s, want an empty list", raw)
	}
}

// TestCompletionLeavesOutDocumentAndTemporaryFiles: the document being
// edited and the files editors keep beside it are never offered.
func TestCompletionLeavesOutDocumentAndTemporaryFiles(t *testing.T) {
	opts, _, ws := testOptions(t)
	temporary := []string{"#prompt.md#", ".#prompt.md", ".prompt.md.swp", ".prompt.md.swo", "prompt.md~"}
	for _, f := range append([]string{"prompt.md", "prompt notes.md"}, temporary...) {
		if err := os.WriteFile(filepath.Join(ws, f), []byte(f), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	h := newHarness(t, opts)
	h.initialize(initOptions{root: ws})
	h.waitReady(t)
	uri := pathToURI(filepath.Join(ws, "prompt.md"))
	for _, query := range []string{"@prompt‸", "@.prompt‸", "@.#‸", "@#‸", "@‸"} {
		got := labelsOf(completeAt(t, h, uri, query))
		for _, bad := range append([]string{"prompt.md"}, temporary...) {
			if slices.Contains(got, bad) {
				t.Errorf("%s offers %q: %v", query, bad, got)
			}
		}
		if query == "@prompt‸" && !slices.Contains(got, "prompt notes.md") {
			t.Errorf("%s lacks the other file prompt notes.md: %v", query, got)
		}
	}
	// The same file is offered in another document.
	if got := labelsOf(completeAt(t, h, pathToURI(filepath.Join(ws, "other.md")), "@prompt‸")); !slices.Contains(got, "prompt.md") {
		t.Errorf("prompt.md is not offered in another document: %v", got)
	}
}

func TestCompletionUsesVersionAtArrival(t *testing.T) {
	opts, fake, ws := testOptions(t)
	c := newWireClient(t, opts)
	c.initializeWith(map[string]any{"cwd": ws})
	fake.waitBuilt(t)
	text, pos := splitMarked(t, "@par‸", EncodingUTF16)
	c.send(map[string]any{"method": "textDocument/didOpen", "params": map[string]any{"textDocument": map[string]any{
		"uri": "file:///v.md", "languageId": "markdown", "version": 1, "text": text}}})
	// The request and a change that removes the token are pipelined: the
	// request must be answered from the text it arrived with.
	c.send(map[string]any{"id": 7, "method": "textDocument/completion", "params": map[string]any{
		"textDocument": map[string]any{"uri": "file:///v.md"}, "position": pos}})
	c.send(map[string]any{"method": "textDocument/didChange", "params": map[string]any{
		"textDocument":   map[string]any{"uri": "file:///v.md", "version": 2},
		"contentChanges": []map[string]any{{"range": Range{Start: Position{0, 0}, End: Position{0, 4}}, "text": "xyz "}}}})
	c.send(map[string]any{"id": 8, "method": "textDocument/completion", "params": map[string]any{
		"textDocument": map[string]any{"uri": "file:///v.md"}, "position": pos}})
	var before, after wireList
	if m := c.readResponse("7"); m.Error != nil || json.Unmarshal(m.Result, &before) != nil {
		t.Fatalf("first completion: %+v", m.Error)
	}
	if m := c.readResponse("8"); m.Error != nil || json.Unmarshal(m.Result, &after) != nil {
		t.Fatalf("second completion: %+v", m.Error)
	}
	found := false
	for _, it := range before.Items {
		found = found || it.Label == "Fix the parser"
	}
	if !found {
		t.Errorf("completion sent before the change lost its items: %+v", before.Items)
	}
	if len(after.Items) != 0 {
		t.Errorf("after the change the cursor is in %q, yet %d items", "xyz ", len(after.Items))
	}
}

func TestResolve(t *testing.T) {
	for _, markdown := range []bool{true, false} {
		opts, fake, ws := testOptions(t)
		h := newHarness(t, opts)
		h.initialize(initOptions{root: ws, markdown: markdown})
		fake.waitBuilt(t)
		pos := h.open("file:///r.md", "@‸", EncodingUTF16)
		var list wireList
		h.mustCall("textDocument/completion", map[string]any{"textDocument": map[string]any{"uri": "file:///r.md"}, "position": pos}, &list)
		var session, file *wireItem
		for i := range list.Items {
			switch {
			case list.Items[i].Label == "Write `docs` for <api>":
				session = &list.Items[i]
			case list.Items[i].Label == "README.md":
				file = &list.Items[i]
			}
		}
		if session == nil || file == nil {
			t.Fatalf("items missing: %+v", list.Items)
		}
		var resolved wireItem
		h.mustCall("completionItem/resolve", session, &resolved)
		if resolved.Doc == nil {
			t.Fatal("resolve added no documentation")
		}
		wantKind := map[bool]string{true: "markdown", false: "plaintext"}[markdown]
		if resolved.Doc.Kind != wantKind {
			t.Errorf("documentation kind %q, want %q", resolved.Doc.Kind, wantKind)
		}
		for _, want := range []string{"messages kept", "s-beta", "budget 64 KB", "up to event"} {
			if !strings.Contains(resolved.Doc.Value, want) {
				t.Errorf("documentation lacks %q:\n%s", want, resolved.Doc.Value)
			}
		}
		if strings.Index(resolved.Doc.Value, "messages kept") > strings.Index(resolved.Doc.Value, "please fix") {
			t.Error("excerpt comes before the recall facts")
		}
		if markdown && !strings.Contains(resolved.Doc.Value, "````text") {
			t.Errorf("excerpt with a ``` run is not fenced with four backticks:\n%s", resolved.Doc.Value)
		}
		if string(resolved.TextEdit) != string(session.TextEdit) || resolved.Label != session.Label {
			t.Error("resolve changed the item")
		}
		h.mustCall("completionItem/resolve", file, &resolved)
		if resolved.Doc == nil || !strings.Contains(resolved.Doc.Value, "file") || !strings.Contains(resolved.Doc.Value, "bytes") {
			t.Errorf("file documentation = %+v", resolved.Doc)
		}
	}
}

func TestHover(t *testing.T) {
	mention := sessionref.Mention("Fix the parser", "s-alpha")
	tests := []struct {
		name     string
		marked   string
		span     string // the text the hover range must cover
		markdown bool
		contains []string
	}{
		{"session mention, markdown", "😀 see " + mention[:5] + cursor + mention[5:] + " ok", mention, true,
			[]string{"**Fix the parser**", "all 4 messages kept · up to event", "budget 64 KB", "`s-alpha` · in `/home/dev/proj` · created ", ") · last active "}},
		{"session mention, plaintext", "文 " + mention[:3] + cursor + mention[3:], mention, false,
			[]string{"Fix the parser\ns-alpha · in /home/dev/proj", "all 4 messages kept"}},
		{"existing file", "see @src/ma" + cursor + "in.go now", "@src/main.go", true, []string{"file", "bytes", "modified"}},
		{"missing file", "see @nope" + cursor + ".txt", "@nope.txt", false, []string{"missing"}},
		{"outside workspace", "see @../" + cursor + "etc/passwd", "@../etc/passwd", false, []string{"outside workspace"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts, _, ws := testOptions(t)
			h := newHarness(t, opts)
			res := h.initialize(initOptions{root: ws, markdown: tt.markdown})
			enc := PositionEncoding(res.Capabilities.PositionEncoding)
			pos := h.open("file:///h.md", tt.marked, enc)
			var hv hoverResult
			h.mustCall("textDocument/hover", map[string]any{"textDocument": map[string]any{"uri": "file:///h.md"}, "position": pos}, &hv)
			for _, want := range tt.contains {
				if !strings.Contains(hv.Contents.Value, want) {
					t.Errorf("hover lacks %q:\n%s", want, hv.Contents.Value)
				}
			}
			wantKind := map[bool]string{true: "markdown", false: "plaintext"}[tt.markdown]
			if hv.Contents.Kind != wantKind {
				t.Errorf("kind %q, want %q", hv.Contents.Kind, wantKind)
			}
			text, _ := splitMarked(t, tt.marked, enc)
			start := colOf(text, tt.span, enc)
			want := Range{Start: Position{0, start}, End: Position{0, start + colOf(tt.span+"\x00", "\x00", enc)}}
			if hv.Range != want {
				t.Errorf("range %+v, want %+v", hv.Range, want)
			}
		})
	}
	// Nothing under the cursor: null.
	opts, _, ws := testOptions(t)
	h := newHarness(t, opts)
	h.initialize(initOptions{root: ws})
	pos := h.open("file:///n.md", "plain te‸xt", EncodingUTF16)
	var raw json.RawMessage
	h.mustCall("textDocument/hover", map[string]any{"textDocument": map[string]any{"uri": "file:///n.md"}, "position": pos}, &raw)
	if string(raw) != "null" {
		t.Errorf("hover on plain text = %s", raw)
	}
}

func TestDiagnostics(t *testing.T) {
	opts, _, ws := testOptions(t)
	h := newHarness(t, opts)
	h.initialize(initOptions{root: ws, settings: map[string]any{"sessionId": "s-target", "maxReferences": 2}})
	lines := []string{
		"bad dsh-session:" + strings.Repeat("A", 3) + " and @[x](dsh-session:%%%)",
		"self " + sessionref.Mention("me", "s-target"),
		"unknown " + sessionref.Mention("ghost", "s-ghost"),
		"ok " + sessionref.Mention("a", "s-alpha") + " " + sessionref.Mention("b", "s-beta"),
		"third " + sessionref.Mention("g", "s-gamma"),
		"😀 missing @nope.md and present @README.md",
	}
	text := strings.Join(lines, "\n")
	h.open("file:///d.md", text, EncodingUTF16)
	p := h.diagnosticsFor("file:///d.md", 1)
	byCode := map[string][]diagnostic{}
	for _, d := range p.Diagnostics {
		if d.Source != "dsh-refls" {
			t.Errorf("source %q", d.Source)
		}
		byCode[d.Code] = append(byCode[d.Code], d)
	}
	// Line 0 has two malformed mentions: a non-canonical bare URI and a
	// Markdown mention with a malformed URI.
	if ds := byCode["SESSION_REFERENCE_INVALID_REFERENCE"]; len(ds) != 2 || ds[0].Range.Start.Line != 0 || ds[1].Range.Start.Line != 0 {
		t.Errorf("invalid references = %+v", ds)
	}
	wantLine := map[string]int{
		"SESSION_REFERENCE_SELF_REFERENCE": 1,
		"SESSION_REFERENCE_READ_FAILED":    2,
		"SESSION_REFERENCE_TOO_MANY":       4,
		"":                                 5,
	}
	for code, line := range wantLine {
		ds := byCode[code]
		if len(ds) != 1 {
			t.Errorf("code %q: %d diagnostics, want 1 (%+v)", code, len(ds), p.Diagnostics)
			continue
		}
		if ds[0].Range.Start.Line != line {
			t.Errorf("code %q on line %d, want %d", code, ds[0].Range.Start.Line, line)
		}
	}
	if w := byCode[""]; len(w) == 1 {
		if w[0].Severity != severityWarning || !strings.Contains(w[0].Message, "nope.md") {
			t.Errorf("missing-file diagnostic = %+v", w[0])
		}
		// 😀 is two UTF-16 units: "😀 missing " is 11 units.
		if w[0].Range.Start.Character != colOf(lines[5], "@nope", EncodingUTF16) {
			t.Errorf("missing-file range %+v", w[0].Range)
		}
	}

	// Over budget: a source that cannot fit.
	h.notify("workspace/didChangeConfiguration", map[string]any{"settings": map[string]any{"dsh": map[string]any{
		"sessionId": "s-target", "maxReferences": 2, "maxReferenceBytes": testSmallBytes}}})
	h.notify("textDocument/didChange", map[string]any{"textDocument": map[string]any{"uri": "file:///d.md", "version": 2},
		"contentChanges": []map[string]any{{"text": "big " + sessionref.Mention("d", "s-delta")}}})
	p = h.diagnosticsFor("file:///d.md", 2)
	if len(p.Diagnostics) != 1 || p.Diagnostics[0].Code != "SESSION_REFERENCE_BUDGET_EXCEEDED" {
		t.Errorf("over-budget diagnostics = %+v", p.Diagnostics)
	}
}

// TestNoDiagnosticWhileTyping: the mention the last keystroke went into is
// not flagged until the typing moves on; a pasted or accepted mention is
// checked at once.
func TestNoDiagnosticWhileTyping(t *testing.T) {
	opts, _, ws := testOptions(t)
	h := newHarness(t, opts)
	h.initialize(initOptions{root: ws, settings: map[string]any{"sessionId": "s-target"}})
	const uri = "file:///t.md"
	h.open(uri, "see @READ", EncodingUTF16)
	if p := h.diagnosticsFor(uri, 1); len(p.Diagnostics) != 1 {
		t.Fatalf("as opened, @READ is missing: want one diagnostic, got %+v", p.Diagnostics)
	}
	type change struct {
		at   int // column of an insertion on line 0
		text string
	}
	version := int32(1)
	send := func(c change) publishDiagnosticsParams {
		version++
		h.notify("textDocument/didChange", map[string]any{"textDocument": map[string]any{"uri": uri, "version": version},
			"contentChanges": []map[string]any{{"range": Range{Start: Position{0, c.at}, End: Position{0, c.at}}, "text": c.text}}})
		return h.diagnosticsFor(uri, version)
	}
	// Typing "M" after "@READ": still being typed, not flagged.
	if p := send(change{len("see @READ"), "M"}); len(p.Diagnostics) != 0 {
		t.Errorf("the mention being typed is flagged: %+v", p.Diagnostics)
	}
	// A space after it: the typing moved on, the mention is checked.
	if p := send(change{len("see @READM"), " "}); len(p.Diagnostics) != 1 || !strings.Contains(p.Diagnostics[0].Message, "READM") {
		t.Errorf("after a space, want @READM flagged, got %+v", p.Diagnostics)
	}
	// Typing inside the mention again spares it again.
	if p := send(change{len("see @READ"), "x"}); len(p.Diagnostics) != 0 {
		t.Errorf("typing inside @READxM flags it: %+v", p.Diagnostics)
	}
	// An accepted completion (a larger change) is checked at once.
	self := sessionref.Mention("me", "s-target")
	p := send(change{len("see @READxM "), self})
	codes := []string{}
	for _, d := range p.Diagnostics {
		codes = append(codes, d.Code)
	}
	if !slices.Contains(codes, "SESSION_REFERENCE_SELF_REFERENCE") {
		t.Errorf("an inserted self-reference is not flagged at once: %+v", p.Diagnostics)
	}
}

// TestDiagnosticsNeverStale: four changes sent back to back are
// diagnosed once, for the last version. The delay is what the changes
// must arrive within: 100 ms was missed once in CI, when the test stalled
// between two sends on a loaded machine and version 2 was published as
// the latest it had.
func TestDiagnosticsNeverStale(t *testing.T) {
	opts, _, ws := testOptions(t)
	opts.DiagnosticsDelay = time.Second
	h := newHarness(t, opts)
	h.initialize(initOptions{root: ws})
	h.open("file:///s.md", "@[x](dsh-session:%%%)", EncodingUTF16)
	for v := 2; v <= 5; v++ {
		h.notify("textDocument/didChange", map[string]any{"textDocument": map[string]any{"uri": "file:///s.md", "version": v},
			"contentChanges": []map[string]any{{"text": fmt.Sprintf("version %d @[x](dsh-session:%%%%%%)", v)}}})
	}
	p := h.diagnosticsFor("file:///s.md", 5)
	if len(p.Diagnostics) != 1 {
		t.Errorf("latest diagnostics = %+v", p.Diagnostics)
	}
	for _, n := range h.notesOf("textDocument/publishDiagnostics") {
		var q publishDiagnosticsParams
		_ = json.Unmarshal(n.Params, &q)
		if q.Version != nil && *q.Version < 5 {
			t.Errorf("published for stale version %d", *q.Version)
		}
	}
}

func TestCustomMethods(t *testing.T) {
	opts, _, ws := testOptions(t)
	h := newHarness(t, opts)
	h.initialize(initOptions{root: ws, settings: map[string]any{"sessionId": "s-target", "cwd": "/home/dev/proj"}})

	var cands []titles.Candidate
	h.mustCall(MethodCandidates, map[string]any{"query": "PARSER"}, &cands)
	if len(cands) != 1 || cands[0].SessionID != "s-alpha" || !cands[0].SameWorkspace {
		t.Errorf("candidates = %+v", cands)
	}
	var files []fileResult
	h.mustCall(MethodFiles, map[string]any{"query": "my docs/"}, &files)
	if len(files) != 1 || files[0].Path != "my docs/guide.md" || files[0].Mention != `@"my docs/guide.md"` {
		t.Errorf("files = %+v", files)
	}
	var st statusResult
	h.mustCall(MethodStatus, nil, &st)
	if st.SessionsIndexed != 5 || !samePath(st.WorkspaceRoot, ws) || len(st.Skipped) != 1 || st.WatchMode != "off" {
		t.Errorf("status = %+v", st)
	}

	text := "look at " + sessionref.Mention("the parser", "s-alpha") + " please"
	var res PrepareResult
	h.mustCall(MethodPrepare, map[string]any{"text": text}, &res)
	var content string
	_ = json.Unmarshal(res.Content, &content)
	if content != "look at @the parser please" || len(res.References) != 1 || res.AdditionalContext == nil {
		t.Errorf("prepare replace = %q %+v", content, res.References)
	}
	h.mustCall(MethodPrepare, map[string]any{"text": text, "mode": "preserve"}, &res)
	_ = json.Unmarshal(res.Content, &content)
	if content != text {
		t.Errorf("prepare preserve = %q", content)
	}
	pos := h.open("file:///p.md", text+cursor, EncodingUTF16)
	_ = pos
	h.mustCall(MethodPrepare, map[string]any{"textDocument": map[string]any{"uri": "file:///p.md"}}, &res)
	if len(res.References) != 1 || res.References[0].SessionID != "s-alpha" {
		t.Errorf("prepare of an open document = %+v", res.References)
	}
	h.mustCall(MethodPrepare, map[string]any{"content": []map[string]any{{"type": "text", "text": text}, {"type": "image", "data": "x"}}}, &res)
	if !strings.Contains(string(res.Content), `"image"`) || len(res.References) != 1 {
		t.Errorf("prepare content = %s %+v", res.Content, res.References)
	}
	h.mustCall(MethodPrepare, map[string]any{"text": "no mentions", "references": []map[string]any{{"sessionId": "s-beta"}}}, &res)
	if len(res.References) != 1 || res.References[0].SessionID != "s-beta" {
		t.Errorf("explicit references = %+v", res.References)
	}
}

// TestErrorCodesOverWire provokes every contract code over JSON-RPC.
func TestErrorCodesOverWire(t *testing.T) {
	opts, fake, ws := testOptions(t)
	h := newHarness(t, opts)
	// INVALID_CONFIG through initialize is in TestInvalidConfig; here per request.
	h.initialize(initOptions{root: ws, settings: map[string]any{"sessionId": "s-target"}})
	m := sessionref.Mention
	tests := []struct {
		name   string
		method string
		params map[string]any
		code   string
		rpc    int
	}{
		{"invalid config", MethodPrepare, map[string]any{"text": "x", "maxReferenceBytes": 0}, "SESSION_REFERENCE_INVALID_CONFIG", -32010},
		{"invalid reference", MethodPrepare, map[string]any{"text": "x", "references": []any{map[string]any{"sessionId": 5}}}, "SESSION_REFERENCE_INVALID_REFERENCE", -32011},
		{"malformed mention", MethodPrepare, map[string]any{"text": "@[x](dsh-session:%%%)"}, "SESSION_REFERENCE_INVALID_REFERENCE", -32011},
		{"candidate limit", MethodCandidates, map[string]any{"query": "", "limit": 0}, "SESSION_REFERENCE_INVALID_REFERENCE", -32011},
		{"self reference", MethodPrepare, map[string]any{"text": m("me", "s-target")}, "SESSION_REFERENCE_SELF_REFERENCE", -32012},
		{"too many", MethodPrepare, map[string]any{"text": m("a", "s-alpha") + m("b", "s-beta") + m("c", "s-gamma") + m("d", "s-delta")}, "SESSION_REFERENCE_TOO_MANY", -32013},
		{"read failed", MethodPrepare, map[string]any{"text": m("g", "s-ghost")}, "SESSION_REFERENCE_READ_FAILED", -32014},
		{"budget exceeded", MethodPrepare, map[string]any{"text": m("d", "s-delta"), "maxReferenceBytes": testSmallBytes}, "SESSION_REFERENCE_BUDGET_EXCEEDED", -32015},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := h.call(tt.method, tt.params, nil)
			code, scode := rpcError(t, err)
			if int(code) != tt.rpc || scode != tt.code {
				t.Errorf("got %d/%s, want %d/%s (%v)", code, scode, tt.rpc, tt.code, err)
			}
			// The message is for a person: the code is in data.code only,
			// and no internal offsets.
			if msg := err.Error(); strings.Contains(msg, "SESSION_REFERENCE_") || strings.Contains(msg, "at byte") {
				t.Errorf("message %q repeats the code or shows an offset", msg)
			}
		})
	}
	t.Run("cancelled", func(t *testing.T) {
		// The prepare waits for a first build that does not finish.
		fake.holdBuild = make(chan struct{})
		defer close(fake.holdBuild)
		testCancelOverWire(t, opts)
	})
}

// TestFilterTextPerClient: each family of clients keeps every item only
// when filterText starts with what it compares (completion.Client): Neovim
// 0.11+'s vim.lsp.completion the text from the edit range's start
// (`@pa`), eglot 1.9 (no clientInfo) and eglot 1.17 the symbol before
// point (`pa`). VS Code and Helix fuzzy-match and are held by
// TestCompletion's same-start rule.
func TestFilterTextPerClient(t *testing.T) {
	for _, tc := range []struct{ client, prefix string }{
		{"Neovim", "@pa"},
		{"", "pa"},
		{"Eglot", "pa"},
		{"Visual Studio Code", "pa"},
		{"helix", "pa"},
	} {
		t.Run("client "+tc.client, func(t *testing.T) {
			opts, fake, ws := testOptions(t)
			h := newHarness(t, opts)
			h.initialize(initOptions{root: ws, client: tc.client, settings: map[string]any{"sessionId": "s-target", "cwd": "/home/dev/proj"}})
			fake.waitBuilt(t)
			pos := h.open("file:///doc.md", "see @pa‸", EncodingUTF16)
			var list wireList
			h.mustCall("textDocument/completion", map[string]any{"textDocument": map[string]any{"uri": "file:///doc.md"}, "position": pos}, &list)
			labels := map[string]bool{}
			for _, it := range list.Items {
				labels[it.Label] = true
				if !strings.HasPrefix(it.FilterText, tc.prefix) {
					t.Errorf("%q: filterText %q does not start with %q", it.Label, it.FilterText, tc.prefix)
				}
			}
			for _, want := range []string{"Fix the parser", "src/parser.go"} {
				if !labels[want] {
					t.Errorf("%q not offered: %v", want, labels)
				}
			}
		})
	}
}
