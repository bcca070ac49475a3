package dshlog

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
	"unsafe"

	"github.com/dsh-refls/dsh-refls/sessionref/dshlog/layout"
	"github.com/dsh-refls/dsh-refls/sessionref/internal/jsjson"
)

// envelopeCases are event lines whose decoding must equal the reference
// decoding through encoding/json (decodeEnvelopeReference): ordinary
// events, and the shapes where the scanner must read as JSON.parse does
// (case-different and escaped keys, repeated keys, JavaScript numbers,
// wrong types, not an object, invalid JSON).
var envelopeCases = []string{
	`{"type":"user/message","seq":3,"time":1700000000000,"data":{"content":[{"type":"text","text":"hi"}]},"surfaceOp":"append"}`,
	` { "type" : "turn/end" , "seq" : 4 } `,
	`{"type":"text-chunks","seq0":2,"data":{"texts":["a","b"]}}`,
	`{"Type":"user/message","SEQ":1,"data":{}}`,
	`{"ſeq":1,"type":"x"}`,
	`{"t\u0079pe":"user/message","seq":1}`,
	`{"type":"a","type":"b","seq":1,"seq":null}`,
	`{"type":"a","data":{"x":1},"data":null}`,
	`{"type":5,"seq":1}`,
	`{"type":"a","seq":1.0,"time":1e3}`, `{"type":"a","seq":1e0}`, `{"type":"a","seq":1.001e3,"time":2.5}`,
	`{"type":"a","seq":9007199254740992}`, `{"type":"a","seq":-0,"time":1e400}`, `{"type":"a","time":"1"}`,
	`{"type":"a","seq":1,"ignorable":true,"sourceEventSeqs":[[0,2]],"extra":1}`,
	`{"type":"a","time":1.5,"time":2}`,
	`{"type":"a","seq":"1"}`,
	`{"type":"a","seq":1.5}`,
	`{"type":"a","data":"x\"y","surfaceOp":{"op":"replace","startSeq":1,"endSeq":2}}`,
	`{"type":"caf\xff","seq":1}`,
	`[1,2]`, `null`, `"x"`, `{}`, `{"type":"a",}`, `{"type":"a"`, ``, `{"type":"a"} x`,
	`{"type":"a","other":[{"}":"]"},"\\"],"seq":2}`,
}

func TestDecodeEnvelopeMatchesReference(t *testing.T) {
	for _, line := range envelopeCases {
		checkEnvelope(t, []byte(line))
	}
}

func checkEnvelope(t *testing.T, line []byte) {
	t.Helper()
	var want, got envelope
	wantErr := decodeEnvelopeReference(line, &want)
	gotErr := decodeEnvelope(line, &got)
	if fmt.Sprint(wantErr) != fmt.Sprint(gotErr) {
		t.Fatalf("%q: error %v, reference %v", line, gotErr, wantErr)
	}
	if wantErr != nil {
		return
	}
	w, _ := json.Marshal(envelopeView(want))
	g, _ := json.Marshal(envelopeView(got))
	if !bytes.Equal(w, g) {
		t.Fatalf("%q: decoded %s, reference %s", line, g, w)
	}
}

// envelopeView shows every field, nil pointers and raw values apart.
func envelopeView(e envelope) map[string]any {
	return map[string]any{"type": e.Type, "seq": e.Seq, "seq0": e.Seq0, "time": e.Time,
		"data": string(e.Data), "dataNil": e.Data == nil, "op": string(e.SurfaceOp), "opNil": e.SurfaceOp == nil,
		"ignorable": string(e.Ignorable), "ignorableNil": e.Ignorable == nil,
		"sources": string(e.SourceEventSeqs), "sourcesNil": e.SourceEventSeqs == nil,
		"extra": e.Extra, "badTime": e.BadTime}
}

func FuzzDecodeEnvelope(f *testing.F) {
	for _, line := range envelopeCases {
		f.Add([]byte(line))
	}
	f.Fuzz(func(t *testing.T, line []byte) { checkEnvelope(t, line) })
}

func TestDecodeMessageDataMatchesEncodingJSON(t *testing.T) {
	for _, data := range []string{
		`{"content":[{"type":"text","text":"hi"}],"source":{"kind":"user"}}`,
		`{"message":{"content":"x","source":{"kind":"plugin","plugin":"compact"}},"turn":1}`,
		`{"message":null,"content":"y"}`,
		`{"Content":"x"}`, `{"content":"a","content":"b"}`, `{"source":5}`, `{"message":5}`,
		`{"message":{"message":{"content":"deep"}}}`, `{"message":{"content":"a","message":null}}`,
		`null`, `[]`, `{}`, `{"c\u006fntent":"z"}`,
	} {
		var want, got messageData
		wantErr := json.Unmarshal([]byte(data), &want)
		gotErr := decodeMessageData([]byte(data), &got)
		if fmt.Sprint(wantErr) != fmt.Sprint(gotErr) {
			t.Errorf("%s: error %v, encoding/json %v", data, gotErr, wantErr)
			continue
		}
		w, _ := json.Marshal(want)
		g, _ := json.Marshal(got)
		if !bytes.Equal(w, g) {
			t.Errorf("%s: decoded %s, encoding/json %s", data, g, w)
		}
	}
}

