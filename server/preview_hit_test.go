package server

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/dsh-refls/dsh-refls/internal/dshgen"
	"github.com/dsh-refls/dsh-refls/sessionref"
)

// hitsSession's messages, one per case of TestPreviewOpensAtTheHit.
const (
	hitsManyLines = "Plan for the week.\nFirst the login test.\nThen the quota limiter: it drops\nrequests over quota.\nLast, the docs."
	hitsCJK       = "🙂我们修复登录测试了，然后再看登录页"
	hitsControl   = "alpha\r\nbeta\rgamma\x07 \u202ehidden\u202c zebrafish here"
	hitsLast      = "Finally the quartzite report is done."
)

// hitsOpts serves the test store plus s-hits, whose messages the cases
// below open.
func hitsOpts(t *testing.T, long string) (Options, string) {
	t.Helper()
	opts, fake, ws := testOptions(t)
	fake.add(t, dshgen.NewSession("s-hits").Cwd(testCwd).CreatedAt(time.Now().Add(-90*time.Minute).UnixMilli()).
		Turn(func(tt *dshgen.Turn) {
			tt.UserText(hitsManyLines)
			tt.Title("Hit notes", "provider")
			tt.AssistantText("Noted.")
		}).
		Turn(func(tt *dshgen.Turn) {
			tt.UserText(hitsCJK)
			tt.AssistantText(hitsControl)
		}).
		Turn(func(tt *dshgen.Turn) {
			tt.UserText(long)
			tt.AssistantText(hitsLast)
		}))
	return opts, ws
}

// seqOfHit is the seq dsh/search reports for the first message of s-hits
// holding query.
func seqOfHit(t *testing.T, h *harness, query string) int64 {
	t.Helper()
	var res []searchResult
	h.mustCall(MethodSearch, map[string]any{"query": query, "sessionId": "s-hits"}, &res)
	if len(res) != 1 || len(res[0].Matches) == 0 {
		t.Fatalf("dsh/search %q in s-hits = %+v, want one session with a match", query, res)
	}
	return res[0].Matches[0].Seq
}

// lineAndColumn finds the one line of text that holds line (a whole line
// of the rendered preview) and the column of sub in it, in enc: computed
// from the text, not from the server's offsets.
func lineAndColumn(t *testing.T, text, line, sub string, enc PositionEncoding) (int, int, int) {
	t.Helper()
	found := -1
	for i, l := range strings.Split(text, "\n") {
		if l == line {
			if found >= 0 {
				t.Fatalf("line %q occurs twice in\n%s", line, text)
			}
			found = i
		}
	}
	if found < 0 {
		t.Fatalf("no line %q in\n%s", line, text)
	}
	at := strings.Index(line, sub)
	width := func(s string) int {
		if enc == EncodingUTF8 {
			return len(s)
		}
		return len(utf16.Encode([]rune(s)))
	}
	return found, width(line[:at]), width(line[:at+len(sub)])
}

