package dshlog

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/dsh-refls/dsh-refls/sessionref/internal/jsjson"
)

// Event types that matter to reading (§1.4, §1.5).
const (
	typeUserMessage      = "user/message"
	typeAssistantMessage = "assistant/message"
	typeToolResult       = "tool/result"
	typeSystemMessage    = "system/message"
	typeSteeringMessage  = "steering/message"
	typeTurnEnd          = "turn/end"
	typeTitle            = "session/title"
	typeDescriptor       = "subagent/descriptor"
	typeWorkDir          = "working-directory/change"
	typeTextChunks       = "text-chunks"
	typeReasoningChunks  = "reasoning-chunks"
	typeToolCallChunks   = "tool-call-chunks"
)

// Source kinds of user messages (§1.4).
const (
	sourceUser              = "user"
	sourcePlugin            = "plugin"
	pluginCompact           = "compact"
	sourceCompactCheckpoint = "compact-checkpoint"
)

// Roles in a projected conversation.
const (
	RoleUser      = "user"
	RoleAssistant = "assistant"
)

// cancelCheckLines is how many lines are read between checks of the
// request context: often enough to stop promptly, rarely enough to cost
// nothing measurable.
const cancelCheckLines = 1024

// envelope is the part of every event line the readers look at, read as
// dsh's JSON.parse reads it (jsenvelope.go).
type envelope struct {
	Type      string
	Seq       *int64
	Seq0      *int64
	Time      *int64
	Data      json.RawMessage
	SurfaceOp json.RawMessage
	// Ignorable and SourceEventSeqs are the raw values of the optional v4
	// keys (SPEC §1.7), nil when absent.
	Ignorable       json.RawMessage
	SourceEventSeqs json.RawMessage
	// Extra is set when the line has a key outside the eight above: keys
	// are compared exactly, so "SEQ" is such a key, not seq.
	Extra bool
	// BadTime is set when time is a number that is not a safe integer
	// (1.5, 1e300): dsh refuses such a log (events.go, checkTime).
	BadTime bool
	// bad has a bit per field (badType …) whose value has the wrong type.
	bad uint8
}

// lastSeq returns the seq of the last event the line stands for: its own
// seq, or for a packed row seq0 plus the number of members minus one.
// ok is false when the line carries no seq.
func (e *envelope) lastSeq() (int64, bool) {
	if e.Seq != nil {
		return *e.Seq, true
	}
	if e.Seq0 == nil {
		return 0, false
	}
	var members struct {
		Texts []json.RawMessage `json:"texts"`
		Args  []json.RawMessage `json:"args"`
	}
	if err := json.Unmarshal(e.Data, &members); err != nil {
		return 0, false
	}
	n := int64(len(members.Texts))
	if e.Type == typeToolCallChunks {
		n = int64(len(members.Args))
	}
	if n == 0 {
		// An empty packed row stands for no events; the previous seq stays.
		return 0, false
	}
	return *e.Seq0 + n - 1, true
}

func isSurfaceType(t string) bool {
	switch t {
	case typeUserMessage, typeAssistantMessage, typeToolResult, typeSystemMessage, typeSteeringMessage:
		return true
	}
	return false
}

// surfaceItem is one surface event, already projected (§2.3.3).
type surfaceItem struct {
	seq        int64
	role       string
	text       string
	keep       bool
	checkpoint bool
}

type surfaceOp struct {
	replace    bool
	start, end int64
}

// parseSurfaceOp decodes a surfaceOp. Up to v3 replace names its range
// with start/end or startSeq/endSeq; v4 accepts only
// {"op":"replace","startSeq":S,"endSeq":E} (SPEC §1.7).
func parseSurfaceOp(raw json.RawMessage, v4 bool) (surfaceOp, error) {
	if len(raw) == 0 || string(raw) == "null" || string(raw) == `"append"` {
		return surfaceOp{}, nil // legacy events without surfaceOp append
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		if s == "append" {
			return surfaceOp{}, nil
		}
		return surfaceOp{}, fmt.Errorf("unknown surfaceOp %q", s)
	}
	if v4 {
		return parseV4Replace(raw)
	}
	var o struct {
		Op       string `json:"op"`
		Start    *int64 `json:"start"`
		End      *int64 `json:"end"`
		StartSeq *int64 `json:"startSeq"`
		EndSeq   *int64 `json:"endSeq"`
	}
	if err := json.Unmarshal(raw, &o); err != nil {
		return surfaceOp{}, fmt.Errorf("surfaceOp: %w", err)
	}
	switch o.Op {
	case "append":
		return surfaceOp{}, nil
	case "replace":
	default:
		return surfaceOp{}, fmt.Errorf("unknown surfaceOp op %q", o.Op)
	}
	start, end := o.Start, o.End
	if o.StartSeq != nil || o.EndSeq != nil { // v3+ spelling
		start, end = o.StartSeq, o.EndSeq
	}
	if start == nil || end == nil {
		return surfaceOp{}, errors.New("replace surfaceOp without start and end")
	}
	return surfaceOp{replace: true, start: *start, end: *end}, nil
}

