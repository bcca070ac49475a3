package dshlog

import (
	"bytes"
	"encoding/json"
	"strings"
	"unsafe"
)

// A scanner over JSON that is already known to be valid (validJSON, or a
// value inside such a document). It finds the members of an object and the
// elements of an array as sub-slices of the input, so reading one field of
// a 64 MiB event line costs no copy of the line: encoding/json copies every
// json.RawMessage it fills. Callers fall back to encoding/json whenever the
// input is not the shape they expect, so errors and odd inputs keep
// encoding/json's exact behaviour.

// skipSpace returns the index of the first non-space byte of b at or after i.
func skipSpace(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\r', '\n':
			i++
		default:
			return i
		}
	}
	return i
}

// stringEnd returns the index just past the string token starting at b[i]
// (b[i] is its opening quote). A quote preceded by an odd run of
// backslashes is escaped.
func stringEnd(b []byte, i int) int {
	j := i + 1
	for {
		k := bytes.IndexByte(b[j:], '"')
		if k < 0 {
			return len(b)
		}
		q := j + k
		n := 0
		for p := q - 1; p > i && b[p] == '\\'; p-- {
			n++
		}
		if n%2 == 0 {
			return q + 1
		}
		j = q + 1
	}
}

// valueEnd returns the index just past the value starting at b[i].
func valueEnd(b []byte, i int) int {
	switch b[i] {
	case '"':
		return stringEnd(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); {
			switch b[j] {
			case '"':
				j = stringEnd(b, j)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
			j++
		}
		return len(b)
	default: // number, true, false, null
		j := i
		for j < len(b) {
			switch b[j] {
			case ',', '}', ']', ' ', '\t', '\r', '\n':
				return j
			}
			j++
		}
		return j
	}
}

// objectMembers calls fn with the key token (quotes included) and the value
// of each member of the object raw, in order, until fn returns false. It
// reports false when raw is not an object or fn stopped.
func objectMembers(raw []byte, fn func(key, val []byte) bool) bool {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return false
	}
	i = skipSpace(raw, i+1)
	for i < len(raw) && raw[i] == '"' {
		kEnd := stringEnd(raw, i)
		key := raw[i:kEnd]
		i = skipSpace(raw, kEnd)
		if i >= len(raw) || raw[i] != ':' {
			return false
		}
		i = skipSpace(raw, i+1)
		if i >= len(raw) {
			return false
		}
		vEnd := valueEnd(raw, i)
		if !fn(key, raw[i:vEnd]) {
			return false
		}
		i = skipSpace(raw, vEnd)
		if i < len(raw) && raw[i] == ',' {
			i = skipSpace(raw, i+1)
		}
	}
	return i < len(raw) && raw[i] == '}'
}

// arrayElements calls fn with each element of the array raw, in order. It
// reports false when raw is not an array.
func arrayElements(raw []byte, fn func(val []byte)) bool {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '[' {
		return false
	}
	i = skipSpace(raw, i+1)
	for i < len(raw) && raw[i] != ']' {
		end := valueEnd(raw, i)
		fn(raw[i:end])
		i = skipSpace(raw, end)
		if i < len(raw) && raw[i] == ',' {
			i = skipSpace(raw, i+1)
		}
	}
	return i < len(raw)
}

// memberName is the key token's text, or ok false when it holds an escape
// (rare; callers then fall back to encoding/json). The text is a view of
// key's bytes, not a copy: it is for comparing, not for keeping.
func memberName(key []byte) (string, bool) {
	body := key[1 : len(key)-1]
	if bytes.IndexByte(body, '\\') >= 0 {
		return "", false
	}
	return unsafe.String(unsafe.SliceData(body), len(body)), true
}

// fieldOf returns the index in names of the key exactly, -1 when the key
// names none of them. ok is false when encoding/json might match the key to
// a field where an exact comparison does not (a case-insensitive match, an
// escaped key): the caller must then decode with encoding/json.
func fieldOf(key []byte, names []string) (int, bool) {
	name, ok := memberName(key)
	if !ok {
		return -1, false
	}
	for i, n := range names {
		if name == n {
			return i, true
		}
	}
	for _, n := range names {
		if strings.EqualFold(name, n) {
			return -1, false
		}
	}
	return -1, true
}

// scanFields calls set with each member of the object data, i being the
// index of its key in names (-1 for any other key). It reports false, and
// the caller decodes with encoding/json, where set does, where a key might
// match a name inexactly, or where a named field repeats (encoding/json
// merges repeats).
func scanFields(data []byte, names []string, set func(i int, val []byte) bool) bool {
	var seen uint
	return objectMembers(data, func(key, val []byte) bool {
		i, ok := fieldOf(key, names)
		if !ok || i >= 0 && seen&(1<<i) != 0 {
			return false
		}
		if i >= 0 {
			seen |= 1 << i
		}
		return set(i, val)
	})
}

// decodeEnvelope reads the envelope of an event line as dsh's JSON.parse
// does (jsenvelope.go: keys compared exactly, numbers as JavaScript reads
// them, the last of repeated keys winning) without copying data, surfaceOp,
// ignorable and sourceEventSeqs: they are sub-slices of line, valid while
// line is.
func decodeEnvelope(line []byte, e *envelope) error {
	if !validJSON(line) {
		return invalidEnvelopeJSON(line)
	}
	i := skipSpace(line, 0)
	if line[i] != '{' {
		*e = envelope{} // valid JSON that is not an object: no event
		return nil
	}
	var d envelope
	objectMembers(line, func(key, val []byte) bool {
		name, ok := memberName(key)
		if !ok {
			name = unescapeKey(key)
		}
		d.set(name, val)
		return true
	})
	*e = d
	return d.err()
}

// messageSourceFields are the keys of messageSource.
var messageSourceFields = []string{"kind", "plugin"}

// scanSource sets *p as json.Unmarshal(val, p) would for a null source or
// one whose kind and plugin are plain strings or null; it reports false,
// leaving *p alone, for any other value.
func scanSource(val []byte, p **messageSource) bool {
	if string(val) == "null" {
		*p = nil
		return true
	}
	var s messageSource
	ok := scanFields(val, messageSourceFields, func(i int, val []byte) bool {
		if i < 0 || string(val) == "null" {
			return true
		}
		text, ok := plainStringValue(val)
		if i == 0 {
			s.Kind = text
		} else {
			s.Plugin = text
		}
		return ok
	})
	if ok {
		*p = &s
	}
	return ok
}

// messageFields are the keys of messageData (messageBody's promoted).
var messageFields = []string{"content", "source", "message"}

// decodeMessageData is json.Unmarshal(data, d) without copying content: it
// is a sub-slice of data. data must be valid JSON.
func decodeMessageData(data []byte, d *messageData) error {
	if scanMessageData(data, d) {
		return nil
	}
	*d = messageData{}
	return json.Unmarshal(data, d)
}

func scanMessageData(data []byte, d *messageData) bool {
	return scanFields(data, messageFields, func(i int, val []byte) bool {
		switch i {
		case 0:
			d.Content = val
		case 1:
			if scanSource(val, &d.Source) {
				return true
			}
			return json.Unmarshal(val, &d.Source) == nil
		case 2:
			if string(val) == "null" {
				d.Message = nil
				return true
			}
			var m messageData
			if !scanMessageData(val, &m) || m.Message != nil {
				return false // a nested "message" is not a messageBody field
			}
			d.Message = &m.messageBody
		}
		return true
	})
}
