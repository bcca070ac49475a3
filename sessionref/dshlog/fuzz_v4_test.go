package dshlog

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/dsh-refls/dsh-refls/sessionref/dshlog/layout"
)

// FuzzReadV4Log feeds arbitrary event lines after a v4 header. Whatever the
// lines, the read ends in a surface or in one of the three refusals; and
// when the raw read met no damage, the same lines cut into zstd frames at
// any line boundary read the same: frame boundaries never matter.
func FuzzReadV4Log(f *testing.F) {
	f.Add([]byte(rawLines([]string{userMsg(0, "q"), v4Assistant(1, textBlocks("a")), turnEnd(2)})), uint8(1))
	f.Add([]byte(rawLines([]string{userMsg(0, "q"), userMsg(2, "gap")})), uint8(1))
	f.Add([]byte(rawLines([]string{plainEvent("turn/start", 0, map[string]any{"turn": 1}), v4Assistant(1, []any{toolCallBlock("c")})})), uint8(0))
	f.Add([]byte(rawLines([]string{userMsgFrom(0, map[string]any{"kind": "plugin"}, textBlocks("x"))})), uint8(0))
	f.Add([]byte(rawLines([]string{eventLine("x/y", 0, map[string]any{}, opAppend)})), uint8(0))
	f.Add([]byte(rawLines([]string{userMsg(0, "a"), eventLine(typeUserMessage, 1, map[string]any{"content": textBlocks("b"), "source": map[string]any{"kind": "compact-checkpoint"}}, opReplaceSeq(0, 0))})), uint8(1))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, body []byte, cut uint8) {
		raw := append([]byte(v4Header+"\n"), body...)
		rawPath := filepath.Join(dir, "session.v4.jsonl")
		if err := os.WriteFile(rawPath, raw, 0o600); err != nil {
			t.Fatal(err)
		}
		log, err := readSessionLog(context.Background(), rawPath, layout.EncodingRaw, &FrameDecoder{Concurrency: 1})
		var ce *CorruptError
		var re *RefusalError
		switch {
		case err == nil:
		case errors.As(err, &ce), errors.As(err, &re):
			return
		default:
			t.Fatalf("raw: error %v (%T)", err, err)
		}
		if log.capturedThroughSeq() < log.lastSeq || log.closers < 0 || len(log.closerResults) != len(log.closerCalls) {
			t.Fatalf("closers %d %v %v after seq %d", log.closers, log.closerResults, log.closerCalls, log.lastSeq)
		}
		appendProjected(nil, log.surface.items)
		if log.skippedLines != 0 {
			return
		}
		// Only the complete lines: a torn raw tail is not a zstd frame.
		complete := body[:bytes.LastIndexByte(body, '\n')+1]
		lines := bytes.SplitAfter(complete, []byte("\n"))
		k := int(cut) % (len(lines) + 1)
		frames := zstdFrame([]string{v4Header})
		for _, part := range [][]byte{bytes.Join(lines[:k], nil), bytes.Join(lines[k:], nil)} {
			if len(part) > 0 {
				frames = appendFrame(frames, part)
			}
		}
		zPath := filepath.Join(dir, "session.v4.jsonl.zstd")
		if err := os.WriteFile(zPath, frames, 0o600); err != nil {
			t.Fatal(err)
		}
		zlog, err := readSessionLog(context.Background(), zPath, layout.EncodingZstd, &FrameDecoder{Concurrency: 1})
		if err != nil {
			t.Fatalf("zstd of a clean raw log: %v", err)
		}
		if zlog.lastSeq != log.lastSeq || zlog.closers != log.closers || !reflect.DeepEqual(turnsOf(zlog), turnsOf(log)) {
			t.Errorf("zstd read differs: seq %d/%d closers %d/%d turns %v/%v", zlog.lastSeq, log.lastSeq, zlog.closers, log.closers, turnsOf(zlog), turnsOf(log))
		}
	})
}

// FuzzClosers builds a log from a program of turn, step and tool events
// and checks the closers against the log they close: appending them as
// real events (a result for each answered call, step/end, turn/end) gives
// a balanced log that needs no closers and ends at the same seq.
func FuzzClosers(f *testing.F) {
	f.Add([]byte{0, 1, 4, 5, 6, 7})
	f.Add([]byte{0, 1, 4, 4, 5, 2})
	f.Add([]byte{0, 4, 3, 0, 1, 6})
	f.Fuzz(func(t *testing.T, program []byte) {
		if len(program) > 64 {
			program = program[:64]
		}
		var events []string
		next := func() int64 { return int64(len(events)) }
		for i, op := range program {
			id := fmt.Sprintf("c%d", int(op>>3)%4)
			switch op % 8 {
			case 0:
				events = append(events, plainEvent("turn/start", next(), map[string]any{"turn": 1}))
			case 1:
				events = append(events, plainEvent("step/start", next(), map[string]any{"turn": 1, "step": 1}))
			case 2:
				events = append(events, plainEvent("step/end", next(), map[string]any{"turn": 1, "step": 1}))
			case 3:
				events = append(events, plainEvent("turn/end", next(), map[string]any{"turn": 1, "reason": map[string]any{"kind": "completed"}}))
			case 4:
				events = append(events, v4Assistant(next(), []any{toolCallBlock(id), toolCallBlock(fmt.Sprintf("c%d", i%3))}))
			case 5:
				events = append(events, plainEvent("tool/call", next(), map[string]any{"turn": 1, "step": 1, "callId": id, "name": "x", "arguments": "{}"}))
			case 6:
				events = append(events, v4ToolResult(next(), id, "out"))
			default:
				events = append(events, userMsg(next(), "text"))
			}
		}
		read := func(evs []string) *sessionLog {
			log, err := readTestLog(t, layout.EncodingRaw, encodeLog(layout.EncodingRaw, v4Header, [][]string{evs}))
			if err != nil {
				t.Fatalf("generated log refused: %v", err)
			}
			return log
		}
		log := read(events)
		if log.closers == 0 {
			return
		}
		closed := append([]string{}, events...)
		for _, id := range log.closerCalls {
			closed = append(closed, v4ToolResult(int64(len(closed)), id, "synthetic"))
		}
		if log.closers == len(log.closerCalls)+2 {
			closed = append(closed, plainEvent("step/end", int64(len(closed)), map[string]any{"turn": 1, "step": 1}))
		} else if log.closers != len(log.closerCalls)+1 {
			t.Fatalf("%d closers for %d calls", log.closers, len(log.closerCalls))
		}
		closed = append(closed, turnEnd(int64(len(closed))))
		after := read(closed)
		if after.closers != 0 || after.lastSeq != log.capturedThroughSeq() {
			t.Errorf("closed log needs %d closers, ends at %d; the closers promised %d", after.closers, after.lastSeq, log.capturedThroughSeq())
		}
	})
}
