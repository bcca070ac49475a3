package dshlog

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/dsh-refls/dsh-refls/sessionref/dshlog/layout"
)

// readTestLog writes data as a log and reads it for preparation.
func readTestLog(t *testing.T, enc layout.Encoding, data []byte) (*sessionLog, error) {
	t.Helper()
	path := filepath.Join(t.TempDir(), logName(0, enc))
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return readSessionLog(context.Background(), path, enc, &FrameDecoder{Concurrency: 1})
}

// scanEntry reads the log at path through a TitleScanner, as the title
// index reads a log it has not read before.
func scanEntry(t *testing.T, path string, enc layout.Encoding) Entry {
	t.Helper()
	e := Entry{Path: path, Encoding: enc, LastSeq: -1}
	sc := TitleScanner{Entry: &e}
	started := false
	r := LineReader{Path: path, Encoding: enc, Frames: &FrameDecoder{Concurrency: 1}, SkipCorruptFrames: true,
		OnTorn: func() { sc.Torn = true }}
	res, err := r.Read(0, nil, func(line []byte) error {
		if started {
			sc.Line(line)
			return nil
		}
		h, err := ParseHeader(line)
		if err != nil {
			return err
		}
		started, e.ID = true, h.ID
		return nil
	})
	if err != nil {
		t.Fatalf("scanning %s: %v", path, err)
	}
	sc.Finish(res.LastLine)
	return e
}

// encodeLog lays out header and batches in enc.
func encodeLog(enc layout.Encoding, header string, batches [][]string) []byte {
	if enc == layout.EncodingZstd {
		data, _ := zstdLog(header, batches)
		return data
	}
	return []byte(rawLines(append([]string{header}, flatten(batches)...)))
}

// turn is one projected message as the log tests compare it.
type turn struct{ Role, Text string }

// turnsOf projects a read log.
func turnsOf(log *sessionLog) []turn {
	out := []turn{}
	for _, m := range appendProjected(nil, log.surface.items) {
		out = append(out, turn{Role: m.Role, Text: m.Text})
	}
	return out
}

var v0Header = headerLine(headerSpec{ID: "s", Cwd: "/p", HasCwd: true, CreatedAt: fixtureTime})

var bothEncodings = []layout.Encoding{layout.EncodingRaw, layout.EncodingZstd}

func TestReadLogTornTail(t *testing.T) {
	complete := [][]string{{userMsg(0, "hello"), assistantMsg(1, "hi")}}
	torn := userMsg(2, "not yet written")
	for _, enc := range bothEncodings {
		t.Run(string(enc), func(t *testing.T) {
			data := encodeLog(enc, v0Header, complete)
			if enc == layout.EncodingZstd {
				frame := zstdFrame([]string{torn})
				data = append(data, frame[:len(frame)/2]...)
			} else {
				data = append(data, torn[:len(torn)-3]...)
			}
			log, err := readTestLog(t, enc, data)
			if err != nil {
				t.Fatalf("a torn tail is an error: %v", err)
			}
			if log.lastSeq != 1 {
				t.Errorf("last seq %d, want 1", log.lastSeq)
			}
			want := []turn{{RoleUser, "hello"}, {RoleAssistant, "hi"}}
			if got := turnsOf(log); !reflect.DeepEqual(got, want) {
				t.Errorf("turns %+v, want %+v", got, want)
			}
		})
	}
}

