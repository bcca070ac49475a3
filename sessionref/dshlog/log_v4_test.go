package dshlog

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/dsh-refls/dsh-refls/sessionref/dshlog/layout"
)

var v4Header = headerLine(headerSpec{ID: "s", Cwd: "/p", HasCwd: true, CreatedAt: fixtureTime, Version: 4})

// v4Wrapped is a v4 surface event whose data wraps the message:
// system/message, developer/message, assistant/message, tool/result.
func v4Wrapped(typ string, seq int64, role string, source map[string]any, content any, op string) string {
	msg := map[string]any{"id": fmt.Sprintf("m-%d", seq), "role": role, "content": content, "source": source}
	if role == "tool" {
		msg["toolCallId"] = source["callId"]
	}
	return eventLine(typ, seq, map[string]any{"turn": 1, "step": 1, "message": msg}, op)
}

func v4Assistant(seq int64, content any) string {
	return v4Wrapped(typeAssistantMessage, seq, "assistant", map[string]any{"kind": "model", "provider": "p", "model": "m"}, content, opAppend)
}

func v4ToolResult(seq int64, callID, text string) string {
	return v4Wrapped(typeToolResult, seq, "tool", map[string]any{"kind": "tool", "callId": callID}, textBlocks(text), opAppend)
}

func plainEvent(typ string, seq int64, data map[string]any) string {
	return eventLine(typ, seq, data, "")
}

func toolCallBlock(id string) map[string]any {
	return map[string]any{"type": "tool-call", "id": id, "name": "read", "arguments": "{}"}
}

// TestReadV4Projection: SPEC §1.7 keeps user messages whose source kind is
// exactly "user" or "compact-checkpoint" and assistant text; system,
// developer and tool messages and every other kind are skipped;
// compacted counts compact-checkpoint sources; chunk records nested in
// assistant streams count for nothing.
func TestReadV4Projection(t *testing.T) {
	kind := func(k string) map[string]any { return map[string]any{"kind": k} }
	stream := map[string]any{"turn": 1, "step": 1,
		"message": map[string]any{"id": "a", "role": "assistant", "content": textBlocks("streamed answer"), "source": kind("model")},
		"stream":  []any{map[string]any{"type": "text-chunks", "time0": 1, "index": 0, "dt": []int{0, 1}, "texts": []string{"stream", "ed answer"}}}}
	events := []string{
		plainEvent("turn/start", 0, map[string]any{"turn": 1}),
		plainEvent("step/start", 1, map[string]any{"turn": 1, "step": 1}),
		v4Wrapped(typeSystemMessage, 2, "system", kind("system-prompt"), textBlocks("system prompt"), opAppend),
		userMsgFrom(3, kind("user"), textBlocks("direct prompt")),
		userMsgFrom(4, kind("runtime-context"), textBlocks("runtime context")),
		userMsgFrom(5, kind("agent-instructions"), textBlocks("AGENTS.md")),
		userMsgFrom(6, kind("plugin:my-plugin"), textBlocks("plugin text")),
		userMsgFrom(7, map[string]any{}, textBlocks("no source kind")),
		v4Wrapped(typeDeveloperMessage, 8, "developer", kind("tool-registry"), []any{map[string]any{"type": "tool-addition", "toolName": "read"}}, opAppend),
		eventLine(typeAssistantMessage, 9, stream, opAppend),
		v4Assistant(10, []any{toolCallBlock("c1")}),
		plainEvent("tool/call", 11, map[string]any{"turn": 1, "step": 1, "callId": "c1", "name": "read", "arguments": "{}"}),
		v4ToolResult(12, "c1", "tool output"),
		plainEvent("step/end", 13, map[string]any{"turn": 1, "step": 1}),
		plainEvent("turn/end", 14, map[string]any{"turn": 1, "reason": map[string]any{"kind": "completed"}}),
		sourced(eventLine(typeUserMessage, 15, map[string]any{"content": textBlocks("summary of the session"), "role": "user", "id": "cp",
			"source": map[string]any{"kind": "compact-checkpoint", "compactionId": "k1"}}, opReplaceSeq(3, 10)), 3, 4, 5, 6, 7, 8, 9, 10),
		userMsgFrom(16, kind("user"), textBlocks("after compaction")),
	}
	for _, enc := range bothEncodings {
		t.Run(string(enc), func(t *testing.T) {
			log, err := readTestLog(t, enc, encodeLog(enc, v4Header, [][]string{events}))
			if err != nil {
				t.Fatal(err)
			}
			want := []turn{{RoleUser, "summary of the session"}, {RoleUser, "after compaction"}}
			if got := turnsOf(log); !reflect.DeepEqual(got, want) {
				t.Errorf("turns %+v, want %+v", got, want)
			}
			msgs := appendProjected(nil, log.surface.items)
			if len(msgs) == 0 || !msgs[0].Checkpoint {
				t.Errorf("the compact-checkpoint message is not a checkpoint: %+v", msgs)
			}
			if log.capturedThroughSeq() != 16 || log.closers != 0 {
				t.Errorf("capturedThroughSeq %d closers %d, want 16 and 0", log.capturedThroughSeq(), log.closers)
			}
		})
	}
	t.Run("before compaction", func(t *testing.T) {
		log, err := readTestLog(t, layout.EncodingRaw, encodeLog(layout.EncodingRaw, v4Header, [][]string{events[:15]}))
		if err != nil {
			t.Fatal(err)
		}
		want := []turn{{RoleUser, "direct prompt"}, {RoleAssistant, "streamed answer"}}
		if got := turnsOf(log); !reflect.DeepEqual(got, want) {
			t.Errorf("turns %+v, want %+v", got, want)
		}
	})
}

