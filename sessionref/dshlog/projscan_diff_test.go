package dshlog

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dsh-refls/dsh-refls/sessionref/dshlog/layout"
	"github.com/dsh-refls/dsh-refls/sessionref/internal/jsjson"
)

// The projection read has faster paths than encoding/json for the lines
// dsh writes (validJSON, the field scans, the run-at-a-time text decoder,
// the quoted-token pre-checks). logScan.reference reads every line through
// encoding/json and decodes text a rune at a time instead: the tests here
// read each log both ways and require the same result, error included.

// ReadLogFastAndReference reads the log at path as preparation and
// ReadProjection do, as ProjectionReader does (texts into an arena, here
// one that a read of the same log filled and reset before), and the
// reference way, and describes the three results (the surface, seqs,
// closers and skips, or the error). The external tests give it the
// stores dshgen writes and the recorded fixtures.
func ReadLogFastAndReference(path string, zstd bool) (fast, arena, reference string) {
	enc := layout.EncodingRaw
	if zstd {
		enc = layout.EncodingZstd
	}
	ctx := context.Background()
	fast = describeLog(readSessionLog(ctx, path, enc, &FrameDecoder{Concurrency: 1}))
	var a jsjson.Arena
	for range 2 {
		a.Reset()
		sc := &logScan{ctx: ctx, path: path, enc: enc, log: &sessionLog{lastSeq: -1}, arena: &a}
		arena = describeLog(sc.readAll(&FrameDecoder{Concurrency: 1}))
	}
	ref := &logScan{ctx: ctx, path: path, enc: enc, log: &sessionLog{lastSeq: -1}, reference: true, turns: turnTracker{reference: true}}
	return fast, arena, describeLog(ref.readAll(&FrameDecoder{Concurrency: 1}))
}

func describeLog(l *sessionLog, err error) string {
	if err != nil {
		return fmt.Sprintf("error %T: %v", err, err)
	}
	return fmt.Sprintf("%+v", *l)
}

// sameBothWays fails t when the log at path reads differently the fast
// way (texts copied or in an arena) and the reference way.
func sameBothWays(t *testing.T, what, path string, enc layout.Encoding) {
	t.Helper()
	fast, arena, ref := ReadLogFastAndReference(path, enc == layout.EncodingZstd)
	if fast != ref {
		t.Errorf("%s (%s): fast read\n%.2000s\nreference read\n%.2000s", what, enc, fast, ref)
	}
	if arena != ref {
		t.Errorf("%s (%s): read into an arena\n%.2000s\nreference read\n%.2000s", what, enc, arena, ref)
	}
}

var (
	v3DiffHeader = headerLine(headerSpec{ID: "s", Cwd: "/p", HasCwd: true, Version: 3, CreatedAt: fixtureTime})
	v4DiffHeader = headerLine(headerSpec{ID: "s", Cwd: "/p", HasCwd: true, Version: 4, CreatedAt: fixtureTime})
)

