package dshlog

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"

	"github.com/dsh-refls/dsh-refls/sessionref/internal/jsjson"
)

// The projection read checks every event line for valid JSON before its
// fields are scanned (decodeEnvelope): an invalid line ends the readable
// prefix. encoding/json's Valid steps a state machine through every byte,
// which made it the largest cost of reading a log. fastValid checks the
// same grammar with a loop per token and strings eight bytes at a time.

// Word masks for the eight-bytes-at-a-time string scan.
const (
	swarOnes  = 0x0101010101010101
	swarHighs = 0x8080808080808080
	swarQuote = '"' * swarOnes
	swarBack  = '\\' * swarOnes
	swarSpace = 0x20 * swarOnes
)

// fastValidMaxDepth is the deepest nesting fastValid follows; deeper input
// is left to encoding/json, whose limit (10000) it then applies.
const fastValidMaxDepth = 64 * 64

// validJSON is json.Valid(b).
func validJSON(b []byte) bool {
	return fastValid(b) || json.Valid(b)
}

// fastValid reports true only for input json.Valid accepts: one JSON value
// between optional white space. False means the input is invalid or
// nested deeper than fastValidMaxDepth; the caller then asks json.Valid.
func fastValid(b []byte) bool {
	// objects has bit d set when the container at depth d is an object.
	var objects [fastValidMaxDepth / 64]uint64
	depth := 0
	i := skipSpace(b, 0)
value:
	if i >= len(b) {
		return false
	}
	switch c := b[i]; c {
	case '"':
		if i = validString(b, i); i < 0 {
			return false
		}
	case '{':
		if depth == fastValidMaxDepth {
			return false
		}
		objects[depth>>6] |= 1 << (depth & 63)
		depth++
		i = skipSpace(b, i+1)
		if i < len(b) && b[i] == '}' {
			depth--
			i++
			break
		}
		goto key
	case '[':
		if depth == fastValidMaxDepth {
			return false
		}
		objects[depth>>6] &^= 1 << (depth & 63)
		depth++
		i = skipSpace(b, i+1)
		if i < len(b) && b[i] == ']' {
			depth--
			i++
			break
		}
		goto value
	case 't':
		if !hasLiteral(b, i, "true") {
			return false
		}
		i += 4
	case 'f':
		if !hasLiteral(b, i, "false") {
			return false
		}
		i += 5
	case 'n':
		if !hasLiteral(b, i, "null") {
			return false
		}
		i += 4
	default:
		if i = validNumber(b, i); i < 0 {
			return false
		}
	}
	// After a value: the end, a comma or the close of its container.
	for {
		i = skipSpace(b, i)
		if depth == 0 {
			return i == len(b)
		}
		if i >= len(b) {
			return false
		}
		inObject := objects[(depth-1)>>6]&(1<<((depth-1)&63)) != 0
		switch b[i] {
		case ',':
			i = skipSpace(b, i+1)
			if inObject {
				goto key
			}
			goto value
		case '}':
			if !inObject {
				return false
			}
		case ']':
			if inObject {
				return false
			}
		default:
			return false
		}
		depth--
		i++
	}
key:
	if i >= len(b) || b[i] != '"' {
		return false
	}
	if i = validString(b, i); i < 0 {
		return false
	}
	i = skipSpace(b, i)
	if i >= len(b) || b[i] != ':' {
		return false
	}
	i = skipSpace(b, i+1)
	goto value
}

// hasLiteral reports whether b[i:] starts with lit.
func hasLiteral(b []byte, i int, lit string) bool {
	return len(b)-i >= len(lit) && string(b[i:i+len(lit)]) == lit
}

// validNumber returns the index just past the number starting at b[i],
// -1 when no valid number starts there: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?.
func validNumber(b []byte, i int) int {
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i >= len(b):
		return -1
	case b[i] == '0':
		i++
	case b[i] >= '1' && b[i] <= '9':
		i = digitsEnd(b, i+1)
	default:
		return -1
	}
	if i < len(b) && b[i] == '.' {
		j := digitsEnd(b, i+1)
		if j == i+1 {
			return -1
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := digitsEnd(b, i)
		if j == i {
			return -1
		}
		i = j
	}
	return i
}

