package dshlog

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/dsh-refls/dsh-refls/sessionref/internal/jsjson"
)

// joinTextBlocks is the text of message content as dsh's projection reads
// it (textContent in packages/context/session-reference/src/projection.ts):
// the text of every block whose type is "text" and whose text is a string,
// joined with "\n". A block whose text is not a string, or an entry that is
// not an object, is skipped, not an error. Texts are decoded from the raw
// JSON as dsh decodes them (jsjson.DecodeText): one U+FFFD per maximal invalid
// UTF-8 subsequence, lone surrogates kept, in WTF-8.
//
// Content given as a plain string, which dsh's validator refuses, is read
// as that text (a tolerance, docs/reliability.md). Content that is neither
// an array, a string nor null is an error.
//
// raw must be valid JSON (a value of a parsed line). With textInPlace the
// caller gives raw's buffer away: a single text is decoded over its own
// bytes (jsjson.DecodeTextInPlace), so the text of a long message is its only
// copy; the one text block of a message is returned as decoded, never
// copied again. With textInArena the texts are decoded into a (a single
// copy, in bytes the arena reuses after its next reset).
func joinTextBlocks(raw json.RawMessage, how textDecoding, a *jsjson.Arena) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	decode := how.decoder()
	decodeCopy := jsjson.DecodeText
	if how == textReference {
		decodeCopy = decode
	}
	if raw[0] == '"' {
		if how == textInArena {
			decode = a.Text
		}
		s, ok := decode(raw)
		if !ok {
			return "", fmt.Errorf("content string is not valid JSON")
		}
		return s, nil
	}
	if raw[0] != '[' {
		var blocks []json.RawMessage
		return "", json.Unmarshal(raw, &blocks) // the error encoding/json gives
	}
	// The text tokens of the text blocks, found first so that decoding in
	// place never writes over bytes still to be scanned.
	var texts [][]byte
	arrayElements(raw, func(blk []byte) {
		if blk[0] != '{' {
			return
		}
		// Keys match exactly and the last of repeated keys wins, as in a
		// map[string]json.RawMessage.
		var typ, text []byte
		objectMembers(blk, func(key, val []byte) bool {
			switch string(key) {
			case `"type"`:
				typ = val
			case `"text"`:
				text = val
			default:
				if _, plain := memberName(key); plain {
					break
				}
				// An escaped key: decode it to compare.
				var k string
				if json.Unmarshal(key, &k) == nil {
					switch k {
					case "type":
						typ = val
					case "text":
						text = val
					}
				}
			}
			return true
		})
		if string(typ) != `"text"` { // the token as dsh writes it, or another spelling
			if t, ok := decodeCopy(typ); !ok || t != "text" {
				return
			}
		}
		if len(text) == 0 || text[0] != '"' {
			return
		}
		texts = append(texts, text)
	})
	if how == textInArena {
		return a.Join(texts), nil
	}
	switch len(texts) {
	case 0:
		return "", nil
	case 1:
		s, ok := decode(texts[0])
		if !ok {
			return "", nil // not a string token: skipped
		}
		return s, nil
	}
	var b strings.Builder
	first := true
	for _, t := range texts {
		s, ok := decodeCopy(t)
		if !ok {
			continue
		}
		if !first {
			b.WriteByte('\n')
		}
		b.WriteString(s)
		first = false
	}
	return b.String(), nil
}