// TestPreviewOpensAtTheHit: dsh/preview asked with a search hit's seq and
// the query answers the preview followed by that message, the message's
// range and the first hit's range on exactly the line and columns where
// its words stand, in the client's encoding; the document of the answered
// URI is the same text.
func TestPreviewOpensAtTheHit(t *testing.T) {
	long := strings.Repeat("filler words of a very long line ", 4000) + "and the needle sits at the end"
	for _, enc := range []PositionEncoding{EncodingUTF16, EncodingUTF8} {
		opts, ws := hitsOpts(t, long)
		h := newHarness(t, opts)
		h.initialize(initOptions{root: ws, markdown: true, utf8: enc == EncodingUTF8})
		for _, c := range []struct {
			name, query, line, sub string
		}{
			{"a message of many lines", "quota", "Then the quota limiter: it drops", "quota"},
			{"CJK after an emoji", "登录", hitsCJK, "登录"},
			{"control characters and line breaks", "zebrafish", "gamma   hidden  zebrafish here", "zebrafish"},
			{"the last message", "quartzite", hitsLast, "quartzite"},
			{"a message cut around its hit", "needle", "", "needle"},
		} {
			t.Run(string(enc)+"/"+c.name, func(t *testing.T) {
				seq := seqOfHit(t, h, c.query)
				var pv PreviewResult
				h.mustCall(MethodPreview, map[string]any{"sessionId": "s-hits", "seq": seq, "query": c.query}, &pv)
				if pv.Range == nil || pv.SelectionRange == nil {
					t.Fatalf("dsh/preview with seq %d: no ranges in %+v", seq, pv)
				}
				heading := "## Message of event " + itoa(seq) + " · "
				lines := strings.Split(pv.Markdown, "\n")
				if l := pv.Range.Start.Line; l >= len(lines) || !strings.HasPrefix(lines[l], heading) || pv.Range.Start.Character != 0 {
					t.Errorf("the message's range starts at %+v, want the heading %q", pv.Range.Start, heading)
				}
				if pv.Range.End.Line != len(lines)-1 || pv.Range.End.Character != 0 {
					t.Errorf("the message's range ends at %+v, want the end of the preview (line %d)", pv.Range.End, len(lines)-1)
				}
				line := c.line
				if line == "" {
					// The cut message is one line that ends in the hit.
					line = lines[len(lines)-3]
					if !strings.Contains(pv.URI, "&at=") {
						t.Errorf("the URI of a cut message %s names no offset to cut around", pv.URI)
					}
					if !strings.HasPrefix(line, "…") || !strings.HasSuffix(line, "and the needle sits at the end") || len(line) > maxMessageViewBytes+len("…") {
						t.Fatalf("the cut message is %d bytes %q…%q", len(line), line[:min(len(line), 20)], line[max(0, len(line)-40):])
					}
				}
				want, from, to := lineAndColumn(t, pv.Markdown, line, c.sub, enc)
				sel := *pv.SelectionRange
				if sel.Start.Line != want || sel.End.Line != want || sel.Start.Character != from || sel.End.Character != to {
					t.Errorf("selection %+v, want line %d characters %d-%d (%q in %q)", sel, want, from, to, c.sub, line)
				}
				if want <= pv.Range.Start.Line+2 {
					t.Errorf("the hit at line %d is not inside the message's fence below line %d", want, pv.Range.Start.Line)
				}
				u, err := url.Parse(pv.URI)
				if err != nil || u.Scheme != PreviewScheme || !strings.HasPrefix(u.RawQuery, "seq="+itoa(seq)) {
					t.Errorf("uri %q, want a %s: preview URI with ?seq=%d", pv.URI, PreviewScheme, seq)
				}
				if got, err := sessionOfURI(pv.URI); err != nil || got != "s-hits" {
					t.Errorf("the view's URI names %q (%v), want s-hits", got, err)
				}
				if enc == EncodingUTF16 {
					// VS Code writes the query's "=" and "&" as %3D and %26.
					i := strings.Index(pv.URI, "?")
					encoded := pv.URI[:i+1] + url.QueryEscape(pv.URI[i+1:])
					for _, uri := range []string{pv.URI, encoded} {
						if got := documentText(t, h, uri); got != pv.Markdown {
							t.Errorf("the document of %s differs from dsh/preview's text:\n%s", uri, lineDiff(got, pv.Markdown))
						}
					}
				}
			})
		}
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// TestPreviewAtAMessageWithoutAHit: a seq without a query selects the
// start of the message; a query the message lacks does too; a seq the
// session holds no message of is said in the preview, its heading
// selected; the URI of a preview names the seq.
func TestPreviewAtAMessageWithoutAHit(t *testing.T) {
	opts, ws := hitsOpts(t, "short")
	h := newHarness(t, opts)
	h.initialize(initOptions{root: ws, markdown: true})
	seq := seqOfHit(t, h, "quartzite")
	for _, params := range []map[string]any{
		{"sessionId": "s-hits", "seq": seq},
		{"sessionId": "s-hits", "seq": seq, "query": "absentword"},
		{"uri": PreviewMessageURI("s-hits", "Hit notes", seq)},
	} {
		var pv PreviewResult
		h.mustCall(MethodPreview, params, &pv)
		if pv.SelectionRange == nil {
			t.Fatalf("dsh/preview %v: no selection", params)
		}
		lines := strings.Split(pv.Markdown, "\n")
		sel := *pv.SelectionRange
		if sel.Start != sel.End || sel.Start.Character != 0 || lines[sel.Start.Line] != hitsLast || !strings.HasPrefix(lines[sel.Start.Line-1], "```") {
			t.Errorf("dsh/preview %v selects %+v, want the start of the message's first line", params, sel)
		}
	}

	var pv PreviewResult
	h.mustCall(MethodPreview, map[string]any{"sessionId": "s-hits", "seq": 999999, "query": "quartzite"}, &pv)
	lines := strings.Split(pv.Markdown, "\n")
	if pv.SelectionRange == nil || lines[pv.SelectionRange.Start.Line] != "## Event 999999" ||
		!strings.Contains(pv.Markdown, "holds no message from event 999999 now") {
		t.Errorf("a seq without a message: selection %+v in\n%s", pv.SelectionRange, pv.Markdown)
	}

	var plain PreviewResult
	h.mustCall(MethodPreview, map[string]any{"sessionId": "s-hits"}, &plain)
	if plain.URI != "" || plain.Range != nil || plain.SelectionRange != nil || strings.Contains(plain.Markdown, "## ") {
		t.Errorf("a preview without a seq answers a message: %+v", plain)
	}
	var unknown PreviewResult
	h.mustCall(MethodPreview, map[string]any{"sessionId": "s-nope", "seq": seq, "query": "quartzite"}, &unknown)
	if !strings.HasPrefix(unknown.Markdown, "Unknown session") || unknown.URI != "" || unknown.SelectionRange != nil {
		t.Errorf("an unknown session at a seq: %+v", unknown)
	}
}

// TestPreviewAtAMessageRefusals: a negative seq, a URI whose seq is not a
// number or is given twice, and a query that cannot be searched are
// refused as invalid references.
func TestPreviewAtAMessageRefusals(t *testing.T) {
	opts, ws := hitsOpts(t, "short")
	h := newHarness(t, opts)
	h.initialize(initOptions{root: ws, markdown: true})
	uri := PreviewURI("s-hits", "Hit notes")
	seq := seqOfHit(t, h, "quartzite")
	for _, params := range []map[string]any{
		{"sessionId": "s-hits", "seq": -1},
		{"uri": uri + "?seq=x"},
		{"uri": uri + "?seq=-4"},
		{"uri": uri + "?seq=1&seq=2"},
		{"uri": uri + "?seq=1&at=x"},
		{"sessionId": "s-hits", "seq": seq, "query": "\"\""},
		{"sessionId": "s-hits", "seq": seq, "query": strings.Repeat("x", 1025)},
	} {
		_, code := rpcError(t, h.call(MethodPreview, params, nil))
		if code != string(sessionref.CodeInvalidReference) {
			t.Errorf("dsh/preview %.80v: code %q, want %s", params, code, sessionref.CodeInvalidReference)
		}
	}
	if _, code := rpcError(t, h.call("workspace/textDocumentContent", map[string]any{"uri": uri + "?seq=x"}, nil)); code != string(sessionref.CodeInvalidReference) {
		t.Errorf("the document of a URI with a bad seq: code %q", code)
	}
}

// TestMessageViewText: what a view makes of a message's text, and where
// a long message is cut.
func TestMessageViewText(t *testing.T) {
	for in, want := range map[string]string{
		"a\r\nb\rc\nd":                 "a\nb\nc\nd",
		"tab\tkept, bell\x07 gone":     "tab\tkept, bell  gone",
		"lone \xed\xa0\x80 surrogate":  "lone \uFFFD surrogate",
		"rtl \u202eevil\u202c \u2028x": "rtl  evil   x",
		"登录 🙂":                         "登录 🙂",
	} {
		if got := messageViewText(in); got != want {
			t.Errorf("messageViewText(%q) = %q, want %q", in, got, want)
		}
	}
	short := "short text"
	if got, shift := cutAround(short, 3); got != short || shift != 0 {
		t.Errorf("cutAround of a short text = %q, %d", got, shift)
	}
	body := strings.Repeat("é", maxMessageViewBytes) // two bytes a rune
	at := len(body) / 2
	got, shift := cutAround(body, at+1) // inside a rune
	if !utf8.ValidString(got) || !strings.HasPrefix(got, "…") || !strings.HasSuffix(got, "…") || len(got) > maxMessageViewBytes+2*len("…") {
		t.Errorf("cutAround of a long text: %d bytes, valid %v", len(got), utf8.ValidString(got))
	}
	if i := at + shift; i < 0 || i >= len(got) || got[i:i+2] != "é" {
		t.Errorf("the offset %d of the hit moves to %d, which is not the start of its rune", at, i)
	}
}

// lineDiff shows the first line where got and want differ.
func lineDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := range max(len(g), len(w)) {
		var a, b string
		if i < len(g) {
			a = g[i]
		}
		if i < len(w) {
			b = w[i]
		}
		if a != b {
			return fmt.Sprintf("line %d: %.200q, want %.200q", i, a, b)
		}
	}
	return "(no line differs)"
}

// TestBodyMatchDataEncodesSeq: the completion encoder writes a body
// match's seq as encoding/json would, and nothing for other items.
func TestBodyMatchDataEncodesSeq(t *testing.T) {
	seq := int64(1234567890123)
	list := &completionList{Items: []completionItem{
		{Label: "“…rate limiter…”", Data: &completionData{Kind: dataKindSession, SessionID: "s-1", Seq: &seq}},
		{Label: "plain", Data: &completionData{Kind: dataKindSession, SessionID: "s-2"}},
	}}
	want, err := jsonCodec{}.Marshal(list)
	if err != nil {
		t.Fatal(err)
	}
	got, err := encodeCompletionList(nil, list)
	if err != nil || string(got) != string(want) || strings.Count(string(got), `"seq":1234567890123`) != 1 {
		t.Errorf("encodeCompletionList = %s (%v), want %s", got, err, want)
	}
}

// TestPreviewAtAMessageOfALogGone: a session whose log vanished after it
// was indexed (not watched, so still listed) says in the view that its
// message cannot be read, the note selected.
func TestPreviewAtAMessageOfALogGone(t *testing.T) {
	opts, ws := hitsOpts(t, "short")
	opts.Watch = "off"
	h := newHarness(t, opts)
	h.initialize(initOptions{root: ws, markdown: true})
	seq := seqOfHit(t, h, "quartzite")
	logs, err := filepath.Glob(filepath.Join(opts.SessionsRoot, "*", "s-hits", "*.jsonl"))
	if err != nil || len(logs) != 1 {
		t.Fatalf("the log of s-hits: %v (%v)", logs, err)
	}
	if err := os.Remove(logs[0]); err != nil {
		t.Fatal(err)
	}
	var pv PreviewResult
	h.mustCall(MethodPreview, map[string]any{"sessionId": "s-hits", "seq": seq, "query": "quartzite"}, &pv)
	t.Logf("the preview of a vanished log:\n%s", pv.Markdown)
	lines := strings.Split(pv.Markdown, "\n")
	if pv.SelectionRange == nil || lines[pv.SelectionRange.Start.Line] != "## Event "+itoa(seq) ||
		!strings.Contains(pv.Markdown, "Cannot read this message now: ") || strings.Contains(pv.Markdown, hitsLast+"\n```") {
		t.Errorf("a vanished log: selection %+v in\n%s", pv.SelectionRange, pv.Markdown)
	}
}