// TestDecodeJSTextInPlace decodes each token of jsjson.TestDecodeText's kind
// over its own bytes: the text equals jsjson.DecodeText's, and when the token is
// valid UTF-8 the text lies in the token's buffer (no copy was made).
func TestDecodeJSTextInPlace(t *testing.T) {
	for _, raw := range []string{
		`"plain text, long enough to be kept where it is"`,
		`"short escapes \" \\ \/ \b \f \n \r \t \u0000 and some text to keep it long"`,
		`"\ud83d\ude00 a pair, \ud800 a lone high, \ude00\ud83d reversed, café, 日本語 …"`,
		"\"x\xff\xfey invalid bytes decode to U+FFFD, which is longer than them\"",
		"\"\xed\xa0\x80 surrogate bytes\"", `""`,
	} {
		want, ok := jsjson.DecodeText([]byte(raw))
		if !ok {
			t.Fatalf("jsjson.DecodeText(%q) refused", raw)
		}
		buf := []byte(raw)
		got, ok := jsjson.DecodeTextInPlace(buf)
		if !ok || got != want {
			t.Errorf("jsjson.DecodeTextInPlace(%q) = %q, %v; want %q", raw, got, ok, want)
		}
		inBuf := len(got) > 0 && uintptr(unsafe.Pointer(unsafe.StringData(got))) == uintptr(unsafe.Pointer(&buf[1]))
		if utf8.ValidString(raw) && len(want) > 0 && !inBuf {
			t.Errorf("jsjson.DecodeTextInPlace(%q) copied the text of a valid UTF-8 token", raw)
		}
	}
	for _, raw := range []string{``, `"`, `5`, `"\x"`, `"\u12"`, `"a\"`} {
		if _, ok := jsjson.DecodeTextInPlace([]byte(raw)); ok {
			t.Errorf("jsjson.DecodeTextInPlace(%q) accepted", raw)
		}
	}
}

// TestDecodeEnvelopeReadsAsJSONParse pins the values dsh's JSON.parse gives
// (packages/core/session/src/types.ts at
// zq0929/deepseek-harness@5593cc250aae228449197efd2413192165e3377f:
// SessionSeq admits a non-negative safe integer; keys are exact).
func TestDecodeEnvelopeReadsAsJSONParse(t *testing.T) {
	i64 := func(n int64) *int64 { return &n }
	for _, c := range []struct {
		line          string
		seq, time     *int64
		extra, badTim bool
		err           bool
	}{
		{line: `{"type":"a","seq":1.0,"time":5}`, seq: i64(1), time: i64(5)},
		{line: `{"type":"a","seq":1e0,"time":5}`, seq: i64(1), time: i64(5)},
		{line: `{"type":"a","seq":1.001e3,"time":5.0}`, seq: i64(1001), time: i64(5)},
		{line: `{"type":"a","seq":1,"time":1.5}`, seq: i64(1), badTim: true},
		{line: `{"type":"a","seq":1,"time":1e300}`, seq: i64(1), badTim: true},
		{line: `{"type":"a","SEQ":1,"time":5}`, time: i64(5), extra: true},
		{line: `{"type":"a","seq":1.5}`, err: true},
	} {
		var e envelope
		err := decodeEnvelope([]byte(c.line), &e)
		if (err != nil) != c.err || fmt.Sprint(deref64(e.Seq)) != fmt.Sprint(deref64(c.seq)) ||
			fmt.Sprint(deref64(e.Time)) != fmt.Sprint(deref64(c.time)) || e.Extra != c.extra || e.BadTime != c.badTim {
			t.Errorf("%s: seq %v time %v extra %v badTime %v err %v", c.line, deref64(e.Seq), deref64(e.Time), e.Extra, e.BadTime, err)
		}
	}
}

func deref64(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}

// TestReadLongLineInPlace reads a log whose message line is longer than
// the read buffer: the line comes in a buffer of its own, its text is
// decoded over it, and the projection holds the text whole.
func TestReadLongLineInPlace(t *testing.T) {
	long := strings.Repeat("0123456789abcdef", 1<<18) // 4 MiB, beyond the buffers of short lines
	s := newTestStore(t)
	path := s.simple("long", "/w", fixtureTime, userMsg(0, long), assistantMsg(1, "Done."))
	log, err := readSessionLog(context.Background(), path, layout.EncodingRaw, &FrameDecoder{Concurrency: 1})
	if err != nil {
		t.Fatal(err)
	}
	if got := turnsOf(log); len(got) != 2 || got[0].Text != long || got[1].Text != "Done." {
		t.Errorf("projection of %d messages; the long text read back whole: %v", len(got), len(got) > 0 && got[0].Text == long)
	}
}
