package dshgen

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// everyEventSession uses every event method of the builder on a v0 log.
func everyEventSession(id string) *Session {
	s := NewSession(id).Cwd("/home/u/proj").CreatedAt(1783352113760).Seeded(42).AgentPreset("default")
	s.Descriptor("Check direct child").
		Plain("sandbox/mode", map[string]any{"mode": "read-only"}).
		Ignorable("future/thing")
	s.Turn(func(t *Turn) {
		t.Step(func() {
			t.UserText("First question <b>&amp;</b>")
			t.UserPlugin("@deepseek-ai/dsh-system-prompt", "runtime context")
			t.Title("First question", "fallback")
			t.RequestContext()
			t.BlockStart(0, "reasoning")
			t.ReasoningChunks("Thinking", " about", " it")
			t.BlockStart(1, "text")
			t.TextChunks("An", "swer")
			t.TextDelta(1, "!")
			t.Finish("stop")
			t.AssistantReasoning("Thinking about it", "Answer!")
		})
		t.Step(func() {
			t.ToolCallChunks("call_1", "read", `{"pa`, `th":1}`)
			t.AssistantToolCall("call_1", "read", `{"path":1}`)
			t.ToolResult("call_1", "file body", false)
			t.ToolCall("call_2", "bash", `{"command":"ls"}`)
			t.ToolResultLegacy("call_2", "a b c", true)
			t.Reasoning("only reasoning")
			t.AssistantText("")
		})
	})
	s.Turn(func(t *Turn) {
		t.UserTexts("Second", "question")
		t.Steering("steer one")
		t.SteeringFlat("steer two")
		t.AssistantLegacy("legacy reply")
		t.SessionReference("snapshot text that never nests")
		t.Title("Second title", "provider")
		t.EndReason("aborted")
	})
	s.TurnStart().StepStart().AssistantText("loose reply").StepEnd().TurnEnd("completed")
	return s
}

// checkSeqAndTime asserts seq contiguity from 0 after expansion and
// non-decreasing time.
func checkSeqAndTime(t *testing.T, p parsedLog) {
	t.Helper()
	last := int64(-1)
	for i, ev := range p.events {
		if got := num(t, ev["seq"]); got != int64(i) {
			t.Fatalf("event %d has seq %d", i, got)
		}
		tm := num(t, ev["time"])
		if tm < last {
			t.Fatalf("event %d time %d goes back from %d", i, tm, last)
		}
		last = tm
	}
}

func TestBuilderWritesParsableContiguousLogs(t *testing.T) {
	tests := []struct {
		name string
		s    *Session
	}{
		{"every-event-v0", everyEventSession("every-event")},
		{"v3", NewSession("v3-session").Version(3).Turn(func(t *Turn) {
			t.UserText("hi")
			t.SystemMessage("context is getting full")
			t.AssistantText("hello")
		})},
		{"no-cwd-header-only", NewSession("lonely")},
		{"odd-id", NewSession("a/b é 😀").Cwd(`C:\Users\x`).Turn(func(t *Turn) { t.UserText("x") })},
	}
	for _, tc := range tests {
		for _, enc := range []Encoding{Raw, Zstd} {
			t.Run(tc.name+"/"+enc.String(), func(t *testing.T) {
				root := t.TempDir()
				path, err := tc.s.Save(root, enc)
				if err != nil {
					t.Fatal(err)
				}
				rel, _ := filepath.Rel(root, path)
				wantRel := filepath.Join(projectDir(tc.s.cwd, tc.s.hasCwd), encodeSegment(tc.s.id), LogFileName(0, enc))
				if rel != wantRel {
					t.Errorf("saved at %s, want %s", rel, wantRel)
				}
				onDisk, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				if inMemory, err := tc.s.Bytes(enc); err != nil || !bytes.Equal(onDisk, inMemory) {
					t.Errorf("saved file differs from Bytes (%v)", err)
				}
				p := parseLog(t, path, readLogText(t, path))
				if p.header["type"] != "session" || p.header["id"] != tc.s.id {
					t.Errorf("header %v", p.header)
				}
				checkSeqAndTime(t, p)
				checkAgainstExpected(t, path, tc.s.Expected())
			})
		}
	}
}

