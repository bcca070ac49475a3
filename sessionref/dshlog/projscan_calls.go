package dshlog

// The closers follow tool calls and results through every assistant
// message with a tool call and every tool result (turnTracker.observe).
// encoding/json decoded the whole of each such row, a tool's output
// included, to find one id. The scans here read only the fields the ids
// lie in, from data that is valid JSON (a value of a checked line); a row
// of any other shape is left to encoding/json (decided false), so the
// result is always encoding/json's.

var (
	callFields    = []string{"callId", "message"}
	sourceFields  = []string{"source"}
	callIDFields  = []string{"callId"}
	contentFields = []string{"content", "message"}
	contentOnly   = []string{"content"}
	blockFields   = []string{"type", "id"}
)

// optionalPlainString reads a string-or-null field the way encoding/json
// fills a *string: nil for null; ok is false for any other value, or a
// string with escapes or invalid UTF-8.
func optionalPlainString(val []byte) (*string, bool) {
	if string(val) == "null" {
		return nil, true
	}
	s, ok := plainStringValue(val)
	if !ok {
		return nil, false
	}
	return &s, true
}

// scanToolResultCallID is toolResultCallID without encoding/json; decided
// is false when data has a shape the scan leaves to encoding/json.
func scanToolResultCallID(data []byte) (id string, ok, decided bool) {
	var flat, nested *string
	decided = scanFields(data, callFields, func(i int, val []byte) bool {
		var good bool
		switch i {
		case 0:
			flat, good = optionalPlainString(val)
			return good
		case 1:
			if string(val) == "null" {
				return true
			}
			return scanFields(val, sourceFields, func(i int, val []byte) bool {
				if i != 0 || string(val) == "null" {
					return true
				}
				return scanFields(val, callIDFields, func(i int, val []byte) bool {
					if i == 0 {
						nested, good = optionalPlainString(val)
						return good
					}
					return true
				})
			})
		}
		return true
	})
	switch {
	case !decided:
		return "", false, false
	case nested != nil:
		return *nested, true, true
	case flat != nil:
		return *flat, true, true
	}
	return "", false, true
}

// scanToolCallIDs is toolCallIDs without encoding/json; decided is false
// when data has a shape the scan leaves to encoding/json.
func scanToolCallIDs(data []byte) (ids []string, decided bool) {
	var content, inner []byte
	hasMessage := false
	decided = scanFields(data, contentFields, func(i int, val []byte) bool {
		switch i {
		case 0:
			content = val
		case 1:
			if string(val) == "null" {
				return true
			}
			hasMessage = true
			return scanFields(val, contentOnly, func(i int, val []byte) bool {
				if i == 0 {
					inner = val
				}
				return true
			})
		}
		return true
	})
	if !decided {
		return nil, false
	}
	if hasMessage {
		content = inner
	}
	if content == nil || string(content) == "null" {
		return nil, true // nothing to decode: no ids
	}
	if content[0] != '[' {
		return nil, false
	}
	ok := true
	arrayElements(content, func(blk []byte) {
		if !ok || string(blk) == "null" {
			return
		}
		var typ string
		var id *string
		ok = scanFields(blk, blockFields, func(i int, val []byte) bool {
			switch i {
			case 0:
				p, good := optionalPlainString(val)
				if p != nil {
					typ = *p
				}
				return good
			case 1:
				var good bool
				id, good = optionalPlainString(val)
				return good
			}
			return true
		})
		if ok && typ == "tool-call" && id != nil {
			ids = append(ids, *id)
		}
	})
	if !ok {
		return nil, false
	}
	return ids, true
}
