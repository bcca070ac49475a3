package dshlog

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Format v4 event types that are new or changed for a reader (SPEC §1.7).
const (
	typeDeveloperMessage = "developer/message"
	typeRequestHeader    = "request/header"
	typeInboxSpliced     = "agent/inbox/spliced"
	typeCatalog          = "subagent/catalog"
)

// RefusalError reports a log that dsh itself refuses to open (SPEC §1.7
// "Refused v4 files"): the session stays listed, and preparation fails
// with READ_FAILED naming Rule.
type RefusalError struct {
	// Version is the log's format version; 0 means 4 (the v4 row rules).
	Version int
	// Seq is the seq of the event the rule refuses.
	Seq int64
	// Rule is the rule that refuses the log, worded as the message a user
	// sees.
	Rule string
}

func (e *RefusalError) Error() string {
	v := e.Version
	if v == 0 {
		v = 4
	}
	return fmt.Sprintf("format v%d log refused at seq %d: %s", v, e.Seq, e.Rule)
}

// The refusal rules, worded as the message a user sees.
const (
	rulePluginSource   = `a message source has kind "plugin"; format v4 requires a producer-owned source kind`
	ruleToolResult     = "a content block has the retired type \"tool-result\"; format v4 carries tool results as role-tool messages"
	ruleHeaderSystem   = "request/header carries data.header.system; format v4 keeps the system prompt in system/message"
	ruleUnknownSurface = "event type %q is unknown and carries a surfaceOp, so the surface cannot be folded"
	// The surface rules of dsh's event model (packages/core/session/src/types.ts
	// at zq0929/deepseek-harness@5593cc250aae228449197efd2413192165e3377f:
	// SurfaceEventType, SurfaceOp), enforced on the events of the readable
	// prefix as dsh's validateStoredEvents does.
	ruleNotSurface = "event type %q is not surface-eligible but carries a surfaceOp"
	ruleShadowed   = "a replacing event's sourceEventSeqs must include every shadowed surface node; seq %d is missing"
	// ruleTime: dsh admits only a safe-integer event time.
	ruleTime = "event time is not a safe integer"
)

// v4EnvelopeKeys are the keys a v4 row may have (SPEC §1.7; FORMAT-v4 §5.2).
// invalidV4Envelope reports why a parsed v4 row is invalid, "" when it is
// not: a key outside type, seq, time, data, ignorable, sourceEventSeqs and
// surfaceOp (seq0 is one: v4 has no packed rows), ignorable with a value
// other than true, or a required key missing. dsh treats such a row like
// an unparsable line: it starts the damaged tail (SPEC §1.7).
func invalidV4Envelope(e *envelope) string {
	switch {
	case e.Extra || e.Seq0 != nil:
		return "format v4 row has an envelope key outside type, seq, time, data, ignorable, sourceEventSeqs, surfaceOp"
	case e.Ignorable != nil && !isIgnorable(e.Ignorable):
		return "format v4 row has ignorable with a value other than true"
	case e.Time == nil && !e.BadTime:
		return "format v4 row has no time"
	case e.Data == nil:
		return "format v4 row has no data"
	}
	return ""
}

// isIgnorable reports the v4 marker "ignorable": true.
func isIgnorable(raw []byte) bool { return string(raw) == "true" }

// v4Message is the part of a message dsh's v4 admission looks at.
type v4Message struct {
	Content json.RawMessage `json:"content"`
	Source  *struct {
		Kind *string `json:"kind"`
	} `json:"source"`
}

// checkV4Row applies the hard refusals of a v4 row (dsh 0.2
// session-format-v3-to-v4 assertV4SourceRowAdmission / assertV4RowAdmission,
// FORMAT-v4 §5.5): a plugin source kind, a tool-result block, a system field
// in a request header. It reports the first rule the row breaks, or nil.
// Rows whose bytes cannot hold a breach are not decoded.
func checkV4Row(typ string, seq int64, data json.RawMessage, hasSurfaceOp, ignorable bool) error {
	refuse := func(rule string) error { return &RefusalError{Seq: seq, Rule: rule} }
	switch typ {
	case typeUserMessage:
		if !mayBreach(data) {
			return nil
		}
		var m v4Message
		if json.Unmarshal(data, &m) == nil {
			return checkV4Message(&m, refuse)
		}
	case typeSystemMessage, typeDeveloperMessage, typeAssistantMessage, typeToolResult:
		if !mayBreach(data) {
			return nil
		}
		var d struct {
			Message *v4Message `json:"message"`
		}
		if json.Unmarshal(data, &d) == nil && d.Message != nil {
			return checkV4Message(d.Message, refuse)
		}
	case typeInboxSpliced:
		if !mayBreach(data) {
			return nil
		}
		var d struct {
			Inserted []v4Message `json:"inserted"`
		}
		if json.Unmarshal(data, &d) == nil {
			for i := range d.Inserted {
				if err := checkV4Message(&d.Inserted[i], refuse); err != nil {
					return err
				}
			}
		}
	case typeRequestHeader:
		if !bytes.Contains(data, []byte(`"system"`)) {
			return nil
		}
		var d struct {
			Header map[string]json.RawMessage `json:"header"`
		}
		if json.Unmarshal(data, &d) == nil {
			if _, ok := d.Header["system"]; ok {
				return refuse(ruleHeaderSystem)
			}
		}
	default:
		// An unknown type marked ignorable is kept and never touches the
		// surface, whatever surfaceOp it carries (packages/core/session/src/
		// known-event-types.ts and types.ts, SessionEvent.ignorable, at
		// zq0929/deepseek-harness@5593cc250aae228449197efd2413192165e3377f).
		if hasSurfaceOp && !ignorable && !isKnownV4Type(typ) {
			return refuse(fmt.Sprintf(ruleUnknownSurface, typ))
		}
	}
	return nil
}

// mayBreach is a cheap pre-check: a row without these bytes has neither a
// plugin source nor a tool-result block.
func mayBreach(data json.RawMessage) bool {
	return quotedTokens(data, quotedPlugin|quotedToolResult) != 0
}

func checkV4Message(m *v4Message, refuse func(string) error) error {
	if m.Source != nil && m.Source.Kind != nil && *m.Source.Kind == sourcePlugin {
		return refuse(rulePluginSource)
	}
	if bytes.Contains(m.Content, []byte(`"tool-result"`)) {
		var blocks []struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(m.Content, &blocks) == nil {
			for _, b := range blocks {
				if b.Type == "tool-result" {
					return refuse(ruleToolResult)
				}
			}
		}
	}
	return nil
}
