package sessionref

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"
)

func TestMention(t *testing.T) {
	tests := []struct {
		name, label, id, want string
	}{
		{"label", "Fix the parser", "a", "@[Fix the parser](dsh-session:ImEi)"},
		{"empty label is the id", "", "a", "@[a](dsh-session:ImEi)"},
		{"bracket escaped", "a]b", "a", `@[a\]b](dsh-session:ImEi)`},
		{"backslash escaped", `a\b`, "a", `@[a\\b](dsh-session:ImEi)`},
		{"trailing backslash", `x\`, "a", `@[x\\](dsh-session:ImEi)`},
		{"open bracket and parens kept", "[x](y)", "a", `@[[x\](y)](dsh-session:ImEi)`},
		{"id with bracket as label", "", "a]", `@[a\]](dsh-session:ImFdIg)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Mention(tt.label, tt.id); got != tt.want {
				t.Errorf("Mention(%q, %q) = %q, want %q", tt.label, tt.id, got, tt.want)
			}
		})
	}
}

// TestMentionAllocatesOnce: a mention is one allocation, its string, for
// labels and ids of the usual lengths (candidates carry one each).
func TestMentionAllocatesOnce(t *testing.T) {
	for _, in := range [][2]string{{"Fix the parser", "0a1b2c3d-0000-4000-8000-000000000007"}, {`a]b\c`, "s1"}, {"", "0a1b2c3d"}} {
		if n := testing.AllocsPerRun(100, func() { _ = Mention(in[0], in[1]) }); n != 1 {
			t.Errorf("Mention(%q, %q) allocates %v times, want 1", in[0], in[1], n)
		}
	}
}

// TestAppendMentionParts checks the parts AppendMention hands to its
// text writer: the mention's syntax, the label cut at each byte it
// escapes, each escape on its own; the payload alone is appended as it is.
func TestAppendMentionParts(t *testing.T) {
	var parts []string
	mark := func(dst []byte, s string) []byte {
		parts = append(parts, s)
		return append(append(append(dst, '<'), s...), '>')
	}
	got := string(AppendMention([]byte("see "), `a]b\c`, "a", mark))
	if want := `see <@[><a><\]><b><\\><c><](dsh-session:>ImEi<)>`; got != want {
		t.Errorf("AppendMention wrote %s, want %s", got, want)
	}
	if want := []string{"@[", "a", `\]`, "b", `\\`, "c", "](dsh-session:", ")"}; !slices.Equal(parts, want) {
		t.Errorf("parts %q, want %q", parts, want)
	}
	parts = nil
	if got, want := string(AppendMention(nil, "", "a", mark)), "<@[><a><](dsh-session:>ImEi<)>"; got != want {
		t.Errorf("AppendMention of an empty label wrote %s, want %s (the id as the label)", got, want)
	}
}