// parseV4Replace decodes the one object form of a v4 surfaceOp: exactly
// the keys op ("replace"), startSeq and endSeq.
func parseV4Replace(raw json.RawMessage) (surfaceOp, error) {
	var o map[string]json.RawMessage
	if err := json.Unmarshal(raw, &o); err != nil {
		return surfaceOp{}, fmt.Errorf("surfaceOp: %w", err)
	}
	var op string
	var start, end int64
	errStart := json.Unmarshal(o["startSeq"], &start)
	errEnd := json.Unmarshal(o["endSeq"], &end)
	if len(o) != 3 || json.Unmarshal(o["op"], &op) != nil || op != "replace" || errStart != nil || errEnd != nil {
		return surfaceOp{}, fmt.Errorf(`format v4 surfaceOp %s is neither "append" nor {"op":"replace","startSeq":S,"endSeq":E}`, raw)
	}
	return surfaceOp{replace: true, start: start, end: end}, nil
}

type messageSource struct {
	Kind   string `json:"kind"`
	Plugin string `json:"plugin"`
}

type messageBody struct {
	Content json.RawMessage `json:"content"`
	Source  *messageSource  `json:"source"`
}

type messageData struct {
	messageBody
	Message *messageBody `json:"message"`
}

// projectEvent turns one surface event into a surface item (§2.3.3; for
// v4 SPEC §1.7: user messages whose source kind is exactly "user" or
// "compact-checkpoint", and assistant text). e.Data must be valid JSON.
// how says how the text is decoded (joinTextBlocks); with textInPlace the
// caller gives the buffer of e.Data away, and the text is decoded over it;
// with textInArena it is decoded into a.
func projectEvent(e *envelope, seq int64, v4 bool, how textDecoding, a *jsjson.Arena) (surfaceItem, error) {
	item := surfaceItem{seq: seq}
	switch e.Type {
	case typeToolResult, typeSystemMessage, typeDeveloperMessage:
		return item, nil
	}
	var d messageData
	decode := decodeMessageData
	if how == textReference {
		decode = func(data []byte, d *messageData) error { return json.Unmarshal(data, d) }
	}
	if err := decode(e.Data, &d); err != nil {
		return item, fmt.Errorf("%s data: %w", e.Type, err)
	}
	body := d.messageBody
	if d.Message != nil { // the v0 wrapper, and steering's {turn, message}
		body = *d.Message
	}
	text, err := joinTextBlocks(body.Content, how, a)
	if err != nil {
		return item, fmt.Errorf("%s content: %w", e.Type, err)
	}
	item.text = text
	if e.Type == typeAssistantMessage {
		item.role, item.keep = RoleAssistant, true
		return item, nil
	}
	item.role = RoleUser
	kind, plugin := sourceUser, ""
	if v4 {
		kind = "" // v4 keeps only messages that say they are the user's
	}
	if body.Source != nil {
		kind, plugin = body.Source.Kind, body.Source.Plugin
	}
	switch {
	case kind == sourceUser:
		item.keep = true
	case kind == sourceCompactCheckpoint, !v4 && kind == sourcePlugin && plugin == pluginCompact:
		item.keep, item.checkpoint = true, true
	}
	return item, nil
}

// surface is the folded surface of a log (§1.6).
type surface struct {
	items []surfaceItem
}

func (s *surface) apply(item surfaceItem, op surfaceOp) error {
	if !op.replace {
		s.items = append(s.items, item)
		return nil
	}
	i, j := s.position(op.start), s.position(op.end)
	if i < 0 || j < 0 {
		return fmt.Errorf("replace of seq %d..%d names an event not in the surface", op.start, op.end)
	}
	if j < i {
		return fmt.Errorf("replace of seq %d..%d runs backwards in the surface", op.start, op.end)
	}
	s.items[i] = item
	s.items = append(s.items[:i+1], s.items[j+1:]...)
	return nil
}

// unlisted returns the seq of a surface node that the replace op would
// shadow and that sources (the event's sourceEventSeqs: seqs and, from v2,
// [start, end] pairs) does not name; ok is false when every shadowed node
// is named, or the op's range is not on the surface (apply reports that).
func (s *surface) unlisted(op surfaceOp, sources json.RawMessage) (missing int64, ok bool) {
	i, j := s.position(op.start), s.position(op.end)
	if i < 0 || j < 0 || j < i {
		return 0, false
	}
	var list []json.RawMessage
	if len(sources) > 0 && json.Unmarshal(sources, &list) != nil {
		list = nil
	}
	named := func(seq int64) bool {
		for _, raw := range list {
			if n, ok := jsSafeInteger(raw); ok {
				if n == seq {
					return true
				}
				continue
			}
			var pair []json.RawMessage
			if json.Unmarshal(raw, &pair) == nil && len(pair) == 2 {
				a, okA := jsSafeInteger(pair[0])
				b, okB := jsSafeInteger(pair[1])
				if okA && okB && a <= seq && seq <= b {
					return true
				}
			}
		}
		return false
	}
	for _, it := range s.items[i : j+1] {
		if !named(it.seq) {
			return it.seq, true
		}
	}
	return 0, false
}

func (s *surface) position(seq int64) int {
	for i := len(s.items) - 1; i >= 0; i-- {
		if s.items[i].seq == seq {
			return i
		}
	}
	return -1
}