// TestReadLogUnparsableLines pins where the readable prefix ends, as dsh
// 0.1.1's reader decides (packages/session/session-persistence-jsonl/src/
// format.ts, SessionLogScanner.consumeEventLine; issue 16 items 1–2): at
// the first unparsable line or seq gap/duplicate of a raw log, later lines
// unread and a later turn/end corruption; inside a complete zstd frame any
// such line is corruption.
func TestReadLogUnparsableLines(t *testing.T) {
	const bad = `{"type":"user/message","seq":2,"data":{` // complete line, broken JSON
	tests := []struct {
		name    string
		events  []string
		corrupt bool // in both encodings
		lastSeq int64
		skipped int
		turns   int
	}{
		{"last line", []string{userMsg(0, "a"), turnEnd(1), bad}, false, 1, 1, 1},
		{"garbage mid, no end", []string{userMsg(0, "a"), bad, assistantMsg(2, "b")}, false, 0, 2, 1},
		{"not an object", []string{userMsg(0, "a"), `42`, assistantMsg(2, "b")}, false, 0, 2, 1},
		{"seq gap, no end", []string{userMsg(0, "a"), assistantMsg(2, "b"), userMsg(3, "c")}, false, 0, 2, 1},
		{"seq duplicate", []string{userMsg(0, "a"), assistantMsg(0, "b")}, false, 0, 1, 1},
		{"followed by turn/end", []string{userMsg(0, "a"), bad, assistantMsg(3, "b"), turnEnd(4)}, true, 0, 0, 0},
		{"typeless object then turn/end", []string{userMsg(0, "a"), `{"seq":1}`, turnEnd(2)}, true, 0, 0, 0},
		{"seq gap then turn/end", []string{userMsg(0, "a"), assistantMsg(2, "b"), turnEnd(3)}, true, 0, 0, 0},
		{"turn/end with a seq gap", []string{userMsg(0, "a"), turnEnd(2)}, true, 0, 0, 0},
	}
	for _, tt := range tests {
		for _, enc := range bothEncodings {
			t.Run(tt.name+"/"+string(enc), func(t *testing.T) {
				log, err := readTestLog(t, enc, encodeLog(enc, v0Header, [][]string{tt.events}))
				if tt.corrupt || enc == layout.EncodingZstd {
					var ce *CorruptError
					if !errors.As(err, &ce) {
						t.Fatalf("err = %v, want a *CorruptError", err)
					}
					return
				}
				if err != nil {
					t.Fatalf("readable log refused: %v", err)
				}
				if log.lastSeq != tt.lastSeq || log.skippedLines != tt.skipped || len(turnsOf(log)) != tt.turns {
					t.Errorf("last seq %d skipped %d turns %d, want %d, %d and %d", log.lastSeq, log.skippedLines, len(turnsOf(log)), tt.lastSeq, tt.skipped, tt.turns)
				}
			})
		}
	}
}

