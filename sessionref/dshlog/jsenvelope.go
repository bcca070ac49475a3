package dshlog

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"strconv"
)

// Event envelopes as dsh reads them: JSON.parse of the line, then checks on
// the resulting object (dsh 0.2.1-alpha.2,
// zq0929/deepseek-harness@5593cc250aae228449197efd2413192165e3377f,
// packages/core/session/src/types.ts: SessionEvent, SessionSeq). Two
// consequences differ from encoding/json, which dsh-refls used before:
//
//   - keys are case-sensitive: "SEQ" is not seq but an unknown key, so a
//     line whose only seq is "SEQ" has no seq and ends the readable prefix;
//   - numbers are JavaScript numbers: 1.0, 1e0 and 1.001e3 are the safe
//     integers 1, 1 and 1001; 1.5 is no integer, and a number outside
//     ±(2^53-1) is no safe integer.
//
// Repeated keys keep the last value, as JSON.parse does.

// Bits of envelope.bad, in the order their errors are reported.
const (
	badType uint8 = 1 << iota
	badSeq
	badSeq0
	badTime
)

// set stores one member of the envelope object.
func (e *envelope) set(name string, val []byte) {
	switch name {
	case "type":
		e.bad &^= badType
		if s, ok := plainStringValue(val); ok {
			e.Type = s
			return
		}
		var t string
		if json.Unmarshal(val, &t) != nil {
			e.Type, e.bad = "", e.bad|badType
			return
		}
		e.Type = t
	case "seq":
		e.Seq = e.setInt(val, badSeq)
	case "seq0":
		e.Seq0 = e.setInt(val, badSeq0)
	case "time":
		e.BadTime = false
		e.Time = e.setInt(val, badTime)
		if e.Time == nil && e.bad&badTime != 0 && isNumberToken(val) {
			// A number, but not a safe integer: the row parses, and dsh
			// refuses the log when it reads the event.
			e.bad &^= badTime
			e.BadTime = true
		}
	case "data":
		e.Data = val
	case "surfaceOp":
		e.SurfaceOp = val
	case "ignorable":
		e.Ignorable = val
	case "sourceEventSeqs":
		e.SourceEventSeqs = val
	default:
		e.Extra = true
	}
}

// setInt reads an integer member: null is absent (nil), a safe integer is
// its value, anything else sets bit.
func (e *envelope) setInt(val []byte, bit uint8) *int64 {
	e.bad &^= bit
	if n, ok := plainInt(val); ok && n <= maxSafeInteger && n >= -maxSafeInteger {
		return &n
	}
	if string(val) == "null" {
		return nil
	}
	if n, ok := jsSafeInteger(val); ok {
		return &n
	}
	e.bad |= bit
	return nil
}

// err reports the first member whose value has the wrong type.
func (e *envelope) err() error {
	switch {
	case e.bad == 0:
		return nil
	case e.bad&badType != 0:
		return errors.New("type is not a string")
	case e.bad&badSeq != 0:
		return errors.New("seq is not a safe integer")
	case e.bad&badSeq0 != 0:
		return errors.New("seq0 is not a safe integer")
	default:
		return errors.New("time is not a number")
	}
}

// maxSafeInteger is JavaScript's Number.MAX_SAFE_INTEGER.
const maxSafeInteger = 1<<53 - 1

// jsSafeInteger reads a JSON number token as JavaScript does and reports
// whether it is a safe integer (Number.isSafeInteger): 1.0, 1e0, 1.001e3 and
// -0 are; 1.5, 1e300 and 9007199254740992 are not.
func jsSafeInteger(val []byte) (int64, bool) {
	if !isNumberToken(val) {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(val), 64)
	if err != nil || f != math.Trunc(f) || math.Abs(f) > maxSafeInteger {
		return 0, false
	}
	return int64(f), true
}

// isNumberToken reports whether val is one JSON number token.
func isNumberToken(val []byte) bool {
	return len(val) > 0 && (val[0] == '-' || val[0] >= '0' && val[0] <= '9') && validNumber(val, 0) == len(val)
}

// unescapeKey is the text of a key token that holds an escape.
func unescapeKey(key []byte) string {
	var s string
	if json.Unmarshal(key, &s) != nil {
		return ""
	}
	return s
}

// invalidEnvelopeJSON is the error of a line that is not valid JSON.
func invalidEnvelopeJSON(line []byte) error {
	var v json.RawMessage
	if err := json.Unmarshal(line, &v); err != nil {
		return err
	}
	return errors.New("invalid JSON")
}

// decodeEnvelopeReference is decodeEnvelope through encoding/json: the
// whole line into a map (exact keys, the last repeat winning), each member
// then stored as decodeEnvelope stores it. It is the reading the faster
// path is tested against.
func decodeEnvelopeReference(line []byte, e *envelope) error {
	var d envelope // as in decodeEnvelope: e does not escape
	if !json.Valid(line) {
		*e = d
		return invalidEnvelopeJSON(line)
	}
	if trimmed := bytes.TrimLeft(line, " \t\r\n"); trimmed[0] != '{' {
		*e = d
		return nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(line, &m); err != nil {
		*e = d
		return err
	}
	for k, val := range m {
		d.set(k, val)
	}
	*e = d
	return d.err()
}
