package jsjson

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/dsh-refls/dsh-refls/sessionref/internal/jstest"
)

func TestAppendString(t *testing.T) {
	// Expected values are what node's JSON.stringify printed for the same
	// strings.
	tests := []struct {
		name, in, want string
	}{
		{"plain", "abc", `"abc"`},
		{"empty", "", `""`},
		{"quote and backslash", `a"b\c`, `"a\"b\\c"`},
		{"short escapes", "\b\f\n\r\t", `"\b\f\n\r\t"`},
		{"other controls lowercase hex", "\x00\x01\x0b\x1f", `"\u0000\u0001\u000b\u001f"`},
		{"DEL not escaped", "\x7f", "\"\x7f\""},
		{"html not escaped", "<a href='x'>&amp;</a>", `"<a href='x'>&amp;</a>"`},
		{"line and paragraph separators raw", "\u2028\u2029", "\"\u2028\u2029\""},
		{"slash not escaped", "a/b", `"a/b"`},
		{"CJK and astral raw", "会话😀", `"会话😀"`},
		{"BOM and NBSP raw", "\ufeff\u00a0", "\"\ufeff\u00a0\""},
		{"invalid byte as U+FFFD", "a\xffb", "\"a\ufffdb\""},
		{"encoded surrogate bytes are three invalid bytes", "\xed\xa0\x80", "\"\ufffd\ufffd\ufffd\""},
		{"truncated sequence", "é\xc3", "\"é\ufffd\""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			prefix := []byte("prefix:")
			got := AppendString(prefix, tt.in)
			if string(got) != "prefix:"+tt.want {
				t.Errorf("AppendString(%q) = %q, want %q", tt.in, got[len("prefix:"):], tt.want)
			}
			// Every output is JSON that decodes back to the string as
			// encoding/json reads it.
			var back string
			if err := json.Unmarshal(got[len("prefix:"):], &back); err != nil {
				t.Fatalf("output %q is not JSON: %v", got, err)
			}
			if want := string([]rune(tt.in)); back != want {
				t.Errorf("decoded %q, want %q", back, want)
			}
		})
	}
}

// jsSample mixes the characters on which Go and JavaScript serialisers
// disagree with ordinary text.
type jsSample struct {
	Role    string            `json:"role"`
	Text    string            `json:"text"`
	Extra   json.RawMessage   `json:"extra,omitempty"`
	Nums    []float64         `json:"nums,omitempty"`
	Map     map[string]string `json:"map,omitempty"`
	Nil     *string           `json:"nil"`
	Empty   []int             `json:"empty"`
	EmptyOb struct{}          `json:"emptyOb"`
}

