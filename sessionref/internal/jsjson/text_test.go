package jsjson

import (
	"encoding/json"
	"testing"
	"unicode/utf8"
)

// Expected values: what Node's Buffer.toString("utf8") then JSON.parse give
// (dsh's line decoding, packages/session/session-persistence-jsonl/src/
// format.ts).

func TestDecodeText(t *testing.T) {
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
		got, ok := DecodeText([]byte(tt.raw))
		if !ok || got != tt.want {
			t.Errorf("%s: DecodeText(%q) = %q, %v; want %q", tt.name, tt.raw, got, ok, tt.want)
		}
	}
	for _, raw := range []string{``, `"`, `5`, `"\x"`, `"\u12"`, `"\uzzzz"`, `"a\"`} {
		if _, ok := DecodeText([]byte(raw)); ok {
			t.Errorf("DecodeText(%q) accepted", raw)
		}
	}
}

func TestAppendTextWritesLoneSurrogates(t *testing.T) {
	s := "a\xed\xa0\x80b\xed\xbf\xbf<"
	if got := string(AppendText(nil, s, true)); got != `"a\ud800b\udfff\u003c"` {
		t.Errorf("AppendText = %s", got)
	}
	if got := TextLen(s, true); got != len(`"a\ud800b\udfff\u003c"`) {
		t.Errorf("TextLen = %d", got)
	}
	if got := WellFormed(s); got != "a\uFFFDb\uFFFD<" {
		t.Errorf("WellFormed = %q", got)
	}
}

// FuzzDecodeText checks DecodeText against encoding/json where the two
// must agree (valid UTF-8 in, lone surrogates read as U+FFFD by Go), and
// that JSON.stringify of the result reads back to it.
func FuzzDecodeText(f *testing.F) {
	for _, s := range []string{`"a"`, `"\ud800"`, `"\ud83d\ude00"`, "\"x\xff\xfey\"", `"\u00e9\n"`, `"\"\\"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var want string
		if json.Unmarshal(raw, &want) != nil || len(raw) == 0 || raw[0] != '"' || raw[len(raw)-1] != '"' {
			return
		}
		got, ok := DecodeText(raw)
		if !ok {
			t.Fatalf("DecodeText(%q) refused a JSON string", raw)
		}
		if utf8.Valid(raw) && WellFormed(got) != want {
			t.Fatalf("DecodeText(%q) = %q, encoding/json %q", raw, got, want)
		}
		again, ok := DecodeText(AppendText(nil, got, false))
		if !ok || again != got {
			t.Fatalf("%q does not survive JSON.stringify: %q", got, again)
		}
		if n := TextLen(got, true); n != len(AppendText(nil, got, true)) {
			t.Fatalf("TextLen(%q) = %d", got, n)
		}
	})
}
