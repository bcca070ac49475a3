package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/dsh-refls/dsh-refls/sessionref"
	"github.com/dsh-refls/dsh-refls/sessionref/prepare"
	"github.com/dsh-refls/dsh-refls/sessionref/recall"
	"github.com/dsh-refls/dsh-refls/sessionref/titles"
)

// encodePieces are what generated strings are made of: plain text, every
// byte encoding/json escapes, HTML characters it leaves alone without HTML
// escaping, U+2028/U+2029, multi-byte runes and invalid UTF-8.
var encodePieces = []string{"a", "refactor the parser", " ", `"`, `\`, "/", "<", ">", "&", "\x00", "\x01", "\b", "\f", "\n",
	"\r", "\t", "\x1f", "\x7f", "\u2028", "\u2029", "é", "😀", "\u00a0", "\ufeff", "\xff", "\xc3", "\xe2\x80", "\ufffd", "@[x](dsh-session:ImEi)"}

func randomString(rnd *rand.Rand) string {
	var b strings.Builder
	for range rnd.Intn(6) {
		b.WriteString(encodePieces[rnd.Intn(len(encodePieces))])
	}
	return b.String()
}

// TestAppendJSONStringIsEncodingJSON compares appendJSONString with
// jsonCodec on every piece alone and on generated strings.
func TestAppendJSONStringIsEncodingJSON(t *testing.T) {
	rnd := rand.New(rand.NewSource(1))
	inputs := append([]string{""}, encodePieces...)
	for range 5000 {
		inputs = append(inputs, randomString(rnd))
	}
	for range 2000 { // long enough for several words of eight bytes
		inputs = append(inputs, randomString(rnd)+randomString(rnd)+randomString(rnd)+randomString(rnd))
	}
	for _, s := range inputs {
		want, err := jsonCodec{}.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendJSONString(nil, s); !bytes.Equal(got, want) {
			t.Fatalf("appendJSONString(%q) = %s, want %s", s, got, want)
		}
	}
}

// TestPlain8 compares plain8 with the test of one byte at a time, for every
// byte value at every position of a word of plain bytes or of others, and
// for every pair of values side by side (where a borrow could carry).
func TestPlain8(t *testing.T) {
	plain := func(c byte) bool { return c >= 0x20 && c < utf8.RuneSelf && c != '"' && c != '\\' }
	check := func(b []byte) {
		t.Helper()
		want := true
		for _, c := range b {
			want = want && plain(c)
		}
		if got := plain8(load8(string(b))); got != want {
			t.Fatalf("plain8(%q) = %v, want %v", b, got, want)
		}
	}
	for pos := range 8 {
		for v := range 256 {
			for _, fill := range []byte{'a', 0x20, 0x21, 0x7e, 0x7f, '[', ']', 0x00, 0x80, '"', '\\'} {
				b := bytes.Repeat([]byte{fill}, 8)
				b[pos] = byte(v)
				check(b)
			}
		}
	}
	for v := range 256 {
		for w := range 256 {
			check([]byte{byte(v), byte(w), 'a', 'a', 'a', 'a', byte(w), byte(v)})
		}
	}
}

// TestStringEscapersDiffer shows why the server keeps its own string
// escaper beside sessionref.AppendJSString: on U+2028, U+2029 and invalid
// UTF-8 the bytes differ (encoding/json escapes them, JSON.stringify writes
// the characters), on everything else they agree, and both read back as the
// same string.
func TestStringEscapersDiffer(t *testing.T) {
	differ := map[string]bool{"\u2028": true, "\u2029": true, "\xff": true, "\xc3": true, "\xe2\x80": true}
	for _, s := range encodePieces {
		goJSON, js := appendJSONString(nil, s), sessionref.AppendJSString(nil, s)
		if got := !bytes.Equal(goJSON, js); got != differ[s] {
			t.Errorf("%q: appendJSONString %s, AppendJSString %s: differ = %v, want %v", s, goJSON, js, got, differ[s])
		}
		var a, b string
		if err := json.Unmarshal(goJSON, &a); err != nil {
			t.Fatalf("%q: %s: %v", s, goJSON, err)
		}
		if err := json.Unmarshal(js, &b); err != nil {
			t.Fatalf("%q: %s: %v", s, js, err)
		}
		if a != b {
			t.Errorf("%q: read back as %q and %q", s, a, b)
		}
	}
}

// TestAppendMentionJSONIsEncodingJSON compares appendMentionJSON with
// jsonCodec on sessionref.Mention, for labels and ids of every piece, the
// brackets and backslashes a mention escapes, and an empty label.
func TestAppendMentionJSONIsEncodingJSON(t *testing.T) {
	rnd := rand.New(rand.NewSource(4))
	pieces := append([]string{"]", "[", `\]`, `]\`, "]]"}, encodePieces...)
	gen := func() string {
		var b strings.Builder
		for range rnd.Intn(6) {
			b.WriteString(pieces[rnd.Intn(len(pieces))])
		}
		return b.String()
	}
	type pair struct{ label, id string }
	inputs := []pair{{"", "0a1b2c3d-0000-4000-8000-000000000007"}, {"", ""}, {"fix ]the[ \\ parser", "s1"}}
	for _, p := range pieces {
		inputs = append(inputs, pair{p, "s1"}, pair{"t", p})
	}
	for range 5000 {
		inputs = append(inputs, pair{gen(), gen()})
	}
	for _, in := range inputs {
		want, err := jsonCodec{}.Marshal(sessionref.Mention(in.label, in.id))
		if err != nil {
			t.Fatal(err)
		}
		if got := appendMentionJSON(nil, in.label, in.id); !bytes.Equal(got, want) {
			t.Fatalf("appendMentionJSON(%q, %q) = %s, want %s", in.label, in.id, got, want)
		}
	}
}

// TestEncodeCandidatesIsEncodingJSON compares encodeCandidates with
// jsonCodec on generated lists of title matches, with and without cwd and
// with and without their mention (written by the encoder then), followed
// by body matches with and without a match, and the empty lists.
func TestEncodeCandidatesIsEncodingJSON(t *testing.T) {
	rnd := rand.New(rand.NewSource(2))
	candidate := func() titles.Candidate {
		c := titles.Candidate{SessionID: randomString(rnd), Label: randomString(rnd),
			DisplayTitle: randomString(rnd), SameWorkspace: rnd.Intn(2) == 0, CreatedAt: rnd.Int63() - rnd.Int63(),
			Mention: "@" + randomString(rnd)} // never empty, as sessionref.Mention
		if rnd.Intn(3) == 0 { // as for most sessions: the encoder copies the label's escape
			c.DisplayTitle = c.Label
		}
		if rnd.Intn(2) == 0 {
			cwd := randomString(rnd)
			c.Cwd = &cwd
		}
		return c
	}
	for n := range 300 {
		titles, body := []titles.Candidate{}, []bodyCandidate{}
		var all []bodyCandidate // what jsonCodec encodes
		for range n % 7 {
			c := candidate()
			if rnd.Intn(2) == 0 {
				c.Mention = ""
				titles = append(titles, c)
				c.Mention = sessionref.Mention(c.DisplayTitle, c.SessionID)
			} else {
				titles = append(titles, c)
			}
			all = append(all, bodyCandidate{Candidate: c})
		}
		for range n % 3 {
			c := bodyCandidate{Candidate: candidate()}
			if rnd.Intn(3) != 0 {
				c.Match = &recall.Match{Role: randomString(rnd), Seq: rnd.Int63n(100), Excerpt: randomString(rnd), Ranges: [][2]int{{0, rnd.Intn(9)}}}
			}
			body = append(body, c)
			all = append(all, c)
		}
		if all == nil {
			all = []bodyCandidate{}
		}
		want, err := jsonCodec{}.Marshal(all)
		if err != nil {
			t.Fatal(err)
		}
		got, err := encodeCandidates(nil, titles, body)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("encodeCandidates:\n got %s\nwant %s", got, want)
		}
		if streamed := streamCandidates(t, candidateList{matched: titles, body: body}); !bytes.Equal(streamed, want) {
			t.Fatalf("the streamed list:\n got %s\nwant %s", streamed, want)
		}
	}
}

// streamCandidates writes the streamed answer of l and checks that it
// wrote the size it announced.
func streamCandidates(t *testing.T, l candidateList) []byte {
	t.Helper()
	a, err := l.streamed()
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if n, err := a.WriteTo(&out); err != nil || n != int64(a.Size()) {
		t.Fatalf("the streamed list: %d bytes written of %d announced, %v", n, a.Size(), err)
	}
	return out.Bytes()
}

// TestStreamedCandidatesSpanFlushes: a list many times streamFlushBytes
// long, measured on several cores and written in many pieces, is written
// as encodeCandidates encodes it, with the size it announced.
func TestStreamedCandidatesSpanFlushes(t *testing.T) {
	rnd := rand.New(rand.NewSource(3))
	var l candidateList
	for len(l.matched) < 4000 {
		cwd := strings.Repeat(randomString(rnd), 4)
		l.matched = append(l.matched, titles.Candidate{SessionID: randomString(rnd), Label: strings.Repeat(randomString(rnd), 3),
			DisplayTitle: randomString(rnd), Cwd: &cwd, CreatedAt: rnd.Int63()})
	}
	for range 50 {
		l.body = append(l.body, bodyCandidate{Candidate: titles.Candidate{SessionID: randomString(rnd)},
			Match: &recall.Match{Role: "user", Excerpt: strings.Repeat(randomString(rnd), 20)}})
	}
	want, err := l.encode(nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(want) < 4*streamFlushBytes {
		t.Fatalf("the list is %d bytes, not several flushes of %d", len(want), streamFlushBytes)
	}
	if got := streamCandidates(t, l); !bytes.Equal(got, want) {
		t.Fatalf("the streamed list differs from the encoded one (%d and %d bytes)", len(got), len(want))
	}
}

// TestEncodeCompletionListIsEncodingJSON compares encodeCompletionList with
// jsonCodec on generated lists covering every optional field, both edit
// types, an edit of another type, data with blanks and a nil item list.
func TestEncodeCompletionListIsEncodingJSON(t *testing.T) {
	rnd := rand.New(rand.NewSource(3))
	rng := func() Range {
		return Range{Start: Position{rnd.Intn(3), rnd.Intn(300)}, End: Position{rnd.Intn(3), rnd.Intn(300)}}
	}
	for n := range 300 {
		list := &completionList{IsIncomplete: rnd.Intn(2) == 0, Items: []completionItem{}}
		if n == 0 {
			list.Items = nil
		}
		for range n % 6 {
			it := completionItem{Label: randomString(rnd), Kind: []int{0, completionKindFile, completionKindReference, completionKindFolder}[rnd.Intn(4)],
				Detail: randomString(rnd), SortText: randomString(rnd), FilterText: randomString(rnd)}
			switch rnd.Intn(4) {
			case 0:
				it.LabelDetails = &labelDetails{Detail: randomString(rnd), Description: randomString(rnd)}
			case 1:
				it.LabelDetails = &labelDetails{}
			}
			if rnd.Intn(5) == 0 {
				it.Documentation = &markupContent{Kind: "markdown", Value: randomString(rnd)}
			}
			switch rnd.Intn(4) {
			case 0:
				it.TextEdit = textEdit{Range: rng(), NewText: randomString(rnd)}
			case 1:
				it.TextEdit = insertReplaceEdit{NewText: randomString(rnd), Insert: rng(), Replace: rng()}
			case 2:
				it.TextEdit = map[string]any{"newText": randomString(rnd)}
			}
			switch rnd.Intn(4) {
			case 0:
				it.Data = &completionData{Kind: dataKindSession, SessionID: randomString(rnd)}
			case 1:
				it.Data = &completionData{Kind: dataKindFile, Path: randomString(rnd)}
			case 2:
				it.Data = &completionData{Kind: randomString(rnd), SessionID: randomString(rnd), Path: randomString(rnd)}
			}
			list.Items = append(list.Items, it)
		}
		want, err := jsonCodec{}.Marshal(list)
		if err != nil {
			t.Fatal(err)
		}
		got, err := encodeCompletionList(nil, list)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("encodeCompletionList:\n got %s\nwant %s", got, want)
		}
	}
}

// benchCandidates are 50 candidates shaped like a store's.
func benchCandidates() []titles.Candidate {
	cands := make([]titles.Candidate, 50)
	for i := range cands {
		cwd := "/home/dev/project-07"
		id := "0a1b2c3d-0000-4000-8000-00000000" + strings.Repeat("7", 4)
		title := "fix the parser retry timeout in the watcher"
		cands[i] = titles.Candidate{SessionID: id, Label: title, DisplayTitle: title, Cwd: &cwd,
			SameWorkspace: true, CreatedAt: 1783350000000 + int64(i)}
	}
	return cands
}

// BenchmarkEncodeCandidates measures encoding a dsh/candidates answer of 50
// candidates by hand with each mention written by the encoder (new), with
// a mention string built for each first (strings, as before
// CandidateQuery.NoMention), and with encoding/json (reflect), for A/B
// with -cpu 1 in one run.
func BenchmarkEncodeCandidates(b *testing.B) {
	cands := benchCandidates()
	b.Run("new", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := encodeCandidates(nil, cands, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("strings", func(b *testing.B) {
		b.ReportAllocs()
		with := slices.Clone(cands)
		for b.Loop() {
			for i := range with {
				with[i].Mention = sessionref.Mention(with[i].DisplayTitle, with[i].SessionID)
			}
			if _, err := encodeCandidates(nil, with, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("reflect", func(b *testing.B) {
		b.ReportAllocs()
		wrapped := make([]bodyCandidate, len(cands))
		for i, c := range cands {
			c.Mention = sessionref.Mention(c.DisplayTitle, c.SessionID)
			wrapped[i] = bodyCandidate{Candidate: c}
		}
		for b.Loop() {
			if _, err := (jsonCodec{}).Marshal(wrapped); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// fillEvery sets every exported field of the struct v points to, and of
// the structs its pointer fields point to, to a value that is not empty:
// a field added to a type without its encoder knowing is then written by
// encoding/json and not by the encoder, and the comparisons below fail.
func fillEvery(t *testing.T, v reflect.Value) {
	t.Helper()
	for i := range v.NumField() {
		f := v.Field(i)
		if !v.Type().Field(i).IsExported() {
			continue
		}
		switch f.Kind() {
		case reflect.String:
			f.SetString("x<\u2028")
		case reflect.Int, reflect.Int64:
			f.SetInt(7)
		case reflect.Bool:
			f.SetBool(true)
		case reflect.Pointer:
			p := reflect.New(f.Type().Elem())
			if p.Elem().Kind() == reflect.Struct {
				fillEvery(t, p.Elem())
			} else if p.Elem().Kind() == reflect.String {
				p.Elem().SetString("/w")
			}
			f.Set(p)
		case reflect.Slice:
			if f.Type() == reflect.TypeOf(json.RawMessage(nil)) {
				f.SetBytes([]byte(`{"kind":"file"}`))
			} else {
				f.Set(reflect.MakeSlice(f.Type(), 1, 1))
			}
		case reflect.Interface:
			f.Set(reflect.ValueOf(textEdit{NewText: "y", Range: Range{End: Position{Line: 1, Character: 2}}}))
		case reflect.Struct:
			fillEvery(t, f)
		default:
			t.Fatalf("fillEvery: no value for field %s of kind %s", v.Type().Field(i).Name, f.Kind())
		}
	}
}

// TestEncodersKnowEveryField fills every field of a candidate and of a
// completion item and compares the encoders with encoding/json.
func TestEncodersKnowEveryField(t *testing.T) {
	var c bodyCandidate
	fillEvery(t, reflect.ValueOf(&c).Elem())
	want, err := jsonCodec{}.Marshal([]bodyCandidate{c})
	if err != nil {
		t.Fatal(err)
	}
	got, err := encodeCandidates(nil, nil, []bodyCandidate{c})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("encodeCandidates of every field:\n got %s\nwant %s", got, want)
	}
	list := completionList{IsIncomplete: true, Items: make([]completionItem, 1)}
	fillEvery(t, reflect.ValueOf(&list.Items[0]).Elem())
	want, err = jsonCodec{}.Marshal(&list)
	if err != nil {
		t.Fatal(err)
	}
	got, err = encodeCompletionList(nil, &list)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("encodeCompletionList of every field:\n got %s\nwant %s", got, want)
	}
}

// TestEncodePrepareResultIsTheCodecs checks that a prepared message is
// answered with the bytes the codec gave it before it had an encoder of
// its own: content compacted and spliced in, the other fields as encoded.
func TestEncodePrepareResultIsTheCodecs(t *testing.T) {
	ctx := &prepare.ContextMessage{Role: "user", ID: "ctx-1", Content: []prepare.ContentBlock{{Type: "text", Text: "<referenced-sessions>\n[]\n</referenced-sessions> & more"}}}
	results := []PrepareResult{
		{Content: json.RawMessage(`"see @Fix <the> parser & more"`), References: []sessionref.Reference{}, Files: []PreparedFile{}},
		{Content: json.RawMessage(`[ {"type": "text", "text": "a < b"} , {"type":"image"} ]`), References: []sessionref.Reference{{SessionID: "s-alpha", Label: "Fix"}},
			AdditionalContext: ctx, Files: []PreparedFile{{Path: "src/a.go"}}, Views: &preparedViews{Message: "dsh-refls:m", Context: "dsh-refls:c"}},
		{Content: nil, References: nil},
	}
	for i, res := range results {
		want, err := jsonCodec{}.Marshal(&res)
		if err != nil {
			t.Fatal(err)
		}
		got, err := encodePrepareResult(&res, nil)
		if err != nil {
			t.Fatalf("result %d: %v", i, err)
		}
		if string(got) != string(want) {
			t.Errorf("result %d:\n got %s\nwant %s", i, got, want)
		}
	}
	// A text message's content, written from its text, is the JSON string
	// PrepareText encodes.
	for _, text := range []string{"", "see @Fix <the> parser & more", "a\xffb \u2028 \x00 \"q\" 会话😀"} {
		res := PrepareResult{References: []sessionref.Reference{}, AdditionalContext: ctx, Files: []PreparedFile{}}
		encoded := res
		encoded.Content = sessionref.AppendJSString(nil, text)
		want, err := jsonCodec{}.Marshal(&encoded)
		if err != nil {
			t.Fatal(err)
		}
		got, err := encodePrepareResult(&res, &text)
		if err != nil {
			t.Fatalf("text %q: %v", text, err)
		}
		if string(got) != string(want) {
			t.Errorf("text %q:\n got %s\nwant %s", text, got, want)
		}
	}
	if _, err := encodePrepareResult(&PrepareResult{Content: json.RawMessage(`{"torn`)}, nil); err == nil {
		t.Error("content that is not JSON was encoded")
	}
}