// hostileLines are event lines at seq 1 (after userMsg(0, …)) whose shape
// the fast paths must leave to encoding/json, or decode exactly as it
// does: escapes in keys and values, repeated and case-folded keys, other
// number forms, invalid UTF-8, lone surrogates, deep nesting, torn and
// unparsable lines.
var hostileLines = []string{
	`{"typ\u0065":"user/message","seq":1,"data":{"content":[{"type":"text","text":"escaped key"}],"source":{"kind":"user"}},"surfaceOp":"append"}`,
	`{"type":"user\/message","seq":1,"data":{"content":[{"type":"text","text":"escaped type"}],"source":{"kind":"user"}},"surfaceOp":"append"}`,
	`{"type":"user/message","seq":1,"seq":1,"data":{"content":[{"type":"text","text":"repeated seq"}],"source":{"kind":"user"}}}`,
	`{"Type":"user/message","SEQ":1,"data":{"content":[{"type":"text","text":"folded keys"}],"source":{"kind":"user"}}}`,
	`{"type":"user/message","seq":1.0,"data":{"content":[{"type":"text","text":"float seq"}],"source":{"kind":"user"}}}`,
	`{"type":"user/message","seq":1e0,"data":{"content":[{"type":"text","text":"exponent seq"}],"source":{"kind":"user"}}}`,
	`{"type":"user/message","seq":null,"data":{"content":[{"type":"text","text":"null seq"}]}}`,
	`{"type":"user/message","seq":-1,"data":{"content":[{"type":"text","text":"negative seq"}]}}`,
	`{"type":"user/message","seq":99999999999999999999,"data":{"content":[{"type":"text","text":"huge seq"}]}}`,
	`{"type":"user/message","seq":"1","data":{"content":[{"type":"text","text":"string seq"}]}}`,
	`{"type":5,"seq":1,"data":{}}`,
	`{"type":"","seq":1,"data":{}}`,
	`{"type":null,"seq":1,"data":{}}`,
	`[{"type":"user/message","seq":1}]`,
	`{"type":"user/message","seq":1,"data":{"content":[{"type":"text","text":"trailing"}]}} x`,
	` {"type":"user/message","seq":1,"data":{"content":[{"type":"text","text":"spaces around"}],"source":{"kind":"user"}},"surfaceOp":"append"}  `,
	`{"type":"user/message","seq":1,"data":{"content":[{"type":"text","text":"crlf"}],"source":{"kind":"user"}}}` + "\r",
	`{"type":"user/message","seq":1,"data":{"content":[{"type":"text","text":"tab` + "\t" + `inside"}]}}`,
	`{"type":"user/message","seq":1,"data":{"content":[{"type":"text","text":"NUL \u0000 and \"quotes\" and \\ and \/ \b\f\n\r\t"}],"source":{"kind":"user"}}}`,
	"{\"type\":\"user/message\",\"seq\":1,\"data\":{\"content\":[{\"type\":\"text\",\"text\":\"invalid \xff\xfe utf-8 \xe2\x82 cut \xf0\x9f\x98\"}],\"source\":{\"kind\":\"user\"}}}",
	"{\"type\":\"user/\xffmessage\",\"seq\":1,\"data\":{}}",
	`{"type":"user/message","seq":1,"data":{"content":[{"type":"text","text":"lone \ud800 high \udfff low pair \ud83d\ude00 reversed \ude00\ud83d"}],"source":{"kind":"user"}}}`,
	`{"type":"user/message","seq":1,"data":{"content":[{"type":"text","text":"bad escape \x"}]}}`,
	`{"type":"user/message","seq":1,"data":{"content":[{"type":"text","text":"short \u12"}]}}`,
	`{"type":"user/message","seq":1,"data":{"content":[{"type":"text","text":"two"},{"type":"text","text":"blocks"},{"type":"image"},{"type":"text","text":5},"str",{"typ\u0065":"text","t\u0065xt":"escaped block keys"}],"source":{"kind":"user"}}}`,
	`{"type":"user/message","seq":1,"data":{"content":[{"type":"text","text":"a","text":"repeated text key"}],"source":{"kind":"user"}}}`,
	`{"type":"user/message","seq":1,"data":{"content":"plain string content","source":{"kind":"user"}}}`,
	`{"type":"user/message","seq":1,"data":{"content":5}}`,
	`{"type":"user/message","seq":1,"data":{"Content":[{"type":"text","text":"folded content key"}]}}`,
	`{"type":"user/message","seq":1,"data":{"content":[{"type":"text","text":"x"}],"content":[{"type":"text","text":"repeated content"}]}}`,
	`{"type":"user/message","seq":1,"data":{"message":{"message":{"content":"deep"}}}}`,
	`{"type":"user/message","seq":1,"data":{"content":[{"type":"text","text":"plugin"}],"source":{"kind":"plugin","plugin":"compact"}},"surfaceOp":{"op":"replace","start":0,"end":0}}`,
	`{"type":"user/message","seq":1,"data":{"content":[{"type":"text","text":"checkpoint"}],"source":{"kind":"compact-checkpoint"}},"surfaceOp":{"op":"replace","startSeq":0,"endSeq":0}}`,
	`{"type":"user/message","seq":1,"data":{"content":[{"type":"text","text":"bad op"}]},"surfaceOp":{"op":"replace","startSeq":5,"endSeq":0}}`,
	`{"type":"user/message","seq":1,"data":{"content":[{"type":"text","text":"odd op"}]},"surfaceOp":"prepend"}`,
	`{"type":"user/message","seq":1,"data":{"content":[{"type":"tool-result","toolCallId":"c"}],"source":{"kind":"user"}}}`,
	`{"type":"assistant/message","seq":1,"data":{"message":{"role":"assistant","content":[{"type":"tool-call","id":"c1","name":"read"},{"type":"text","text":"calls"}]}},"surfaceOp":"append"}`,
	`{"type":"assistant/message","seq":1,"data":{"message":{"role":"assistant","content":[{"type":"text","text":"\"tool-call\" in text"}]}},"surfaceOp":"append"}`,
	`{"type":"tool/result","seq":1,"data":{"message":{"source":{"kind":"tool","callId":"c1"},"content":[{"type":"text","text":"out"}]}},"surfaceOp":"append"}`,
	`{"type":"steering/message","seq":1,"data":{"turn":1,"message":{"content":[{"type":"text","text":"steer"}],"source":{"kind":"user"}}},"surfaceOp":"append"}`,
	`{"type":"text-chunks","seq0":1,"data":{"texts":["a","b"]}}`,
	`{"type":"x/unknown","seq":1,"data":{"deep":` + strings.Repeat("[", 5000) + strings.Repeat("]", 5000) + `},"surfaceOp":"append"}`,
	`{"type":"x/unknown","seq":1,"data":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `}`,
	`{"type":"request/header","seq":1,"data":{"header":{"system":"s"}}}`,
	`{"type":"user/message","seq":1,"data":{"content":[{"type":"text","text":"`,
	`{"type":`,
	``,
}

func TestProjectionFastPathMatchesReference(t *testing.T) {
	dir := t.TempDir()
	for h, header := range []string{v0Header, v3DiffHeader, v4DiffHeader} {
		for i, line := range hostileLines {
			for _, after := range [][]string{nil, {turnEnd(2)}, {assistantMsg(2, "after"), turnEnd(3)}} {
				lines := append([]string{header, userMsg(0, "first")}, line)
				lines = append(lines, after...)
				for _, enc := range bothEncodings {
					data := []byte(rawLines(lines))
					if enc == layout.EncodingZstd {
						data, _ = zstdLog(header, [][]string{lines[1:]})
					}
					for _, torn := range []bool{false, true} {
						if torn { // the line itself, unfinished, is the last
							data = []byte(rawLines(lines[:3]))
							data = data[:len(data)-1]
							if enc == layout.EncodingZstd {
								continue
							}
						}
						path := filepath.Join(dir, logName(0, enc))
						if err := os.WriteFile(path, data, 0o600); err != nil {
							t.Fatal(err)
						}
						sameBothWays(t, fmt.Sprintf("header %d, hostile line %d %.60q, then %d lines, torn %v", h, i, line, len(after), torn), path, enc)
					}
				}
			}
		}
	}
}

// FuzzProjectionFastPath: any lines after a v0, v3 or v4 header read the
// same the fast and the reference way, raw and as one zstd frame.
func FuzzProjectionFastPath(f *testing.F) {
	for _, line := range hostileLines {
		f.Add([]byte(rawLines([]string{userMsg(0, "q"), line, turnEnd(2)})), uint8(0))
	}
	f.Add([]byte(rawLines([]string{userMsg(0, "q"), assistantMsg(1, "a"), checkpointMsg(2, "c"), turnEnd(3)})), uint8(1))
	f.Add([]byte(rawLines([]string{userMsg(0, "q"), v4Assistant(1, textBlocks("a")), turnEnd(2)})), uint8(2))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, body []byte, version uint8) {
		header := []string{v0Header, v3DiffHeader, v4DiffHeader}[int(version)%3]
		raw := append([]byte(header+"\n"), body...)
		rawPath := filepath.Join(dir, logName(0, layout.EncodingRaw))
		if err := os.WriteFile(rawPath, raw, 0o600); err != nil {
			t.Fatal(err)
		}
		sameBothWays(t, "raw", rawPath, layout.EncodingRaw)
		zPath := filepath.Join(dir, logName(0, layout.EncodingZstd))
		frames := append(zstdFrame([]string{header}), appendFrame(nil, body)...)
		if err := os.WriteFile(zPath, frames, 0o600); err != nil {
			t.Fatal(err)
		}
		sameBothWays(t, "zstd", zPath, layout.EncodingZstd)
	})
}