func TestMarshal(t *testing.T) {
	tests := []struct {
		name    string
		in      any
		js      string // Marshal
		tagSafe string // MarshalTagSafe
	}{
		{
			name:    "string with html and separators",
			in:      "</x> & \u2028",
			js:      "\"</x> & \u2028\"",
			tagSafe: "\"\\u003c/x> & \u2028\"",
		},
		{
			name:    "struct keeps field order",
			in:      struct{ B, A string }{"<b>", "a"},
			js:      `{"B":"<b>","A":"a"}`,
			tagSafe: `{"B":"\u003cb>","A":"a"}`,
		},
		{
			name:    "map keys sorted and rewritten",
			in:      map[string]int{"z<": 1, "a\u2029": 2},
			js:      "{\"a\u2029\":2,\"z<\":1}",
			tagSafe: "{\"a\u2029\":2,\"z\\u003c\":1}",
		},
		{
			name:    "invalid UTF-8 as the character U+FFFD",
			in:      []string{"a\xffb"},
			js:      "[\"a\ufffdb\"]",
			tagSafe: "[\"a\ufffdb\"]",
		},
		{
			name:    "control characters",
			in:      "\x00\x1f\b\f\n",
			js:      `"\u0000\u001f\b\f\n"`,
			tagSafe: `"\u0000\u001f\b\f\n"`,
		},
		{
			name:    "raw message escapes normalised",
			in:      json.RawMessage(`{"k\u0041":"\/\u0061\u003c\ud83d\ude00\ud800x\u2028\"","n":[1,2.5,null,true]}`),
			js:      "{\"kA\":\"/a<😀\ufffdx\u2028\\\"\",\"n\":[1,2.5,null,true]}",
			tagSafe: "{\"kA\":\"/a\\u003c😀\ufffdx\u2028\\\"\",\"n\":[1,2.5,null,true]}",
		},
		{
			name:    "numbers and literals untouched",
			in:      []any{1, -2.5, 1e21, true, nil, "x"},
			js:      `[1,-2.5,1e+21,true,null,"x"]`,
			tagSafe: `[1,-2.5,1e+21,true,null,"x"]`,
		},
		{
			name:    "nested sample",
			in:      jsSample{Role: "user", Text: "a<b", Empty: []int{}},
			js:      `{"role":"user","text":"a<b","nil":null,"empty":[],"emptyOb":{}}`,
			tagSafe: `{"role":"user","text":"a\u003cb","nil":null,"empty":[],"emptyOb":{}}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Marshal(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.js {
				t.Errorf("Marshal = %q, want %q", got, tt.js)
			}
			safe, err := MarshalTagSafe(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if string(safe) != tt.tagSafe {
				t.Errorf("MarshalTagSafe = %q, want %q", safe, tt.tagSafe)
			}
			if bytes.IndexByte(safe, '<') >= 0 {
				t.Errorf("tag-safe output %q holds '<'", safe)
			}
		})
	}
}

func TestMarshalIndent(t *testing.T) {
	in := struct {
		ID    string              `json:"sessionId"`
		Cwd   *string             `json:"cwd"`
		Seq   int                 `json:"capturedThroughSeq"`
		Conv  []map[string]string `json:"conversation"`
		Empty []string            `json:"empty"`
		Obj   struct{}            `json:"obj"`
	}{ID: "a<\u2028", Seq: 3, Conv: []map[string]string{{"role": "user", "text": "x\ny"}}, Empty: []string{}}
	want := "{\n" +
		"  \"sessionId\": \"a<\u2028\",\n" +
		"  \"cwd\": null,\n" +
		"  \"capturedThroughSeq\": 3,\n" +
		"  \"conversation\": [\n" +
		"    {\n" +
		"      \"role\": \"user\",\n" +
		"      \"text\": \"x\\ny\"\n" +
		"    }\n" +
		"  ],\n" +
		"  \"empty\": [],\n" +
		"  \"obj\": {}\n" +
		"}"
	got, err := MarshalIndent(in)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Errorf("MarshalIndent =\n%s\nwant\n%s", got, want)
	}
}

func TestMarshalErrors(t *testing.T) {
	bad := map[string]any{"c": make(chan int)}
	if _, err := Marshal(bad); err == nil || !strings.Contains(err.Error(), "encoding JSON") {
		t.Errorf("Marshal(chan) error = %v", err)
	}
	if _, err := MarshalTagSafe(bad); err == nil {
		t.Error("MarshalTagSafe(chan) succeeded")
	}
	if _, err := MarshalIndent(bad); err == nil {
		t.Error("MarshalIndent(chan) succeeded")
	}
}

func TestMarshalTagSafeOfRandomValues(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 500 {
		v := map[string]any{
			jstest.RandomString(rng, 5): []any{jstest.RandomString(rng, 30), i, map[string]string{"t": jstest.RandomString(rng, 20)}},
			"raw":                       rawString(jstest.RandomString(rng, 10)),
		}
		safe, err := MarshalTagSafe(v)
		if err != nil {
			t.Fatal(err)
		}
		js, err := Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if want := bytes.ReplaceAll(js, []byte("<"), []byte(`\u003c`)); !bytes.Equal(safe, want) {
			t.Fatalf("value %d: MarshalTagSafe = %q, want Marshal with '<' escaped %q", i, safe, want)
		}
		// Marshal output still means the same value to encoding/json.
		var a, b any
		goJSON, _ := json.Marshal(v)
		if err := json.Unmarshal(goJSON, &a); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(js, &b); err != nil {
			t.Fatalf("value %d: Marshal output %q is not JSON: %v", i, js, err)
		}
		if fmt.Sprint(a) != fmt.Sprint(b) {
			t.Fatalf("value %d: Marshal changed the value: %v vs %v", i, b, a)
		}
	}
}

// rawString is s as encoding/json escapes it (HTML characters, U+2028,
// invalid UTF-8), handed to the marshaller as a json.Marshaler.
func rawString(s string) json.RawMessage {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	return b
}

// conversationValue builds a data object shaped like a preparation
// snapshot with about size bytes of message text.
func conversationValue(size int) any {
	type message struct {
		Role string `json:"role"`
		Text string `json:"text"`
	}
	type data struct {
		SessionID          string    `json:"sessionId"`
		Label              string    `json:"label"`
		Cwd                *string   `json:"cwd"`
		CapturedThroughSeq int64     `json:"capturedThroughSeq"`
		Conversation       []message `json:"conversation"`
	}
	rng := rand.New(rand.NewPCG(3, 4))
	// Mostly prose and code, with the characters the rewrite must touch
	// (quotes, newlines, tabs, '<', U+2028, CJK, emoji) about one word in
	// eight, as in real conversations.
	plain := []string{"the", "session", "reads", "func", "main()", "{", "}", "path/to/file.go", "return",
		"configuration", "value", "error", "handler", "and", "of", "a", "is", "when", "test", "build"}
	special := []string{"<tag>", "\"quoted\"", "naïve", "会话", "😀", "\t", "\n", "if x < y && y > z", "\u2028"}
	cwd := "/home/dev/project"
	d := data{SessionID: "228b7b82-84ed-49b7-a567-981c03b28c77", Label: "Refactor <b>the</b> parser", Cwd: &cwd}
	total := 0
	for total < size {
		var b strings.Builder
		n := 20 + rng.IntN(2000)
		for b.Len() < n {
			if rng.IntN(8) == 0 {
				b.WriteString(special[rng.IntN(len(special))])
			} else {
				b.WriteString(plain[rng.IntN(len(plain))])
			}
			b.WriteByte(' ')
		}
		role := "user"
		if len(d.Conversation)%2 == 1 {
			role = "assistant"
		}
		d.Conversation = append(d.Conversation, message{Role: role, Text: b.String()})
		total += b.Len()
	}
	d.CapturedThroughSeq = int64(len(d.Conversation) * 3)
	return d
}

func TestConversationValueTagSafe(t *testing.T) {
	v := conversationValue(64 << 10)
	safe, err := MarshalTagSafe(v)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(safe, []byte("<")) || !bytes.Contains(safe, []byte(`\u003ctag>`)) {
		t.Fatalf("tag-safe output not escaped as expected")
	}
	if bytes.Contains(safe, []byte(`\u2028`)) || !bytes.Contains(safe, []byte("\u2028")) {
		t.Fatalf("U+2028 must be written raw")
	}
}

func BenchmarkMarshalTagSafe(b *testing.B) {
	v := conversationValue(1 << 20)
	out, err := MarshalTagSafe(v)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(out)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := MarshalTagSafe(v); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEncodingJSON is the baseline: encoding/json alone on the same
// value, for comparing the cost of the JavaScript rewrite.
func BenchmarkEncodingJSON(b *testing.B) {
	v := conversationValue(1 << 20)
	out, err := json.Marshal(v)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(out)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := json.Marshal(v); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRewriteTagSafe measures the JavaScript rewrite alone, on
// encoding/json's output for the same value.
func BenchmarkRewriteTagSafe(b *testing.B) {
	raw, err := json.Marshal(conversationValue(1 << 20))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(raw)))
	dst := make([]byte, 0, 2*len(raw))
	for b.Loop() {
		dst = rewriteJSON(dst[:0], raw, true)
	}
}

// TestAppendStringIsMarshalOfAString checks that AppendString writes a
// string exactly as Marshal does, on the strings where serialisers differ
// and on random bytes: callers may use either.
func TestAppendStringIsMarshalOfAString(t *testing.T) {
	inputs := []string{"", "abc", `a"b\c`, "\b\f\n\r\t\x00\x1f\x7f", "<a>&amp;</a>", "\u2028\u2029", "会话😀",
		"a\xffb", "\xed\xa0\x80", "é\xc3", "\ufeff\u00a0", strings.Repeat("lorem ipsum ", 1000)}
	rng := rand.New(rand.NewPCG(7, 31))
	for i := 0; i < 2000; i++ {
		b := make([]byte, rng.IntN(40))
		for j := range b {
			b[j] = byte(rng.IntN(256))
		}
		inputs = append(inputs, string(b))
	}
	for _, s := range inputs {
		want, err := Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := AppendString(nil, s); string(got) != string(want) {
			t.Fatalf("AppendString(%q) = %q, Marshal = %q", s, got, want)
		}
	}
}