func digitsEnd(b []byte, i int) int {
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}

// validString returns the index just past the string token starting at
// b[i] (its opening quote), -1 when the token is not a valid JSON string:
// unterminated, a control character, or a bad escape. Bytes of 0x80 and
// above pass, as in encoding/json, which replaces invalid UTF-8 when it
// decodes instead of refusing it.
func validString(b []byte, i int) int {
	j := i + 1
	for {
		j = plainStringRun(b, j)
		if j >= len(b) {
			return -1
		}
		switch c := b[j]; {
		case c == '"':
			return j + 1
		case c == '\\':
			if j+1 >= len(b) {
				return -1
			}
			switch b[j+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				j += 2
			case 'u':
				if _, ok := jsjson.ParseHex4(b[j+2:]); !ok {
					return -1
				}
				j += 6
			default:
				return -1
			}
		default: // a control character
			return -1
		}
	}
}

// plainStringValue is the text of the string token val when it holds no
// escape and is valid UTF-8, where encoding/json decodes it to its bytes
// unchanged; ok is false otherwise (the caller then decodes with
// encoding/json). The event types of the formats are returned without an
// allocation.
func plainStringValue(val []byte) (string, bool) {
	if len(val) < 2 || val[0] != '"' || val[len(val)-1] != '"' {
		return "", false
	}
	body := val[1 : len(val)-1]
	if bytes.IndexByte(body, '\\') >= 0 || !utf8.Valid(body) {
		return "", false
	}
	switch string(body) {
	case typeUserMessage:
		return typeUserMessage, true
	case typeAssistantMessage:
		return typeAssistantMessage, true
	case typeToolResult:
		return typeToolResult, true
	case typeToolCall:
		return typeToolCall, true
	case typeTurnStart:
		return typeTurnStart, true
	case typeTurnEnd:
		return typeTurnEnd, true
	case typeStepStart:
		return typeStepStart, true
	case typeStepEnd:
		return typeStepEnd, true
	case typeTitle:
		return typeTitle, true
	}
	return string(body), true
}

// plainInt is the value of val when it is an integer without fraction or
// exponent that fits an int64, as encoding/json decodes it into an int64;
// ok is false otherwise.
func plainInt(val []byte) (int64, bool) {
	digits := val
	if len(digits) > 0 && digits[0] == '-' {
		digits = digits[1:]
	}
	if len(digits) == 0 || len(digits) > 18 {
		return 0, false
	}
	var n int64
	for _, c := range digits {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	if len(val) > len(digits) {
		n = -n
	}
	return n, true
}

// Quoted tokens the readers look for before they decode a row.
const (
	quotedPlugin     = 1 << iota // "plugin"
	quotedToolResult             // "tool-result"
	quotedToolCall               // "tool-call"
)

// quotedTokens reports which of the quoted tokens appear in data as bytes
// (bytes.Contains of each), in one pass: every occurrence starts at a
// quote.
func quotedTokens(data []byte, want int) int {
	found := 0
	for i := 0; ; i++ {
		k := bytes.IndexByte(data[i:], '"')
		if k < 0 {
			return found
		}
		i += k
		rest := data[i+1:]
		if len(rest) < len(`plugin"`) {
			return found
		}
		switch rest[0] {
		case 'p':
			if want&quotedPlugin != 0 && bytes.HasPrefix(rest, []byte(`plugin"`)) {
				found |= quotedPlugin
			}
		case 't':
			if want&quotedToolResult != 0 && bytes.HasPrefix(rest, []byte(`tool-result"`)) {
				found |= quotedToolResult
			}
			if want&quotedToolCall != 0 && bytes.HasPrefix(rest, []byte(`tool-call"`)) {
				found |= quotedToolCall
			}
		}
		if found == want {
			return found
		}
	}
}