func TestExpectedFacts(t *testing.T) {
	s := everyEventSession("facts")
	e := s.Expected()
	want := []Message{
		{"user", "First question <b>&amp;</b>"},
		{"assistant", "Answer!"},
		{"user", "Second\nquestion"},
		{"user", "steer one"},
		{"user", "steer two"},
		{"assistant", "legacy reply"},
		{"assistant", "loose reply"},
	}
	if !equalConversation(e.Conversation, want) {
		t.Errorf("conversation\n got %q\nwant %q", e.Conversation, want)
	}
	if e.Title != "Second title" || !e.HasTitle || e.DisplayTitle != "Check direct child" || e.Label != "Second title" {
		t.Errorf("titles: %+v", e)
	}
	if e.LastSeq != s.LastSeq() || e.LastSeq < 30 {
		t.Errorf("last seq %d (builder %d)", e.LastSeq, s.LastSeq())
	}
	if e.Compacted || !e.Preparable {
		t.Errorf("compacted %v preparable %v", e.Compacted, e.Preparable)
	}
}

func TestCheckpointReplacesByPosition(t *testing.T) {
	for _, version := range []int{0, 3, 4} {
		// After the first checkpoint the surface is [A(3), three(2)]: a
		// range is valid by position, so 2..3 runs backwards and fails.
		bad := NewSession("compact").Version(version)
		bad.UserText("one").AssistantText("two").UserText("three").Checkpoint("summary A", 0, 1)
		if bad.Checkpoint("summary B", 2, 3).Err() == nil {
			t.Fatalf("v%d: a range whose start follows its end in the surface must fail", version)
		}
		s := NewSession("compact").Version(version)
		s.UserText("one").AssistantText("two").UserText("three").Checkpoint("summary A", 0, 1).UserText("four")
		// The surface is now [A(3), three(2), four(4)]: position order, not
		// numeric order, decides that 3..2 is a valid range.
		s.Checkpoint("summary B", 3, 2)
		if err := s.Err(); err != nil {
			t.Fatalf("v%d: %v", version, err)
		}
		e := s.Expected()
		want := []Message{{"user", "summary B"}, {"user", "four"}}
		if !equalConversation(e.Conversation, want) || !e.Compacted {
			t.Errorf("v%d: conversation %q compacted %v", version, e.Conversation, e.Compacted)
		}
		if e.Preparable != (version <= 4) {
			t.Errorf("v%d: preparable %v", version, e.Preparable)
		}
		data, err := s.Bytes(Raw)
		if err != nil {
			t.Fatal(err)
		}
		lines := bytes.Split(bytes.TrimSpace(data), []byte("\n"))
		last := string(lines[len(lines)-1])
		wantOp := `"surfaceOp":{"op":"replace","start":3,"end":2}`
		wantSrc := `"source":{"kind":"plugin","plugin":"compact","compactionId":"compaction-2"}`
		if version >= 3 {
			wantOp = `"surfaceOp":{"op":"replace","startSeq":3,"endSeq":2}`
		}
		if version >= 4 {
			wantSrc = `"source":{"kind":"compact-checkpoint","compactionId":"compaction-2"}`
		}
		if !strings.Contains(last, wantOp) || !strings.Contains(last, wantSrc) {
			t.Errorf("v%d checkpoint line lacks %s or %s:\n%s", version, wantOp, wantSrc, last)
		}
		root := t.TempDir()
		path, err := s.Save(root, Raw)
		if err != nil {
			t.Fatal(err)
		}
		checkAgainstExpected(t, path, e)
	}
}

