package server

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeLinesFile writes n numbered lines to rel under ws.
func writeLinesFile(t *testing.T, ws, rel string, n int, extra string) {
	t.Helper()
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "line %d%s\n", i, extra)
	}
	p := filepath.Join(ws, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestLineRangeDiagnostics(t *testing.T) {
	opts, _, ws := testOptions(t)
	writeLinesFile(t, ws, "src/lines.txt", 30, "")
	writeLinesFile(t, ws, "my docs/notes.md", 5, "")
	h := newHarness(t, opts)
	h.initialize(initOptions{root: ws})
	lines := []string{
		"fine @src/lines.txt#L1-2 and @src/lines.txt#L30, @\"my docs/notes.md\"#L2-5.", // 0: no diagnostic
		"past @src/lines.txt#L25-31",     // 1: warning
		"reversed @src/lines.txt#L20-10", // 2: warning
		"zero @src/lines.txt#L0",         // 3: warning
		"dir @src#L1",                    // 4: error
		"missing @src/nope.txt#L3",       // 5: warning, does not exist
	}
	h.open("file:///r.md", strings.Join(lines, "\n"), EncodingUTF16)
	p := h.diagnosticsFor("file:///r.md", 1)
	got := map[int]diagnostic{}
	for _, d := range p.Diagnostics {
		if _, dup := got[d.Range.Start.Line]; dup {
			t.Errorf("two diagnostics on line %d: %+v", d.Range.Start.Line, p.Diagnostics)
		}
		got[d.Range.Start.Line] = d
	}
	want := map[int]struct {
		severity int
		text     string
		span     string
	}{
		1: {severityWarning, "src/lines.txt has 30 lines: the range L25-31 is past its end", "@src/lines.txt#L25-31"},
		2: {severityWarning, "reversed: write L10-20", "@src/lines.txt#L20-10"},
		3: {severityWarning, "numbered from 1", "@src/lines.txt#L0"},
		4: {severityError, "src is a directory", "@src#L1"},
		5: {severityWarning, "src/nope.txt does not exist", "@src/nope.txt#L3"},
	}
	if len(got) != len(want) {
		t.Errorf("diagnostics on lines %v, want lines 1-5 only: %+v", keysOf(got), p.Diagnostics)
	}
	for line, w := range want {
		d, ok := got[line]
		if !ok {
			t.Errorf("line %d: no diagnostic, want %q", line, w.text)
			continue
		}
		if d.Severity != w.severity || !strings.Contains(d.Message, w.text) {
			t.Errorf("line %d: severity %d %q, want %d containing %q", line, d.Severity, d.Message, w.severity, w.text)
		}
		start := colOf(lines[line], w.span, EncodingUTF16)
		if d.Range.Start.Character != start || d.Range.End.Character != start+len(w.span) {
			t.Errorf("line %d: range %+v, want the span %q", line, d.Range, w.span)
		}
	}
}

func keysOf(m map[int]diagnostic) []int {
	var out []int
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestLineRangeHover(t *testing.T) {
	opts, _, ws := testOptions(t)
	writeLinesFile(t, ws, "src/lines.go", 100, " ```` ticks")
	h := newHarness(t, opts)
	h.initialize(initOptions{root: ws, markdown: true})
	hover := func(marked string) string {
		t.Helper()
		pos := h.open("file:///hv.md", marked, EncodingUTF16)
		var hv hoverResult
		h.mustCall("textDocument/hover", map[string]any{"textDocument": map[string]any{"uri": "file:///hv.md"}, "position": pos}, &hv)
		return hv.Contents.Value
	}
	got := hover("see @src/li" + cursor + "nes.go#L3-4 now")
	for _, want := range []string{"`src/lines.go`: file, ", " bytes", "Lines 3–4 of 100", "`````go\nline 3 ```` ticks\nline 4 ```` ticks\n`````"} {
		if !strings.Contains(got, want) {
			t.Errorf("hover lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "line 2 ") || strings.Contains(got, "line 5 ") {
		t.Errorf("hover shows lines outside the range:\n%s", got)
	}
	// A long range is cut to hoverMaxLines lines.
	got = hover("@src/lines.go" + cursor + "#L1-100")
	if !strings.Contains(got, fmt.Sprintf("(the first %d lines shown)", hoverMaxLines)) ||
		!strings.Contains(got, fmt.Sprintf("line %d ", hoverMaxLines)) || strings.Contains(got, fmt.Sprintf("line %d ", hoverMaxLines+1)) {
		t.Errorf("long range not cut at %d lines:\n%s", hoverMaxLines, got)
	}
	got = hover("@src/lines.go" + cursor + "#L99-120")
	if !strings.Contains(got, "past its end") {
		t.Errorf("hover of a range past the end:\n%s", got)
	}
}

func TestLineRangeCompletion(t *testing.T) {
	opts, _, ws := testOptions(t)
	writeLinesFile(t, ws, "src/lines.txt", 12, "")
	writeLinesFile(t, ws, "my docs/plan.md", 3, "")
	h := newHarness(t, opts)
	res := h.initialize(initOptions{root: ws})
	found := false
	for _, c := range res.Capabilities.CompletionProvider.TriggerCharacters {
		found = found || c == "#"
	}
	if !found {
		t.Errorf("# is not a trigger character: %v", res.Capabilities.CompletionProvider.TriggerCharacters)
	}
	list := completeAt(t, h, "file:///c1.md", "see @src/lines.txt#"+cursor)
	if got := strings.Join(labelsOf(list), " "); got != "L1 L1-12 L12" {
		t.Errorf("after # = %q, want L1 L1-12 L12", got)
	}
	if !list.IsIncomplete {
		t.Errorf("after # the list is complete, so a client filters the typed L2 against L1 L1-12 L12 instead of asking again")
	}
	for _, it := range list.Items {
		r, _, text := editOf(t, it)
		if r.Start.Character != len("see @src/lines.txt#") || text != it.Label {
			t.Errorf("item %q edits %+v with %q", it.Label, r, text)
		}
	}
	list = completeAt(t, h, "file:///c2.md", `@"my docs/plan.md"#L2`+cursor)
	if got := strings.Join(labelsOf(list), " "); got != "L2 L2-3" {
		t.Errorf(`after @"my docs/plan.md"#L2 = %q, want L2 L2-3`, got)
	}
	for _, marked := range []string{"@src#" + cursor, "@nope.txt#" + cursor, "# heading" + cursor} {
		if list := completeAt(t, h, "file:///c3.md", marked); len(list.Items) != 0 {
			t.Errorf("%q offers %v", marked, labelsOf(list))
		}
	}
}

func TestPrepareReturnsFiles(t *testing.T) {
	opts, _, ws := testOptions(t)
	writeLinesFile(t, ws, "src/lines.txt", 12, "")
	h := newHarness(t, opts)
	h.initialize(initOptions{root: ws})
	text := `see @src/lines.txt#L2-4, @src and @"my docs/guide.md" but not @nope.md or @../x#L1`
	var res struct {
		Content json.RawMessage `json:"content"`
		Files   json.RawMessage `json:"files"`
	}
	h.mustCall(MethodPrepare, map[string]any{"text": text}, &res)
	var content string
	if err := json.Unmarshal(res.Content, &content); err != nil || content != text {
		t.Errorf("content %s, want the text as written", res.Content)
	}
	want := `[{"path":"src/lines.txt","kind":"file","range":{"start":2,"end":4}},{"path":"src","kind":"directory"},` +
		`{"path":"my docs/guide.md","kind":"file"},{"path":"nope.md","kind":"missing"},{"path":"../x","kind":"outside","range":{"start":1,"end":1}}]`
	if string(res.Files) != want {
		t.Errorf("files\n got %s\nwant %s", res.Files, want)
	}
	h.mustCall(MethodPrepare, map[string]any{"content": []any{
		map[string]any{"type": "text", "text": "@README.md#L1"}, map[string]any{"type": "image", "text": "@src"}}}, &res)
	if string(res.Files) != `[{"path":"README.md","kind":"file","range":{"start":1,"end":1}}]` {
		t.Errorf("files of content blocks = %s", res.Files)
	}
	h.mustCall(MethodPrepare, map[string]any{"text": "no mentions"}, &res)
	if string(res.Files) != `[]` {
		t.Errorf("files of a text without mentions = %s", res.Files)
	}
}
