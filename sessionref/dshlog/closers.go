package dshlog

import (
	"encoding/json"
)

// Event types that move the turn cursor of the interrupted-turn repair.
const (
	typeTurnStart = "turn/start"
	typeStepStart = "step/start"
	typeStepEnd   = "step/end"
	typeToolCall  = "tool/call"
)

// turnTracker follows the open turn, the open step and the unsettled tool
// calls of a log, to count the synthetic closers dsh appends in memory when
// a log ends inside a turn (SPEC §1.7 "Open last turn"; dsh 0.1.1
// packages/core/session/src/repair.ts, interruptedTurnClosers, applied to
// every cold read by packages/session/session-persistence/src/coordinator.ts
// prepareCore). Only the number of closers matters to a reader: they carry
// no projected text, and capturedThroughSeq is the seq of the last one.
type turnTracker struct {
	openTurn bool
	openStep bool
	// pending are the tool calls of assistant messages since the last turn
	// or step boundary, in first-seen order, not yet settled by a result.
	pending []pendingCall
	// reference decodes every row with encoding/json (logScan.reference).
	reference bool
}

// pendingCall is one unsettled tool call; started says a tool/call for it
// was logged (the closer then reports TOOL_OUTCOME_UNKNOWN, else
// TOOL_NOT_STARTED).
type pendingCall struct {
	id      string
	started bool
}

// Closer outcome codes of the synthetic tool results.
const (
	closerToolOutcomeUnknown = "TOOL_OUTCOME_UNKNOWN"
	closerToolNotStarted     = "TOOL_NOT_STARTED"
)

// observe feeds one event of the readable prefix, in log order.
func (t *turnTracker) observe(typ string, data json.RawMessage) {
	switch typ {
	case typeTurnStart:
		t.openTurn, t.openStep, t.pending = true, false, t.pending[:0]
	case typeTurnEnd:
		t.openTurn, t.openStep, t.pending = false, false, t.pending[:0]
	case typeStepStart:
		t.openStep = true
	case typeStepEnd:
		t.openStep, t.pending = false, t.pending[:0]
	case typeAssistantMessage:
		if quotedTokens(data, quotedToolCall) != 0 {
			ids, decided := scanToolCallIDs(data)
			if !decided || t.reference {
				ids = toolCallIDs(data)
			}
			for _, id := range ids {
				t.register(id)
			}
		}
	case typeToolCall:
		var d struct {
			CallID *string `json:"callId"`
		}
		if json.Unmarshal(data, &d) == nil && d.CallID != nil {
			if i := t.find(*d.CallID); i >= 0 {
				t.pending[i].started = true
			}
		}
	case typeToolResult:
		id, ok, decided := scanToolResultCallID(data)
		if !decided || t.reference {
			id, ok = toolResultCallID(data)
		}
		if ok {
			if i := t.find(id); i >= 0 {
				t.pending = append(t.pending[:i], t.pending[i+1:]...)
			}
		}
	}
}

// pendingIDs are the call ids the synthetic tool results answer, in order.
func (t *turnTracker) pendingIDs() []string {
	if !t.openTurn {
		return nil
	}
	ids := make([]string, len(t.pending))
	for i, c := range t.pending {
		ids[i] = c.id
	}
	return ids
}

// register adds a call; a call id seen again keeps its place and is
// pending again, as a Map.set does in dsh.
func (t *turnTracker) register(id string) {
	if i := t.find(id); i >= 0 {
		t.pending[i] = pendingCall{id: id}
		return
	}
	t.pending = append(t.pending, pendingCall{id: id})
}

func (t *turnTracker) find(id string) int {
	for i := range t.pending {
		if t.pending[i].id == id {
			return i
		}
	}
	return -1
}

// closers returns the outcome codes of the synthetic tool results, in
// order, and the total number of closers (results, step/end, turn/end);
// 0 when the log does not end inside a turn.
func (t *turnTracker) closers() (results []string, total int) {
	if !t.openTurn {
		return nil, 0
	}
	for _, c := range t.pending {
		code := closerToolNotStarted
		if c.started {
			code = closerToolOutcomeUnknown
		}
		results = append(results, code)
	}
	total = len(results) + 1
	if t.openStep {
		total++
	}
	return results, total
}

// toolCallIDs lists the ids of the tool-call blocks of an assistant
// message, in the wrapped shape {message:{content}} and in the legacy
// shape with content directly in data.
func toolCallIDs(data json.RawMessage) []string {
	type block struct {
		Type string  `json:"type"`
		ID   *string `json:"id"`
	}
	var d struct {
		Content json.RawMessage `json:"content"`
		Message *struct {
			Content json.RawMessage `json:"content"`
		} `json:"message"`
	}
	if json.Unmarshal(data, &d) != nil {
		return nil
	}
	content := d.Content
	if d.Message != nil {
		content = d.Message.Content
	}
	var blocks []block
	if json.Unmarshal(content, &blocks) != nil {
		return nil
	}
	var ids []string
	for _, b := range blocks {
		if b.Type == "tool-call" && b.ID != nil {
			ids = append(ids, *b.ID)
		}
	}
	return ids
}

// toolResultCallID is the call a tool result settles: message.source.callId,
// or callId in the legacy flat shape.
func toolResultCallID(data json.RawMessage) (string, bool) {
	var d struct {
		CallID  *string `json:"callId"`
		Message *struct {
			Source *struct {
				CallID *string `json:"callId"`
			} `json:"source"`
		} `json:"message"`
	}
	if json.Unmarshal(data, &d) != nil {
		return "", false
	}
	if d.Message != nil && d.Message.Source != nil && d.Message.Source.CallID != nil {
		return *d.Message.Source.CallID, true
	}
	if d.CallID != nil {
		return *d.CallID, true
	}
	return "", false
}
