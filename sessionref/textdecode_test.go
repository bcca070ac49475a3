package sessionref

import (
	"context"
	"encoding/json"
	"os"
	"testing"
	"unicode/utf8"
)

// Expected values: what Node's Buffer.toString("utf8") then JSON.parse give
// (dsh's line decoding, packages/session/session-persistence-jsonl/src/
// format.ts), and, for sizes and cuts, dsh's retainReferencedSession run on
// the decoded string.

func TestDecodeJSText(t *testing.T) {
	tests := []struct{ name, raw, want string }{
		{"two invalid bytes, two U+FFFD", "\"x\xff\xfey\"", "x\uFFFD\uFFFDy"},
		{"cut four-byte sequence, one U+FFFD", "\"x\xf0\x9f\x98z\"", "x\uFFFDz"},
		{"cut sequence then a lone lead", "\"\xe2\x82\xc3\"", "\uFFFD\uFFFD"},
		{"surrogate bytes are three invalid bytes", "\"\xed\xa0\x80\"", "\uFFFD\uFFFD\uFFFD"},
		{"above U+10FFFF", "\"\xf4\x90\x80\x80\"", "\uFFFD\uFFFD\uFFFD\uFFFD"},
		{"overlong", "\"\xe0\x80\xc0\xaf\"", "\uFFFD\uFFFD\uFFFD\uFFFD"},
		{"escaped lone high", `"\ud800"`, "\xed\xa0\x80"},
		{"escaped pair", `"\ud83d\ude00"`, "😀"},
		{"escaped pair, upper case", `"\uD83D\uDE00"`, "😀"},
		{"reversed pair stays two lone", `"\ude00\ud83d"`, "\xed\xb8\x80\xed\xa0\xbd"},
		{"lone high then a pair", `"\ud800\ud800\udc00"`, "\xed\xa0\x80𐀀"},
		{"short escapes", `"\"\\\/\b\f\n\r\t\u0000"`, "\"\\/\b\f\n\r\t\x00"},
		{"U+FFFD itself", "\"\uFFFD\"", "\uFFFD"},
	}
	for _, tt := range tests {
		got, ok := decodeJSText([]byte(tt.raw))
		if !ok || got != tt.want {
			t.Errorf("%s: decodeJSText(%q) = %q, %v; want %q", tt.name, tt.raw, got, ok, tt.want)
		}
	}
	for _, raw := range []string{``, `"`, `5`, `"\x"`, `"\u12"`, `"\uzzzz"`, `"a\"`} {
		if _, ok := decodeJSText([]byte(raw)); ok {
			t.Errorf("decodeJSText(%q) accepted", raw)
		}
	}
}

func TestJSTextSerialisesLoneSurrogates(t *testing.T) {
	s := "a\xed\xa0\x80b\xed\xbf\xbf<"
	if got := string(appendJSText(nil, s, true)); got != `"a\ud800b\udfff\u003c"` {
		t.Errorf("appendJSText = %s", got)
	}
	if got := jsTextLen(s, true); got != len(`"a\ud800b\udfff\u003c"`) {
		t.Errorf("jsTextLen = %d", got)
	}
	if got := wellFormed(s); got != "a\uFFFDb\uFFFD<" {
		t.Errorf("wellFormed = %q", got)
	}
}

// surrogateText is written in the log with \u escapes: two lone surrogates
// and one pair.
const surrogateText = `lone \ud800 high, lone \udfff low, pair \ud83d\ude00, and <tail> text that goes on for a while`

func textDecodeStore(t *testing.T) *Snapshot {
	s := newTestStore(t)
	s.simple("sur", "/w", fixtureTime,
		`{"type":"user/message","seq":0,"time":1,"data":{"id":"u","role":"user","source":{"kind":"user"},"content":[{"type":"text","text":"`+surrogateText+`"}]},"surfaceOp":"append"}`,
		turnEnd(1))
	s.simple("num", "/w", fixtureTime+1,
		`{"type":"user/message","seq":0,"time":1,"data":{"id":"u","role":"user","source":{"kind":"user"},"content":[{"type":"text","text":5},{"type":"text","text":{"x":1}},"junk",{"type":"text","text":"ok"}]},"surfaceOp":"append"}`,
		assistantMsg(1, "fine"), turnEnd(2))
	s.simple("bytes", "/w", fixtureTime+2,
		"{\"type\":\"user/message\",\"seq\":0,\"time\":1,\"data\":{\"id\":\"u\",\"role\":\"user\",\"source\":{\"kind\":\"user\"},\"content\":[{\"type\":\"text\",\"text\":\"x\xff\xfey \xf0\x9f\x98z\"}]},\"surfaceOp\":\"append\"}",
		turnEnd(1))
	return s.index().Snapshot()
}

