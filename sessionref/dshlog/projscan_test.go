package dshlog

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// validCases are JSON texts around every rule of the grammar, valid and
// not, including the bytes the eight-at-a-time string scan must not miss
// at every position of a word.
var validCases = []string{
	``, ` `, `{}`, ` {} `, `[]`, `[ ]`, `{ }`, `"a"`, `0`, `-0`, `01`, `-`, `1.`, `1.5`, `.5`, `1e`, `1e+`, `1E-7`,
	`1e5x`, `-01`, `123456789012345678901234567890`, `true`, `tru`, `truex`, `false`, `null`, `nul`, `nullnull`,
	`{"a":1}`, `{"a":1,}`, `{"a" 1}`, `{"a":}`, `{a:1}`, `{"a":1 "b":2}`, `[1,]`, `[,1]`, `[1 2]`, `[1,2]`,
	`{"a":[1,{"b":null}],"c":"d"}`, `[}`, `{]`, `[[[]]]`, `[[[]]`, `{"a":{"b":{}}}}`, `"\u0041"`, `"\u004"`,
	`"\u00zz"`, `"\x"`, `"\"`, `"\\"`, `"a\"b"`, "\"\t\"", "\"a\x1fb\"", "\"\x7f\"", "\"\xff\xfe\"", "\"é\"",
	`"\/\b\f\n\r\t"`, `"abc`, `{"a":"b"`, "\n{\"a\":1}\r\n", "{}\x00", "\x00", `{"a":1}{}`, `"1234567\"`,
	`"12345678"`, `"1234567\\"`, "\"1234567\x01\"", `"12345678901234567890\"1234"`, `[1e309]`, `{"":""}`,
}

func TestFastValidAgreesWithEncodingJSON(t *testing.T) {
	cases := append([]string(nil), validCases...)
	// A quote, backslash or control byte at each offset of a word, in
	// strings long enough to take the word-at-a-time path.
	for i := 0; i < 17; i++ {
		for _, c := range []string{`"`, `\`, `\"`, `\\`, "\x00", "\x1f", " ", "\x80", "\\u0041", "\\q"} {
			cases = append(cases, `"`+strings.Repeat("x", i)+c+strings.Repeat("y", 17-i)+`"`)
		}
	}
	deep := func(n int, open, close string) string { return strings.Repeat(open, n) + strings.Repeat(close, n) }
	cases = append(cases, deep(fastValidMaxDepth, "[", "]"), deep(fastValidMaxDepth+1, "[", "]"),
		deep(10000, "[", "]"), deep(10001, "[", "]"), deep(3000, `{"a":[`, "]}"))
	for _, c := range cases {
		want := json.Valid([]byte(c))
		if got := fastValid([]byte(c)); got && !want {
			t.Errorf("fastValid(%.80q) = true, json.Valid false", c)
		}
		if got := validJSON([]byte(c)); got != want {
			t.Errorf("validJSON(%.80q) = %v, json.Valid %v", c, got, want)
		}
	}
	// fastValid itself decides what it can: everything json.Valid accepts
	// up to its own depth limit.
	for _, c := range []string{`{"a":[1,-2.5e3,{"b":null,"c":true,"d":false}],"e":"\u00e9\n"}`, deep(fastValidMaxDepth, "[", "]")} {
		if !fastValid([]byte(c)) {
			t.Errorf("fastValid(%.80q) = false", c)
		}
	}
}

// FuzzFastValid: fastValid never accepts what json.Valid refuses, and
// validJSON is json.Valid.
func FuzzFastValid(f *testing.F) {
	for _, c := range validCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		want := json.Valid(b)
		if fastValid(b) && !want {
			t.Fatalf("fastValid(%q) = true, json.Valid false", b)
		}
		if validJSON(b) != want {
			t.Fatalf("validJSON(%q) != json.Valid", b)
		}
	})
}