// storeCandidates are n candidates shaped like those of a generated store
// of 100,000 sessions (~330 bytes each encoded): ids, titles and cwds of
// the lengths dshgen gives, each distinct.
func storeCandidates(n int) []titles.Candidate {
	cands := make([]titles.Candidate, n)
	for i := range cands {
		cwd := fmt.Sprintf("/home/dev/work/project-%04d/services/api", i%2500)
		id := fmt.Sprintf("0a1b2c3d-%04x-4000-8000-%012x", i%65536, i)
		title := fmt.Sprintf("fix the parser retry timeout in the watcher, part %d", i)
		cands[i] = titles.Candidate{SessionID: id, Label: title, DisplayTitle: title, Cwd: &cwd,
			SameWorkspace: i%7 == 0, CreatedAt: 1783350000000 + int64(i)}
	}
	return cands
}

// BenchmarkStreamCandidates measures the complete list of 100,000 sessions
// as a restart answers it (issue 31, item 6): measured on every core, then
// encoded as it is written, here to io.Discard.
func BenchmarkStreamCandidates(b *testing.B) {
	list := candidateList{matched: storeCandidates(100_000)}
	b.ReportAllocs()
	for b.Loop() {
		a, err := list.streamed()
		if err != nil {
			b.Fatal(err)
		}
		if _, err := a.WriteTo(io.Discard); err != nil {
			b.Fatal(err)
		}
		b.SetBytes(int64(a.Size()))
	}
}