// TestReadOpenTurnClosers pins the synthetic closers of §1.7 in every
// format, as dsh 0.1.1 computes them (packages/core/session/src/repair.ts,
// interruptedTurnClosers): one tool result per unsettled call of the open
// step (TOOL_OUTCOME_UNKNOWN when a tool/call was logged, else
// TOOL_NOT_STARTED), a step/end when a step is open, a turn/end.
func TestReadOpenTurnClosers(t *testing.T) {
	turnStart := plainEvent("turn/start", 0, map[string]any{"turn": 1})
	stepStart := func(seq int64) string { return plainEvent("step/start", seq, map[string]any{"turn": 1, "step": 1}) }
	stepEnd := func(seq int64) string { return plainEvent("step/end", seq, map[string]any{"turn": 1, "step": 1}) }
	toolCall := func(seq int64, id string) string {
		return plainEvent("tool/call", seq, map[string]any{"turn": 1, "step": 1, "callId": id, "name": "read", "arguments": "{}"})
	}
	v0Result := func(seq int64, id string) string {
		return eventLine(typeToolResult, seq, map[string]any{"turn": 1, "step": 1, "message": map[string]any{"id": "r", "role": "user",
			"source": map[string]any{"kind": "tool", "callId": id}, "content": []any{}}}, opAppend)
	}
	tests := []struct {
		name     string
		header   string
		events   []string
		closers  int
		outcomes []string
	}{
		{"closed log", v0Header, []string{turnStart, userMsg(1, "a"), turnEnd(2)}, 0, nil},
		{"empty log", v0Header, nil, 0, nil},
		{"open turn, no step", v0Header, []string{turnStart, userMsg(1, "a")}, 1, nil},
		{"open step", v0Header, []string{turnStart, stepStart(1), userMsg(2, "a")}, 2, nil},
		{"started and unstarted calls", v0Header, []string{turnStart, stepStart(1), userMsg(2, "a"),
			assistantMsgBlocks(3, []any{toolCallBlock("c1"), toolCallBlock("c2")}), toolCall(4, "c1")},
			4, []string{closerToolOutcomeUnknown, closerToolNotStarted}},
		{"settled call", v0Header, []string{turnStart, stepStart(1), assistantMsgBlocks(2, []any{toolCallBlock("c1")}), toolCall(3, "c1"), v0Result(4, "c1")},
			2, nil},
		{"calls of a closed step are not closed", v0Header, []string{turnStart, stepStart(1), assistantMsgBlocks(2, []any{toolCallBlock("c1")}), stepEnd(3)},
			1, nil},
		{"v4 role-tool result settles", v4Header, []string{turnStart, stepStart(1), v4Assistant(2, []any{toolCallBlock("c1"), toolCallBlock("c2")}),
			toolCall(3, "c1"), v4ToolResult(4, "c1", "out")}, 3, []string{closerToolNotStarted}},
	}
	for _, tt := range tests {
		for _, enc := range bothEncodings {
			t.Run(tt.name+"/"+string(enc), func(t *testing.T) {
				log, err := readTestLog(t, enc, encodeLog(enc, tt.header, [][]string{tt.events}))
				if err != nil {
					t.Fatal(err)
				}
				wantSeq := int64(len(tt.events)-1) + int64(tt.closers)
				if log.closers != tt.closers || !reflect.DeepEqual(log.closerResults, tt.outcomes) || log.capturedThroughSeq() != wantSeq {
					t.Errorf("closers %d %v, capturedThroughSeq %d; want %d %v, %d", log.closers, log.closerResults, log.capturedThroughSeq(), tt.closers, tt.outcomes, wantSeq)
				}
			})
		}
	}
}

