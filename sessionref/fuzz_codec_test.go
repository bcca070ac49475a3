package sessionref

import (
	"bytes"
	"encoding/json"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/dsh-refls/dsh-refls/sessionref/internal/jsjson"
)

// mentionPatternGo is the §2.1 pattern in Go syntax with JavaScript's
// meaning: '.' excludes the four ECMAScript line terminators and \s is the
// ECMAScript white-space set. Go's own \s is ASCII only and its '.' matches
// \r, U+2028 and U+2029, so the pattern cannot be used verbatim.
const mentionPatternGo = `@\[((?:\\[^\n\r\x{2028}\x{2029}]|[^\\\]])*)\]\((dsh-session:[^\t\n\v\f\r \x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}\x{feff})]*)\)|(dsh-session:[A-Za-z0-9_-]+)`

var (
	mentionRegexp = regexp.MustCompile(mentionPatternGo)
	// labelEscape matches one escaped character of a label.
	labelEscape = regexp.MustCompile(`(?s)\\(.)`)
)

// findMentionsRegexp is the reference implementation of FindMentions,
// written with package regexp.
func findMentionsRegexp(text string) []MentionSpan {
	var spans []MentionSpan
	for _, m := range mentionRegexp.FindAllStringSubmatchIndex(text, -1) {
		s := MentionSpan{Start: m[0], End: m[1]}
		if m[6] >= 0 {
			s.Bare = true
			s.URI = text[m[6]:m[7]]
		} else {
			s.URI = text[m[4]:m[5]]
			s.Label = labelEscape.ReplaceAllString(text[m[2]:m[3]], "$1")
		}
		s.SessionID, s.Err = decodeMentionURI(s.URI)
		if s.Bare {
			s.Label = s.SessionID
		}
		spans = append(spans, s)
	}
	return spans
}

func FuzzFindMentions(f *testing.F) {
	uri := EncodeURI("a")
	for _, seed := range []string{
		"", "plain", "@[x](" + uri + ")", uri, "@[a\\]b](" + uri + ") " + uri,
		"@[x](dsh-session:%%%)", "dsh-session:", "dsh-session:%%%", "dsh-session:abc",
		"@[a\\\nb](" + uri + ")", "@[x](" + uri + "\u00a0)", "@[@[@[x](" + uri + ")",
		"@[\xff](" + uri + ")", "@[\\\xff](" + uri + ")", "@[x](dsh-session:\xff)",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, text string) {
		got := FindMentions(text)
		want := findMentionsRegexp(text)
		if len(got) != len(want) {
			t.Fatalf("FindMentions(%q) found %d, regexp %d:\n%+v\n%+v", text, len(got), len(want), summarise(got), summarise(want))
		}
		prevEnd := 0
		for i := range got {
			g, w := got[i], want[i]
			if g.Start != w.Start || g.End != w.End || g.Label != w.Label || g.URI != w.URI ||
				g.SessionID != w.SessionID || g.Bare != w.Bare || (g.Err == nil) != (w.Err == nil) {
				t.Fatalf("FindMentions(%q) span %d = %+v, regexp %+v", text, i, g, w)
			}
			if g.Start < prevEnd || g.End <= g.Start || g.End > len(text) {
				t.Fatalf("span %d has bad offsets [%d,%d) after %d in %d bytes", i, g.Start, g.End, prevEnd, len(text))
			}
			prevEnd = g.End
			match := text[g.Start:g.End]
			if !strings.HasPrefix(match, mentionOpen) && !strings.HasPrefix(match, URIScheme) {
				t.Fatalf("span %d %q starts with neither %q nor %q", i, match, mentionOpen, URIScheme)
			}
			if g.Err == nil && EncodeURI(g.SessionID) != g.URI {
				t.Fatalf("span %d: id %q does not encode to %q", i, g.SessionID, g.URI)
			}
			if g.Err != nil && CodeOf(g.Err) != CodeInvalidReference {
				t.Fatalf("span %d: error %v has code %q", i, g.Err, CodeOf(g.Err))
			}
		}
		rewritten, refs, err := ParseText(text)
		firstErr := -1
		for i, s := range got {
			if s.Err != nil {
				firstErr = i
				break
			}
		}
		switch {
		case firstErr >= 0:
			if err == nil || err.Error() != got[firstErr].Err.Error() || rewritten != "" || refs != nil {
				t.Fatalf("ParseText(%q) = %q, %v, %v; want the error of span %d", text, rewritten, refs, err, firstErr)
			}
		case err != nil:
			t.Fatalf("ParseText(%q): %v", text, err)
		case len(refs) != len(got):
			t.Fatalf("ParseText(%q) gave %d refs for %d spans", text, len(refs), len(got))
		case len(got) == 0 && rewritten != text:
			t.Fatalf("ParseText(%q) changed a text without mentions to %q", text, rewritten)
		}
	})
}