// FuzzQuotedTokens: quotedTokens finds exactly what bytes.Contains finds.
func FuzzQuotedTokens(f *testing.F) {
	for _, s := range []string{`{"kind":"plugin"}`, `"tool-result"`, `x"tool-call"`, `"plugin`, `""plugin"`,
		`\"tool-call\"`, `"tool-calls"`, `"tool-result""plugin""tool-call"`, `"`, ``} {
		f.Add([]byte(s), quotedPlugin|quotedToolResult|quotedToolCall)
	}
	f.Fuzz(func(t *testing.T, data []byte, want int) {
		want &= quotedPlugin | quotedToolResult | quotedToolCall
		exp := 0
		for bit, tok := range map[int]string{quotedPlugin: `"plugin"`, quotedToolResult: `"tool-result"`, quotedToolCall: `"tool-call"`} {
			if want&bit != 0 && strings.Contains(string(data), tok) {
				exp |= bit
			}
		}
		if got := quotedTokens(data, want); got != exp {
			t.Fatalf("quotedTokens(%q, %b) = %b, bytes.Contains says %b", data, want, got, exp)
		}
	})
}

// FuzzToolIDScans: where the scans decide, they find the ids encoding/json
// finds (toolCallIDs, toolResultCallID).
func FuzzToolIDScans(f *testing.F) {
	for _, s := range []string{
		`{"message":{"content":[{"type":"tool-call","id":"c1"},{"type":"text","text":"x"},null,{"type":"tool-call","id":null}]}}`,
		`{"content":[{"type":"tool-call","id":"c2"}]}`, `{"content":null}`, `{"message":null,"content":[{"type":"tool-call","id":"c3"}]}`,
		`{"message":{"source":{"kind":"tool","callId":"c1"}}}`, `{"callId":"c4"}`, `{"callId":"c5","message":{"source":null}}`,
		`{"Message":{"content":[{"type":"tool-call","ID":"c6"}]}}`, `{"callId":5}`, `{"message":"x"}`, `[]`, `null`,
		`{"content":[{"type":"tool-call","id":"c\u0037"}]}`, `{"content":["x"]}`, `{"content":{}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) {
			return // the scans read values of checked lines only
		}
		if ids, decided := scanToolCallIDs(data); decided {
			if want := toolCallIDs(data); fmt.Sprint(ids) != fmt.Sprint(want) || len(ids) != len(want) {
				t.Fatalf("scanToolCallIDs(%s) = %q, encoding/json %q", data, ids, want)
			}
		}
		if id, ok, decided := scanToolResultCallID(data); decided {
			if wantID, wantOK := toolResultCallID(data); id != wantID || ok != wantOK {
				t.Fatalf("scanToolResultCallID(%s) = %q %v, encoding/json %q %v", data, id, ok, wantID, wantOK)
			}
		}
	})
}

// FuzzDecodeMessageData: decodeMessageData decodes any valid JSON as
// json.Unmarshal does, error included.
func FuzzDecodeMessageData(f *testing.F) {
	for _, s := range []string{
		`{"content":[{"type":"text","text":"hi"}],"source":{"kind":"user"}}`,
		`{"message":{"content":"x","source":{"kind":"plugin","plugin":"compact"}},"turn":1}`,
		`{"source":null}`, `{"source":{"kind":null,"plugin":"p"}}`, `{"source":{"Kind":"user"}}`, `{"source":{"kind":5}}`,
		`{"source":{"kind":"a","kind":"b"}}`, `{"source":{"kind":"\u0075ser"}}`, `{"source":[]}`, `{"source":"user"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) {
			return // message data is a value of a checked line
		}
		var want, got messageData
		wantErr := json.Unmarshal(data, &want)
		gotErr := decodeMessageData(data, &got)
		if fmt.Sprint(wantErr) != fmt.Sprint(gotErr) {
			t.Fatalf("%s: error %v, encoding/json %v", data, gotErr, wantErr)
		}
		w, _ := json.Marshal(want)
		g, _ := json.Marshal(got)
		if string(w) != string(g) {
			t.Fatalf("%s: decoded %s, encoding/json %s", data, g, w)
		}
	})
}