func TestProjectionDecodesTextAsDsh(t *testing.T) {
	snap := textDecodeStore(t)
	tests := []struct {
		id     string
		budget int
		data   string
		stats  Stats
	}{
		// 201 bytes exactly when each lone surrogate is the 6-byte \udxxx.
		{"sur", 201, `{"sessionId":"sur","label":"sur","cwd":"/w","capturedThroughSeq":1,"conversation":[{"role":"user","text":"lone \ud800 high, lone \udfff low, pair 😀, and <tail> text that goes on for a while"}]}`,
			Stats{OriginalMessages: 1, RetainedMessages: 1}},
		// A cut keeps what TextDecoder reads back: lone surrogates become U+FFFD.
		{"sur", 200, `{"sessionId":"sur","label":"sur","cwd":"/w","capturedThroughSeq":1,"conversation":[{"role":"user","text":"lone � high, lone �hat goes on for a while\n[… omitted 34 UTF-8 bytes …]"}]}`,
			Stats{OriginalMessages: 1, RetainedMessages: 1, OmittedBytes: 34, Truncated: true}},
		{"sur", 180, `{"sessionId":"sur","label":"sur","cwd":"/w","capturedThroughSeq":1,"conversation":[{"role":"user","text":"lone � highn for a while\n[… omitted 54 UTF-8 bytes …]"}]}`,
			Stats{OriginalMessages: 1, RetainedMessages: 1, OmittedBytes: 54, Truncated: true}},
		// Blocks whose text is not a string, and entries that are not
		// blocks, are skipped; the log reads.
		{"num", 65536, `{"sessionId":"num","label":"num","cwd":"/w","capturedThroughSeq":2,"conversation":[{"role":"user","text":"ok"},{"role":"assistant","text":"fine"}]}`,
			Stats{OriginalMessages: 2, RetainedMessages: 2}},
		// One U+FFFD per maximal invalid subsequence.
		{"bytes", 65536, `{"sessionId":"bytes","label":"bytes","cwd":"/w","capturedThroughSeq":1,"conversation":[{"role":"user","text":"x��y �z"}]}`,
			Stats{OriginalMessages: 1, RetainedMessages: 1}},
	}
	for _, tt := range tests {
		got, err := SnapshotOf(context.Background(), snap, Reference{SessionID: tt.id}, tt.budget)
		if err != nil {
			t.Errorf("%s at %d: %v", tt.id, tt.budget, err)
			continue
		}
		if string(got.Data) != tt.data || got.Stats != tt.stats {
			t.Errorf("%s at %d:\n got %s %+v\nwant %s %+v", tt.id, tt.budget, got.Data, got.Stats, tt.data, tt.stats)
		}
	}
}

func TestSpillKeepsLoneSurrogates(t *testing.T) {
	snap := textDecodeStore(t)
	spillDir := t.TempDir()
	if _, err := Prepare(context.Background(), snap, "target", []Reference{{SessionID: "sur"}}, Limits{MaxReferenceBytes: 200, SpillDir: spillDir}); err != nil {
		t.Fatal(err)
	}
	files := spillFiles(spillDir)
	if len(files) != 1 {
		t.Fatalf("spill files %v", files)
	}
	raw, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	body := string(raw)
	// dsh's renderTranscript: 64 code points per fragment, a lone
	// surrogate one of them, written by JSON.stringify as \udxxx.
	want := "\n\n### Message 1: user\n\n\"lone \\ud800 high, lone \\udfff low, pair 😀, and <tail> text that goes on fo\"\n\"r a while\"\n"
	if len(body) < len(want) || body[len(body)-len(want):] != want {
		t.Errorf("spill file ends %q, want %q", body, want)
	}
}

// FuzzDecodeJSText checks decodeJSText against encoding/json where the two
// must agree (valid UTF-8 in, lone surrogates read as U+FFFD by Go), and
// that JSON.stringify of the result reads back to it.
func FuzzDecodeJSText(f *testing.F) {
	for _, s := range []string{`"a"`, `"\ud800"`, `"\ud83d\ude00"`, "\"x\xff\xfey\"", `"\u00e9\n"`, `"\"\\"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var want string
		if json.Unmarshal(raw, &want) != nil || len(raw) == 0 || raw[0] != '"' || raw[len(raw)-1] != '"' {
			return
		}
		got, ok := decodeJSText(raw)
		if !ok {
			t.Fatalf("decodeJSText(%q) refused a JSON string", raw)
		}
		if utf8.Valid(raw) && wellFormed(got) != want {
			t.Fatalf("decodeJSText(%q) = %q, encoding/json %q", raw, got, want)
		}
		again, ok := decodeJSText(appendJSText(nil, got, false))
		if !ok || again != got {
			t.Fatalf("%q does not survive JSON.stringify: %q", got, again)
		}
		if n := jsTextLen(got, true); n != len(appendJSText(nil, got, true)) {
			t.Fatalf("jsTextLen(%q) = %d", got, n)
		}
	})
}