func TestBuilderMisuseIsReported(t *testing.T) {
	tests := []struct {
		name string
		s    *Session
		want string
	}{
		{"packed row in v2", NewSession("x").Version(2).TextChunks("a"), "do not exist in v2"},
		{"system message in v0", NewSession("x").SystemMessage("s"), "version 3"},
		{"checkpoint outside surface", NewSession("x").UserText("a").Checkpoint("c", 7, 9), "not a range"},
		{"version after events", NewSession("x").UserText("a").Version(1), "after events"},
		{"nested turn", NewSession("x").Turn(func(t *Turn) { t.Turn(func(*Turn) {}) }), "inside a turn"},
		{"empty packed row", NewSession("x").ReasoningChunks(), "without members"},
		{"bad plain value", NewSession("x").Plain("p", map[string]any{"f": 1.5}), "unsupported"},
		{"empty id", NewSession(""), "empty"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.s.Save(t.TempDir(), Raw)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

func TestPackedRowsFollowSpec(t *testing.T) {
	s := NewSession("packed").TextChunks("Hel", "lo", " world").AssistantText("Hello world")
	data, err := s.Bytes(Raw)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(data, []byte("\n"))
	var row struct {
		Type  string `json:"type"`
		Seq0  int64  `json:"seq0"`
		Time0 int64  `json:"time0"`
		Data  struct {
			Dt    []int64  `json:"dt"`
			Texts []string `json:"texts"`
		} `json:"data"`
	}
	if err := json.Unmarshal(lines[1], &row); err != nil {
		t.Fatal(err)
	}
	if row.Type != "text-chunks" || row.Seq0 != 0 || len(row.Data.Texts) != 3 || len(row.Data.Dt) != 2 {
		t.Fatalf("row %+v", row)
	}
	var msg struct {
		Seq             int64   `json:"seq"`
		Time            int64   `json:"time"`
		SourceEventSeqs []int64 `json:"sourceEventSeqs"`
	}
	if err := json.Unmarshal(lines[2], &msg); err != nil {
		t.Fatal(err)
	}
	lastMember := row.Time0 + row.Data.Dt[0] + row.Data.Dt[1]
	if msg.Seq != 3 || msg.Time <= lastMember {
		t.Errorf("message seq %d time %d, last member time %d", msg.Seq, msg.Time, lastMember)
	}
	if len(msg.SourceEventSeqs) != 3 || msg.SourceEventSeqs[2] != 2 {
		t.Errorf("sourceEventSeqs %v", msg.SourceEventSeqs)
	}
}

func TestSameCallsSameBytes(t *testing.T) {
	a, err := everyEventSession("det").Bytes(Zstd)
	if err != nil {
		t.Fatal(err)
	}
	b, err := everyEventSession("det").Bytes(Zstd)
	if err != nil {
		t.Fatal(err)
	}
	c, err := everyEventSession("other").Bytes(Zstd)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Error("the same builder calls wrote different bytes")
	}
	if bytes.Equal(a, c) {
		t.Error("different ids wrote identical bytes")
	}
}

// TestSanitizeTextIsWhatTheReaderGets checks the text the generator
// expects a reader to get back against what a JSON decoder reads from the
// bytes it writes. (The escaping itself is tested against node in
// jsjson's TestAppendString.)
func TestSanitizeTextIsWhatTheReaderGets(t *testing.T) {
	tests := []struct{ in, want string }{
		{`a"b\c`, `a"b\c`},
		{"<tag>&\u2028\u2029", "<tag>&\u2028\u2029"},
		{"\b\f\n\r\t\x00\x1f", "\b\f\n\r\t\x00\x1f"},
		{"bad\xffbyte", "bad\uFFFDbyte"},
		{"cut\xe2\x80", "cut\uFFFD\uFFFD"},
		{"😀é", "😀é"},
	}
	for _, tc := range tests {
		if got := sanitizeText(tc.in); got != tc.want {
			t.Errorf("sanitizeText(%q) = %q, want %q", tc.in, got, tc.want)
		}
		var back string
		if err := json.Unmarshal(appendJSON(nil, tc.in), &back); err != nil || back != tc.want {
			t.Errorf("%q: the written JSON reads back as %q, %v; want %q", tc.in, back, err, tc.want)
		}
	}
}

func TestCapturedThroughSeq(t *testing.T) {
	if got := NewSession("empty").Expected().CapturedThroughSeq(); got != nil {
		t.Errorf("empty log: %d, want nil", *got)
	}
	got := NewSession("two").UserText("a").TextChunks("x", "y").Expected().CapturedThroughSeq()
	if got == nil || *got != 2 {
		t.Errorf("got %v, want 2", got)
	}
}