// TestReadV4Refusals: a v4 log dsh refuses is refused with a message that
// names the rule (SPEC §1.7), even when the breach lies after the readable
// prefix; an unknown type without surfaceOp is skipped and counted.
func TestReadV4Refusals(t *testing.T) {
	base := []string{userMsg(0, "a"), v4Assistant(1, textBlocks("b"))}
	tests := []struct {
		name   string
		events []string
		says   string // "" = readable
	}{
		{"plugin source", append(base, userMsgFrom(2, map[string]any{"kind": "plugin", "plugin": "compact"}, textBlocks("x"))), `kind "plugin"`},
		{"plugin source in a wrapped message", append(base, v4Wrapped(typeSystemMessage, 2, "system", map[string]any{"kind": "plugin"}, textBlocks("x"), opAppend)), `kind "plugin"`},
		{"plugin source in an inbox splice", append(base, plainEvent("agent/inbox/spliced", 2, map[string]any{"inserted": []any{
			map[string]any{"content": textBlocks("x"), "source": map[string]any{"kind": "plugin", "plugin": "p"}}}})), `kind "plugin"`},
		{"tool-result block", append(base, v4Wrapped(typeToolResult, 2, "tool", map[string]any{"kind": "tool", "callId": "c"},
			[]any{map[string]any{"type": "tool-result", "toolCallId": "c", "content": []any{}}}, opAppend)), `"tool-result"`},
		{"request header system", append(base, plainEvent("request/header", 2, map[string]any{"header": map[string]any{"system": ""}})), "data.header.system"},
		{"unknown type with surfaceOp", append(base, eventLine("future/message", 2, map[string]any{}, opAppend)), `"future/message" is unknown`},
		{"breach after the readable prefix", append(base, `{"type":"user/message","seq":`, userMsgFrom(9, map[string]any{"kind": "plugin"}, textBlocks("x"))), `kind "plugin"`},
		{"unknown log-only type", append(base, plainEvent("future/log-only", 2, map[string]any{}), plainEvent("session/title", 3, map[string]any{"title": "t"})), ""},
		{"request header without system", append(base, plainEvent("request/header", 2, map[string]any{"header": map[string]any{"config": map[string]any{}}})), ""},
	}
	for _, tt := range tests {
		for _, enc := range bothEncodings {
			t.Run(tt.name+"/"+string(enc), func(t *testing.T) {
				log, err := readTestLog(t, enc, encodeLog(enc, v4Header, [][]string{tt.events}))
				if tt.says == "" {
					if err != nil {
						t.Fatalf("readable log refused: %v", err)
					}
					if tt.name == "unknown log-only type" && log.unknownTypes != 1 {
						t.Errorf("unknown types %d, want 1", log.unknownTypes)
					}
					return
				}
				var re *RefusalError
				if !errors.As(err, &re) || !strings.Contains(err.Error(), tt.says) {
					t.Fatalf("err = %v, want a refusal saying %q", err, tt.says)
				}
			})
		}
	}
}

// TestReadV4SurfaceOp: v4 accepts only "append" and exactly
// {"op":"replace","startSeq","endSeq"}.
func TestReadV4SurfaceOp(t *testing.T) {
	for _, op := range []string{opReplace(0, 0), `{"op":"replace","startSeq":0,"endSeq":0,"extra":1}`, `{"op":"replace","startSeq":0}`} {
		t.Run(op, func(t *testing.T) {
			events := []string{userMsg(0, "a"), eventLine(typeUserMessage, 1, map[string]any{"content": textBlocks("b"), "role": "user", "source": map[string]any{"kind": "user"}}, op)}
			_, err := readTestLog(t, layout.EncodingRaw, encodeLog(layout.EncodingRaw, v4Header, [][]string{events}))
			var ce *CorruptError
			if !errors.As(err, &ce) || !strings.Contains(err.Error(), "surfaceOp") {
				t.Fatalf("err = %v, want a corrupt log naming the surfaceOp", err)
			}
		})
	}
}
