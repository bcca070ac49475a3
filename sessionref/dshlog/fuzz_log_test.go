package dshlog

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fullDecodeScan is what a full JSON decode of one event line says the
// title index must keep: the seq of the last event the line stands for
// (-1 when none) and, for a session/title event, the title. The line is
// read by decodeEnvelopeReference (a map of the members, keys matched
// exactly as dsh's JSON.parse(line).type reads them, integers as
// JavaScript's safe integers; FuzzDecodeEnvelope holds decodeEnvelope to
// it); the title scanner's fast paths must agree. encoding/json's
// struct decoding, used here before, also took "tYpe" for "type" and
// 2^53 + n for a seq: the fuzzer found both.
func fullDecodeScan(line []byte) (seq int64, title string, hasTitle bool) {
	seq = -1
	var e envelope
	if decodeEnvelopeReference(line, &e) != nil || e.Type == "" {
		return -1, "", false // an unparsable line changes nothing
	}
	if s, ok := e.lastSeq(); ok {
		seq = s
	}
	if e.Type == typeTitle {
		var d map[string]json.RawMessage
		var t string
		if json.Unmarshal(e.Data, &d) == nil && json.Unmarshal(d["title"], &t) == nil && string(d["title"]) != "null" {
			title, hasTitle = t, true
		}
	}
	return seq, title, hasTitle
}

func FuzzTitleScanner(f *testing.F) {
	for _, seed := range []string{
		titleEvent(6, "A title"),
		titleEvent(7, `quote " and \ backslash <tag>`),
		userMsg(3, "hello"),
		turnEnd(12),
		`{"type":"text-chunks","seq0":17,"time0":1,"data":{"turn":1,"step":1,"index":1,"dt":[3,0],"texts":["Hel","lo"," world"]}}`,
		`{"type":"tool-call-chunks","seq0":5,"time0":1,"data":{"id":"c","name":"read","dt":[1],"args":["{\"pa","th\":1}"]}}`,
		`{"type":"text-chunks","seq0":9,"data":{"texts":[]}}`,
		`{"seq":4,"type":"session/title","data":{"title":"key order"}}`,
		`{"type":"session\/title","seq":4,"data":{"title":"escaped type"}}`,
		`{"type":"session/title","seq":4,"data":{"title":5}}`,
		`{"type":"x","seq":-3}`,
		`{"type":"x","seq":1.5}`,
		`{"type":"x","seq":99999999999999999999}`,
		`not json`,
		``,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		entry := Entry{LastSeq: -1}
		s := TitleScanner{Entry: &entry}
		s.Line(line)
		s.Finish(line)
		seq, title, hasTitle := fullDecodeScan(line)
		if entry.LastSeq != seq {
			t.Errorf("line %q: scanner seq %d, full decode %d", line, entry.LastSeq, seq)
		}
		if entry.HasTitle != hasTitle || entry.Title != title {
			t.Errorf("line %q: scanner title %q (%v), full decode %q (%v)", line, entry.Title, entry.HasTitle, title, hasTitle)
		}
	})
}

func FuzzReadSessionLog(f *testing.F) {
	f.Add([]byte(rawLines([]string{v0Header, userMsg(0, "q"), assistantMsg(1, "a"), turnEnd(2)})))
	f.Add([]byte(rawLines([]string{v0Header, userMsg(0, "q"), `{"type":`, turnEnd(2)})))
	f.Add([]byte(rawLines([]string{v0Header, userMsg(0, "q"), eventLine(typeUserMessage, 1, map[string]any{"content": "x"}, opReplace(0, 0))})))
	f.Add([]byte(rawLines([]string{v0Header, eventLine(typeUserMessage, 1, map[string]any{}, opReplace(5, 0))})))
	f.Add([]byte(rawLines([]string{headerLine(headerSpec{ID: "s", Version: 4})})))
	zs, _ := zstdLog(v0Header, [][]string{{userMsg(0, "q")}})
	f.Add(zs)
	f.Add([]byte(v0Header))
	// One directory per fuzzing process: the fuzz function runs one input
	// at a time, so each input overwrites the same two files.
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, enc := range bothEncodings {
			path := filepath.Join(dir, logName(0, enc))
			if err := os.WriteFile(path, data, 0o600); err != nil {
				t.Fatal(err)
			}
			log, err := readSessionLog(context.Background(), path, enc, &FrameDecoder{Concurrency: 1})
			var ce *CorruptError
			var nv *NewerVersionError
			var re *RefusalError
			switch {
			case err == nil:
				if log.lastSeq < -1 && !strings.Contains(string(data), "-") {
					t.Errorf("%s: last seq %d", enc, log.lastSeq)
				}
				appendProjected(nil, log.surface.items)
			case errors.As(err, &ce), errors.As(err, &nv), errors.As(err, &re):
			default:
				t.Errorf("%s: error %v (%T) is neither ok nor *CorruptError, a newer version or a v4 refusal", enc, err, err)
			}
		}
	})
}
