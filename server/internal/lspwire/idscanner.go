package lspwire

import (
	"bytes"
	"encoding/json"
)

// idScanner follows a JSON object written to it in pieces and keeps the
// raw value of its top-level "id" member and whether it has a "method"
// member, holding no more than a few bytes whatever the object's size.
type idScanner struct {
	depth     int
	inString  bool
	escaped   bool
	expectKey bool // at depth 1, the next string is a member name
	inKey     bool
	key       []byte
	keyLong   bool
	capturing bool // reading the value of "id"
	id        []byte
	idLong    bool
	hasMethod bool
	gotID     bool
}

// Write implements io.Writer.
func (sc *idScanner) Write(p []byte) (int, error) {
	for i := 0; i < len(p); i++ {
		// The bulk of a huge message is string contents that are neither
		// a member name nor the id: jump to the next byte that matters.
		if sc.inString && !sc.escaped && !sc.inKey && !sc.capturing {
			j := bytes.IndexAny(p[i:], `"\`)
			if j < 0 {
				break
			}
			i += j
		}
		sc.step(p[i])
	}
	return len(p), nil
}

func (sc *idScanner) step(c byte) {
	if sc.capturing {
		if len(sc.id) < maxScannedIDBytes {
			sc.id = append(sc.id, c)
		} else {
			sc.idLong = true
		}
	}
	if sc.inString {
		switch {
		case sc.escaped:
			sc.escaped = false
		case c == '\\':
			sc.escaped = true
		case c == '"':
			sc.inString = false
			sc.inKey = false
			return
		}
		if sc.inKey {
			if len(sc.key) < len("method") {
				sc.key = append(sc.key, c)
			} else {
				sc.keyLong = true
			}
		}
		return
	}
	switch c {
	case '"':
		sc.inString = true
		if sc.depth == 1 && sc.expectKey {
			sc.inKey, sc.key, sc.keyLong = true, sc.key[:0], false
		}
	case '{', '[':
		sc.depth++
		if sc.depth == 1 {
			sc.expectKey = c == '{'
		}
	case '}', ']':
		if sc.depth == 1 {
			sc.endValue()
		}
		sc.depth--
	case ':':
		if sc.depth == 1 && sc.expectKey {
			sc.expectKey = false
			key := string(sc.key)
			if !sc.keyLong && key == "method" {
				sc.hasMethod = true
			}
			if !sc.keyLong && key == "id" {
				sc.capturing, sc.id, sc.idLong = true, sc.id[:0], false
			}
		}
	case ',':
		if sc.depth == 1 {
			sc.endValue()
			sc.expectKey = true
		}
	}
}

// endValue ends the value of a top-level member; the byte that ended it
// was captured last and is dropped.
func (sc *idScanner) endValue() {
	if !sc.capturing {
		return
	}
	sc.capturing = false
	sc.gotID = true
	if len(sc.id) > 0 {
		sc.id = sc.id[:len(sc.id)-1]
	}
}

// result returns the id (nil when absent, null or not a valid id) and
// whether the object is a request or notification.
func (sc *idScanner) result() (json.RawMessage, bool) {
	if !sc.gotID || sc.idLong {
		return nil, sc.hasMethod
	}
	id := bytes.TrimSpace(sc.id)
	if !validID(id) {
		return nil, sc.hasMethod
	}
	return json.RawMessage(bytes.Clone(id)), sc.hasMethod
}