func TestMentionRoundTrip(t *testing.T) {
	labels := []string{"plain", `\`, `]`, `\]`, `]]\\[[`, "multi\nline", "cr\rlf", "sep\u2028", "😀 会话",
		"@[nested](dsh-session:ImEi)", "dsh-session:ImEi", "", " ", "a\xffb"}
	ids := []string{"a", "228b7b82-84ed-49b7-a567-981c03b28c77", "x)y", "a b", "<\u2028\n\"\\", "😀"}
	for _, label := range labels {
		for _, id := range ids {
			m := Mention(label, id)
			text := "before " + m + " after"
			spans := FindMentions(text)
			want := label
			if want == "" {
				want = id
			}
			if len(spans) != 1 {
				t.Fatalf("FindMentions(%q) found %d spans: %+v", text, len(spans), spans)
			}
			s := spans[0]
			if s.Err != nil || s.Bare || s.SessionID != id || s.Label != want || s.URI != EncodeURI(id) ||
				text[s.Start:s.End] != m {
				t.Errorf("FindMentions(%q) = %+v; want label %q id %q", text, s, want, id)
			}
			rewritten, refs, err := ParseText(text)
			if err != nil {
				t.Fatalf("ParseText(%q): %v", text, err)
			}
			if rewritten != "before @"+want+" after" {
				t.Errorf("ParseText(%q) text = %q", text, rewritten)
			}
			if !reflect.DeepEqual(refs, []Reference{{SessionID: id, Label: want}}) {
				t.Errorf("ParseText(%q) refs = %+v", text, refs)
			}
		}
	}
}

// spanSummary is the comparable part of a MentionSpan.
type spanSummary struct {
	Start, End int
	Label, ID  string
	Bare       bool
	Err        bool
}

func summarise(spans []MentionSpan) []spanSummary {
	out := make([]spanSummary, 0, len(spans))
	for _, s := range spans {
		out = append(out, spanSummary{s.Start, s.End, s.Label, s.SessionID, s.Bare, s.Err != nil})
	}
	return out
}

func TestFindMentions(t *testing.T) {
	uriA := EncodeURI("a")
	uriB := EncodeURI("b]")
	tests := []struct {
		name string
		text string
		want []spanSummary
	}{
		{"none", "hello @world dsh-session", []spanSummary{}},
		{"scheme alone is text", "see dsh-session: now", []spanSummary{}},
		{"scheme with percent is text", "dsh-session:%%%", []spanSummary{}},
		{"markdown", "x @[A](" + uriA + ") y", []spanSummary{{2, 2 + len("@[A]("+uriA+")"), "A", "a", false, false}}},
		{"bare", "x " + uriA + ".", []spanSummary{{2, 2 + len(uriA), "a", "a", true, false}}},
		{"bare stops at non-base64", uriA + "%", []spanSummary{{0, len(uriA), "a", "a", true, false}}},
		{"escaped label", `@[x\]y\\](` + uriB + ")", []spanSummary{{0, len(`@[x\]y\\](` + uriB + ")"), `x]y\`, "b]", false, false}}},
		{"escape of any character", `@[\a\(](` + uriA + ")", []spanSummary{{0, len(`@[\a\(](` + uriA + ")"), "a(", "a", false, false}}},
		{"two in order", "@[1](" + uriA + ")" + uriB, []spanSummary{
			{0, len("@[1](" + uriA + ")"), "1", "a", false, false},
			{len("@[1](" + uriA + ")"), len("@[1](" + uriA + ")" + uriB), "b]", "b]", true, false}}},
		{"markdown with malformed URI", "@[x](dsh-session:%%%)", []spanSummary{{0, 21, "x", "", false, true}}},
		{"markdown with empty payload", "@[x](dsh-session:)", []spanSummary{{0, 18, "x", "", false, true}}},
		{"markdown with non-canonical payload", "@[x](dsh-session:ImEi==)", []spanSummary{{0, 24, "x", "", false, true}}},
		{"bare non-canonical", "dsh-session:abc", []spanSummary{{0, 15, "", "", true, true}}},
		{"unclosed markdown falls back to bare", "@[x](" + uriA + " )", []spanSummary{{5, 5 + len(uriA), "a", "a", true, false}}},
		{"space in label allowed", "@[a b](" + uriA + ")", []spanSummary{{0, len("@[a b](" + uriA + ")"), "a b", "a", false, false}}},
		{"newline in label allowed", "@[a\nb](" + uriA + ")", []spanSummary{{0, len("@[a\nb](" + uriA + ")"), "a\nb", "a", false, false}}},
		{"escaped newline ends label", "@[a\\\nb](" + uriA + ")", []spanSummary{{len("@[a\\\nb]("), len("@[a\\\nb](" + uriA), "a", "a", true, false}}},
		{"escaped U+2028 ends label", "@[a\\\u2028](" + uriA + ")", []spanSummary{{len("@[a\\\u2028]("), len("@[a\\\u2028](" + uriA), "a", "a", true, false}}},
		{"escaped U+0085 allowed", "@[\\\u0085](" + uriA + ")", []spanSummary{{0, len("@[\\\u0085](" + uriA + ")"), "\u0085", "a", false, false}}},
		{"NBSP ends the URI", "@[x](" + uriA + "\u00a0)", []spanSummary{{5, 5 + len(uriA), "a", "a", true, false}}},
		{"U+3000 ends the URI", "@[x](" + uriA + "\u3000)", []spanSummary{{5, 5 + len(uriA), "a", "a", true, false}}},
		{"U+0085 does not end the URI", "@[x](" + uriA + "\u0085)", []spanSummary{{0, len("@[x](" + uriA + "\u0085)"), "x", "", false, true}}},
		{"earlier open bracket wins", "@[x @[y](" + uriA + ")", []spanSummary{{0, len("@[x @[y](" + uriA + ")"), "x @[y", "a", false, false}}},
		{"bracket before link breaks it", "@[x] (" + uriA + ")", []spanSummary{{6, 6 + len(uriA), "a", "a", true, false}}},
		{"text after label not a link", "@[x](http://e) " + uriA, []spanSummary{{15, 15 + len(uriA), "a", "a", true, false}}},
		{"label ends at first bracket", "@[x](y) @[z](" + uriA + ")", []spanSummary{{8, len("@[x](y) @[z](" + uriA + ")"), "z", "a", false, false}}},
		{"URI inside label is label text", "@[" + uriA + "](" + uriA + ")", []spanSummary{{0, len("@[" + uriA + "](" + uriA + ")"), uriA, "a", false, false}}},
		{"unterminated label then bare", "@[abc " + uriA, []spanSummary{{6, 6 + len(uriA), "a", "a", true, false}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := summarise(FindMentions(tt.text))
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("FindMentions(%q) =\n %+v\nwant\n %+v", tt.text, got, tt.want)
			}
			if re := summarise(findMentionsRegexp(tt.text)); !reflect.DeepEqual(re, got) {
				t.Errorf("regexp version disagrees:\n %+v", re)
			}
		})
	}
}

func TestMentionErrors(t *testing.T) {
	spans := FindMentions("ok then @[bad](dsh-session:ImEi==) later")
	if len(spans) != 1 || spans[0].Err == nil {
		t.Fatalf("spans = %+v", spans)
	}
	err := spans[0].Err
	if CodeOf(err) != CodeInvalidReference {
		t.Errorf("code = %q", CodeOf(err))
	}
	for _, part := range []string{`"dsh-session:ImEi=="`, "outside [A-Za-z0-9_-]"} {
		if !strings.Contains(err.Error(), part) {
			t.Errorf("error %q does not mention %q", err.Error(), part)
		}
	}
	// Where it is, is the span's; the message a person reads has no offset.
	if spans[0].Start != 8 || strings.Contains(err.Error(), "byte") {
		t.Errorf("span starts at %d, want 8; message %q", spans[0].Start, err.Error())
	}
}

func TestParseText(t *testing.T) {
	uriA, uriB := EncodeURI("a"), EncodeURI("b")
	tests := []struct {
		name     string
		text     string
		want     string
		wantRefs []Reference
		wantErr  string
	}{
		{"no mentions", "plain @text", "plain @text", nil, ""},
		{"markdown", "see @[Alpha](" + uriA + ") now", "see @Alpha now", []Reference{{SessionID: "a", Label: "Alpha"}}, ""},
		{"bare", "see " + uriB + ".", "see @b.", []Reference{{SessionID: "b", Label: "b"}}, ""},
		{"escaped label unescaped", `@[a\]\\](` + uriA + ")", `@a]\`, []Reference{{SessionID: "a", Label: `a]\`}}, ""},
		{"no de-duplication", "@[x](" + uriA + ") @[y](" + uriA + ") " + uriA, "@x @y @a",
			[]Reference{{SessionID: "a", Label: "x"}, {SessionID: "a", Label: "y"}, {SessionID: "a", Label: "a"}}, ""},
		{"empty label kept literal", "@[](" + uriA + ")", "@", []Reference{{SessionID: "a", Label: "", EmptyLabel: true}}, ""},
		{"scheme alone", "dsh-session: and dsh-session:%%%", "dsh-session: and dsh-session:%%%", nil, ""},
		{"first malformed reported", "@[x](" + uriA + ") @[bad](dsh-session:zz) dsh-session:abc", "", nil, `malformed session reference "dsh-session:zz"`},
		{"bare malformed", "x dsh-session:abc", "", nil, `malformed session reference "dsh-session:abc"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, refs, err := ParseText(tt.text)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || CodeOf(err) != CodeInvalidReference {
					t.Fatalf("ParseText(%q) = %q, %+v, %v; want error %q", tt.text, got, refs, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want || !reflect.DeepEqual(refs, tt.wantRefs) {
				t.Errorf("ParseText(%q) = %q, %+v, %v; want %q, %+v", tt.text, got, refs, err, tt.want, tt.wantRefs)
			}
		})
	}
}

func TestFindMentionsLinearOnOpenBrackets(t *testing.T) {
	// Without remembering failed label scans this text costs n²/2 steps.
	text := strings.Repeat("@[", 200000) + EncodeURI("a")
	spans := FindMentions(text)
	if len(spans) != 1 || !spans[0].Bare || spans[0].SessionID != "a" {
		t.Fatalf("spans = %+v", summarise(spans))
	}
}

// nodeMentionScript prints, for each text of the JSON array in the file
// named by its first argument, the [index, length] pairs (UTF-16 units) of
// every match of the §2.1 pattern and the captured groups.
const nodeMentionScript = `
const fs = require("fs");
const texts = JSON.parse(fs.readFileSync(process.argv[1], "utf8"));
const re = /@\[((?:\\.|[^\\\]])*)\]\((dsh-session:[^\s)]*)\)|(dsh-session:[A-Za-z0-9_-]+)/g;
process.stdout.write(JSON.stringify(texts.map((t) =>
  [...t.matchAll(re)].map((m) => [m.index, m[0].length, m[1] ?? null, m[2] ?? m[3]]))));
`

// utf16Offset converts a byte offset of s into UTF-16 code units.
func utf16Offset(s string, byteOff int) int {
	n := 0
	for _, r := range s[:byteOff] {
		n += utf16.RuneLen(r)
	}
	return n
}

// rawLabel returns the label text of a Markdown mention span as written.
func rawLabel(text string, s MentionSpan) string {
	inner := text[s.Start+len(mentionOpen) : s.End-1-len(s.URI)-len(mentionLink)]
	return inner
}

// mentionFragments are pieces whose combinations reach every branch of
// the pattern, in JavaScript's reading of it.
var mentionFragments = []string{
	"@[", "@", "[", "]", "](", "(", ")", `\`, `\]`, `\\`, "dsh-session:", "dsh-session:ImEi",
	"ImEi", "abc", "%", " ", "\n", "\r", "\t", "\u2028", "\u2029", "\u00a0", "\u0085", "\u3000",
	"\ufeff", "\u200b", "\u180e", "é", "😀", "x", "-_", "=",
	"](dsh-session:", "](dsh-session:ImEi", "ImEi)", "@[x](dsh-session:ImEi", "@[\\",
}

func TestFindMentionsAgainstLiveNode(t *testing.T) {
	node := requireNode(t)
	rng := rand.New(rand.NewPCG(7, 8))
	texts := make([]string, 3000)
	for i := range texts {
		var b strings.Builder
		for range 1 + rng.IntN(14) {
			b.WriteString(mentionFragments[rng.IntN(len(mentionFragments))])
		}
		texts[i] = b.String()
	}
	var got [][][4]any
	if err := json.Unmarshal(runNode(t, node, nodeMentionScript, texts), &got); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(texts) {
		t.Fatalf("node answered %d texts, sent %d", len(got), len(texts))
	}
	matched := 0
	for i, text := range texts {
		spans := FindMentions(text)
		var mine [][4]any
		for _, s := range spans {
			var label any
			if !s.Bare {
				label = rawLabel(text, s)
			}
			start := utf16Offset(text, s.Start)
			mine = append(mine, [4]any{float64(start), float64(utf16Offset(text, s.End) - start), label, s.URI})
		}
		matched += len(mine)
		if len(mine) == 0 && len(got[i]) == 0 {
			continue
		}
		if !reflect.DeepEqual(mine, got[i]) {
			t.Errorf("text %q:\n go   %v\n node %v", text, mine, got[i])
		}
	}
	if matched < len(texts)/10 {
		t.Errorf("only %d matches over %d texts; the generator no longer exercises the pattern", matched, len(texts))
	}
	if !utf8.ValidString(strings.Join(mentionFragments, "")) {
		t.Fatal("fragments must be valid UTF-8 to pass through JSON to node")
	}
}

// BenchmarkFindMentions scans a message of about 100 KB with one mention
// per line.
func BenchmarkFindMentions(b *testing.B) {
	var sb strings.Builder
	for sb.Len() < 100<<10 {
		sb.WriteString("as discussed in ")
		sb.WriteString(Mention("Refactor the parser", "228b7b82-84ed-49b7-a567-981c03b28c77"))
		sb.WriteString(", the dsh-session: scheme and @user notes still apply.\n")
	}
	text := sb.String()
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		if spans := FindMentions(text); len(spans) == 0 {
			b.Fatal("no mentions found")
		}
	}
}

// TestAppendMentionOfWritten: a label PlainMentionLabel accepts, written by
// the caller, makes the mention AppendMention makes of it; the labels it
// refuses are those a mention writes otherwise.
func TestAppendMentionOfWritten(t *testing.T) {
	id := "0a1b2c3d-0000-4000-8000-000000007777"
	for _, label := range []string{"fix the parser", "x", "é ü [draft", id} {
		if !PlainMentionLabel(label) {
			t.Fatalf("PlainMentionLabel(%q) = false", label)
		}
		got := string(AppendMentionOfWritten([]byte("> "), []byte(label), id, appendText))
		if want := "> " + Mention(label, id); got != want {
			t.Fatalf("AppendMentionOfWritten(%q) = %q, want %q", label, got, want)
		}
	}
	for _, label := range []string{"", `a\b`, "a]b", `]`} {
		if PlainMentionLabel(label) {
			t.Fatalf("PlainMentionLabel(%q) = true", label)
		}
	}
}

// TestAppendMentionOfWrittenFromItsOwnArray: the label's bytes may lie in
// the array the mention is appended to, whether appending grows it or
// not, as the server's encoder passes them.
func TestAppendMentionOfWrittenFromItsOwnArray(t *testing.T) {
	id, label := "0a1b2c3d-0000-4000-8000-000000007777", "fix the parser"
	for _, spare := range []int{0, 4096} {
		dst := append(make([]byte, 0, len(label)+spare), label...)
		got := string(AppendMentionOfWritten(dst, dst[:len(label)], id, appendText))
		if want := label + Mention(label, id); got != want {
			t.Fatalf("spare %d: got %q, want %q", spare, got, want)
		}
	}
}