func FuzzDecodeURI(f *testing.F) {
	for _, g := range uriGoldens {
		f.Add(g.uri)
	}
	for _, seed := range []string{
		"", "dsh-session:", "dsh-session:%%%", "dsh-session:ImFiIg==", "dsh-session:ImFiIh",
		"dsh-session:Ilx1MDA2MSI", "dsh-session:ICJhIg", "dsh-session:MQ", "dsh-session:Iv8i",
		"dsh-session:Ilx1ZDgwMCI", "ImEi",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, uri string) {
		id, err := DecodeURI(uri)
		if err != nil {
			if CodeOf(err) != CodeInvalidReference {
				t.Fatalf("DecodeURI(%q) error %v has code %q", uri, err, CodeOf(err))
			}
		} else {
			if back := EncodeURI(id); back != uri {
				t.Fatalf("DecodeURI(%q) = %q, which encodes to %q", uri, id, back)
			}
			if !utf8.ValidString(id) {
				t.Fatalf("DecodeURI(%q) returned invalid UTF-8 %q", uri, id)
			}
		}
		// Any string, used as an id, round-trips with invalid bytes as U+FFFD.
		enc := EncodeURI(uri)
		back, err := DecodeURI(enc)
		if err != nil || back != string([]rune(uri)) {
			t.Fatalf("DecodeURI(EncodeURI(%q)) = %q, %v", uri, back, err)
		}
	})
}

func FuzzMarshalJS(f *testing.F) {
	for _, seed := range []struct {
		s   string
		raw string
	}{
		{"plain", `{"a":1}`},
		{"<\u2028\u2029&>", `"\u2028\/\u003c"`},
		{"a\xffb\x00\x1f", `["\ud83d\ude00","\ud800","\udc00x"]`},
		{`"\`, `{"k\u0041":[true,null,-1.5e3,{}]}`},
		{"会话😀", "\"\xff\""},
	} {
		f.Add(seed.s, []byte(seed.raw))
	}
	f.Fuzz(func(t *testing.T, s string, raw []byte) {
		js, err := jsjson.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if want := AppendJSString(nil, s); !bytes.Equal(js, want) {
			t.Fatalf("jsjson.Marshal(%q) = %q, AppendJSString gives %q", s, js, want)
		}
		safe, err := jsjson.MarshalTagSafe(s)
		if err != nil {
			t.Fatal(err)
		}
		if want := bytes.ReplaceAll(js, []byte("<"), []byte(`\u003c`)); !bytes.Equal(safe, want) {
			t.Fatalf("jsjson.MarshalTagSafe(%q) = %q, want %q", s, safe, want)
		}
		if !json.Valid(raw) {
			return
		}
		v := json.RawMessage(raw)
		out, err := jsjson.Marshal(v)
		if err != nil {
			t.Fatalf("jsjson.Marshal(raw %q): %v", raw, err)
		}
		// Numbers are compared as written: valid JSON may hold numbers no
		// float64 holds, such as 1E1000.
		want, err := decodeUseNumber(raw)
		if err != nil {
			t.Fatal(err)
		}
		got, err := decodeUseNumber(out)
		if err != nil {
			t.Fatalf("jsjson.Marshal(raw %q) = %q, not JSON: %v", raw, out, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("jsjson.Marshal(raw %q) = %q changes the value", raw, out)
		}
		if again, err := jsjson.Marshal(json.RawMessage(out)); err != nil || !bytes.Equal(again, out) {
			t.Fatalf("jsjson.Marshal is not idempotent on %q: %q, %v", out, again, err)
		}
		safe, err = jsjson.MarshalTagSafe(v)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.IndexByte(safe, '<') >= 0 {
			t.Fatalf("jsjson.MarshalTagSafe(raw %q) = %q holds '<'", raw, safe)
		}
	})
}

// decodeUseNumber decodes one JSON value, keeping numbers as json.Number.
func decodeUseNumber(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	err := dec.Decode(&v)
	return v, err
}