// TestReadLogDamageInTornZstdFrame: in the decodable prefix of a torn last
// frame, damage ends the readable prefix as in a raw log; a turn/end after
// it is corruption.
func TestReadLogDamageInTornZstdFrame(t *testing.T) {
	const bad = `{"type":"user/message","seq":2,"data":{`
	filler := incompressible(300 << 10) // more than two blocks, so the frame's start decodes
	for _, tt := range []struct {
		name    string
		torn    []string
		corrupt bool
	}{
		{"damage only", []string{bad, userMsg(3, filler), userMsg(4, filler)}, false},
		{"damage then turn/end", []string{bad, turnEnd(3), userMsg(4, filler), userMsg(5, filler)}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			data, _ := zstdLog(v0Header, [][]string{{userMsg(0, "a"), turnEnd(1)}})
			frame := zstdFrame(tt.torn)
			data = append(data, frame[:len(frame)-1000]...)
			log, err := readTestLog(t, layout.EncodingZstd, data)
			if tt.corrupt {
				var ce *CorruptError
				if !errors.As(err, &ce) {
					t.Fatalf("err = %v, want a *CorruptError", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("torn frame with damage refused: %v", err)
			}
			if log.lastSeq != 1 || log.skippedLines < 2 {
				t.Errorf("last seq %d skipped %d, want 1 and at least 2", log.lastSeq, log.skippedLines)
			}
		})
	}
}

func TestReadLogChecksumFailure(t *testing.T) {
	header := v0Header
	batches := [][]string{{userMsg(0, strings.Repeat("some text to compress ", 20))}, {assistantMsg(1, "reply")}}
	data, offsets := zstdLog(header, batches)
	ends := append(offsets[1:], len(data))
	for _, inChecksum := range []bool{true, false} {
		for frame := range offsets {
			bad := corruptFrame(data, offsets[frame], ends[frame], inChecksum)
			_, err := readTestLog(t, layout.EncodingZstd, bad)
			var ce *CorruptError
			if !errors.As(err, &ce) {
				t.Errorf("frame %d checksum=%v corrupted: err = %v, want *CorruptError", frame, inChecksum, err)
			}
		}
	}
	if _, err := readTestLog(t, layout.EncodingZstd, data); err != nil {
		t.Fatalf("the intact log: %v", err)
	}
}

func TestReadLogPackedRowsCountForSeq(t *testing.T) {
	textChunks := `{"type":"text-chunks","seq0":2,"time0":1,"data":{"turn":1,"step":1,"index":0,"dt":[3,0],"texts":["Hel","lo"," world"]}}`
	toolChunks := `{"type":"tool-call-chunks","seq0":5,"time0":1,"data":{"turn":1,"step":1,"index":1,"id":"call_1","name":"read","dt":[1],"args":["{\"pa","th\":1}"]}}`
	reasoning := `{"type":"reasoning-chunks","seq0":8,"time0":1,"data":{"turn":1,"step":1,"index":0,"dt":[],"texts":["think"]}}`
	tests := []struct {
		name   string
		events []string
		want   int64
	}{
		{"text chunks last", []string{userMsg(0, "q"), eventLine("assistant/start", 1, map[string]any{}, ""), textChunks}, 4},
		{"tool-call chunks last", []string{userMsg(0, "q"), eventLine("x", 1, map[string]any{}, ""), textChunks, toolChunks}, 6},
		{"reasoning chunks last", []string{userMsg(0, "q"), eventLine("x", 1, map[string]any{}, ""), textChunks, toolChunks, assistantMsg(7, "Hello world"), reasoning}, 8},
		{"message after chunks", []string{userMsg(0, "q"), eventLine("x", 1, map[string]any{}, ""), textChunks, toolChunks, assistantMsg(7, "Hello world")}, 7},
		{"header only", nil, -1},
	}
	for _, tt := range tests {
		for _, enc := range bothEncodings {
			t.Run(tt.name+"/"+string(enc), func(t *testing.T) {
				var batches [][]string
				if tt.events != nil {
					batches = [][]string{tt.events}
				}
				data := encodeLog(enc, v0Header, batches)
				log, err := readTestLog(t, enc, data)
				if err != nil {
					t.Fatal(err)
				}
				if log.lastSeq != tt.want {
					t.Errorf("prepare reads last seq %d, want %d", log.lastSeq, tt.want)
				}
				// The title scan, what the title index reads, must agree
				// with preparation.
				s := newTestStore(t)
				path := s.write(sessionSpec{Header: headerSpec{ID: "s", Cwd: "/p", HasCwd: true, CreatedAt: fixtureTime}, Encoding: enc, Batches: batches})
				if e := scanEntry(t, path, enc); e.LastSeq != tt.want {
					t.Errorf("title scan (%s) last seq %d, want %d", path, e.LastSeq, tt.want)
				}
			})
		}
	}
}

func TestReadLogLegacyShapes(t *testing.T) {
	legacyAssistant := eventLine(typeAssistantMessage, 1, map[string]any{"turn": 1, "step": 1, "content": textBlocks("legacy reply")}, "")
	steeringWrapped := eventLine(typeSteeringMessage, 2, map[string]any{"turn": 1,
		"message": map[string]any{"content": textBlocks("steer wrapped"), "source": map[string]any{"kind": "user"}, "role": "user"}}, "")
	steeringFlat := eventLine(typeSteeringMessage, 3, map[string]any{"turn": 1,
		"content": textBlocks("steer flat"), "source": map[string]any{"kind": "user"}}, "")
	log, err := readTestLog(t, layout.EncodingRaw, encodeLog(layout.EncodingRaw, v0Header, [][]string{{userMsg(0, "q"), legacyAssistant, steeringWrapped, steeringFlat}}))
	if err != nil {
		t.Fatal(err)
	}
	want := []turn{{RoleUser, "q"}, {RoleAssistant, "legacy reply"}, {RoleUser, "steer wrapped"}, {RoleUser, "steer flat"}}
	if got := turnsOf(log); !reflect.DeepEqual(got, want) {
		t.Errorf("turns %+v, want %+v", got, want)
	}
}

func TestReadLogSurfaceFolding(t *testing.T) {
	v3Header := headerLine(headerSpec{ID: "s", Cwd: "/p", HasCwd: true, CreatedAt: fixtureTime, Version: 3})
	u := func(seq int64, text, op string) string {
		return eventLine(typeUserMessage, seq, map[string]any{"content": textBlocks(text), "source": map[string]any{"kind": "user"}}, op)
	}
	a := func(seq int64, text, op string) string {
		return eventLine(typeAssistantMessage, seq, map[string]any{"turn": 1, "step": 1, "message": map[string]any{"content": textBlocks(text)}}, op)
	}
	sys := func(seq int64, text, op string) string {
		return eventLine(typeSystemMessage, seq, map[string]any{"content": textBlocks(text)}, op)
	}
	tests := []struct {
		name   string
		header string
		events []string
		want   []string
	}{
		{"append", v0Header, []string{u(0, "one", opAppend), a(1, "two", opAppend)}, []string{"one", "two"}},
		{"replace a range", v0Header, []string{u(0, "one", opAppend), a(1, "two", opAppend), u(2, "three", opAppend),
			sourced(u(3, "summary", opReplace(0, 1)), 0, 1)}, []string{"summary", "three"}},
		{"replace by position, not numeric order", v0Header, []string{u(0, "one", opAppend), a(1, "two", opAppend), u(2, "three", opAppend),
			sourced(u(3, "first replacement", opReplace(0, 0)), 0),
			// The surface is now [3, 1, 2]: the range 3..1 runs forward by position.
			sourced(u(4, "second replacement", opReplace(3, 1)), 1, 3)}, []string{"second replacement", "three"}},
		{"replacement replaced again", v0Header, []string{u(0, "one", opAppend), sourced(u(1, "r1", opReplace(0, 0)), 0), sourced(u(2, "r2", opReplace(1, 1)), 1), a(3, "tail", opAppend)},
			[]string{"r2", "tail"}},
		{"v3 startSeq/endSeq", v3Header, []string{u(0, "one", opAppend), a(1, "two", opAppend), a(2, "three", opAppend),
			sourced(u(3, "summary", opReplaceSeq(1, 2)), 1, 2)}, []string{"one", "summary"}},
		{"v3 system message skipped but on the surface", v3Header, []string{sys(0, "system prompt", opAppend), u(1, "one", opAppend),
			sourced(a(2, "sum", opReplaceSeq(0, 0)), 0)}, []string{"sum", "one"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			log, err := readTestLog(t, layout.EncodingRaw, encodeLog(layout.EncodingRaw, tt.header, [][]string{tt.events}))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, turn := range turnsOf(log) {
				got = append(got, turn.Text)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("surface %q, want %q", got, tt.want)
			}
		})
	}
}

func TestReadLogProjection(t *testing.T) {
	src := func(kind, plugin string) map[string]any {
		m := map[string]any{"kind": kind}
		if plugin != "" {
			m["plugin"] = plugin
		}
		return m
	}
	events := []string{
		userMsgFrom(0, src("user", ""), textBlocks("first", "second")),
		userMsgFrom(1, src("plugin", "memory"), textBlocks("injected context")),
		userMsgFrom(2, map[string]any{"kind": "session-reference", "form": "recall"}, textBlocks("a snapshot")),
		assistantMsgBlocks(3, []map[string]any{
			{"type": "reasoning", "text": "hidden thoughts"},
			{"type": "text", "text": "visible"},
			{"type": "tool-call", "id": "c1", "name": "read", "args": map[string]any{}},
			{"type": "image", "data": "AAAA", "mimeType": "image/png"},
			{"type": "text", "text": "answer"},
		}),
		eventLine(typeToolResult, 4, map[string]any{"turn": 1, "step": 1, "message": map[string]any{
			"role": "tool", "content": []map[string]any{{"type": "tool-result", "text": "file body"}}, "source": map[string]any{"kind": "tool"}}}, opAppend),
		userMsgFrom(5, src("user", ""), []map[string]any{{"type": "image", "data": "AAAA"}}),
		userMsgFrom(6, src("user", ""), textBlocks("")),
		assistantMsgBlocks(7, []map[string]any{{"type": "reasoning", "text": "only reasoning"}}),
		checkpointMsg(8, "compacted summary"),
		userMsgFrom(9, map[string]any{"kind": "compact-checkpoint"}, textBlocks("v4 checkpoint")),
		userMsgFrom(10, src("user", ""), textBlocks("", "after empty")),
	}
	log, err := readTestLog(t, layout.EncodingRaw, encodeLog(layout.EncodingRaw, v0Header, [][]string{events}))
	if err != nil {
		t.Fatal(err)
	}
	want := []turn{
		{RoleUser, "first\nsecond"},
		{RoleAssistant, "visible\nanswer"},
		{RoleUser, "compacted summary"},
		{RoleUser, "v4 checkpoint"},
		{RoleUser, "\nafter empty"},
	}
	if got := turnsOf(log); !reflect.DeepEqual(got, want) {
		t.Errorf("projection\n got %+v\nwant %+v", got, want)
	}
	var checkpoints int
	for _, m := range appendProjected(nil, log.surface.items) {
		if m.Checkpoint {
			checkpoints++
		}
	}
	if checkpoints != 2 {
		t.Errorf("%d checkpoints, want 2", checkpoints)
	}
}

func TestReadLogHeaderErrors(t *testing.T) {
	tests := []struct {
		name   string
		data   string
		newer  bool
		accept bool
	}{
		{"empty file", "", false, false},
		{"header torn", `{"type":"session"`, false, false},
		{"not a session", `{"type":"user/message","seq":0}` + "\n", false, false},
		{"negative createdAt", `{"type":"session","version":0,"id":"s","createdAt":-1}` + "\n", false, false},
		{"missing delegationDepth is 0", `{"type":"session","version":0,"id":"s","createdAt":1}` + "\n", false, true},
		{"version 3", `{"type":"session","version":3,"id":"s","createdAt":1}` + "\n", false, true},
		{"version 4 without isSeeded", `{"type":"session","version":4,"id":"s","createdAt":1,"delegationDepth":0}` + "\n", false, false},
		{"version 4 without delegationDepth", `{"type":"session","version":4,"id":"s","createdAt":1,"isSeeded":false}` + "\n", false, false},
		{"version 4", `{"type":"session","version":4,"id":"s","createdAt":1,"isSeeded":false,"delegationDepth":0}` + "\n", false, true},
		{"version 5", `{"type":"session","version":5,"id":"s","createdAt":1}` + "\n", true, false},
		{"version 5 with a header v4 would refuse", `{"type":"session","version":5,"id":7}` + "\n", true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := readTestLog(t, layout.EncodingRaw, []byte(tt.data))
			var nv *NewerVersionError
			var ce *CorruptError
			switch {
			case tt.accept && err != nil:
				t.Fatalf("refused: %v", err)
			case tt.newer && !errors.As(err, &nv):
				t.Fatalf("err = %v, want a newer-version error", err)
			case !tt.accept && !tt.newer && !errors.As(err, &ce):
				t.Fatalf("err = %v, want *CorruptError", err)
			}
		})
	}
}
