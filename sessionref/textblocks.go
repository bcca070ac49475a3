package sessionref

import (
	"encoding/json"
	"fmt"
	"strings"
)

// joinTextBlocks is the text of message content as dsh's projection reads
// it (textContent in packages/context/session-reference/src/projection.ts):
// the text of every block whose type is "text" and whose text is a string,
// joined with "\n". A block whose text is not a string, or an entry that is
// not an object, is skipped, not an error. Texts are decoded from the raw
// JSON as dsh decodes them (decodeJSText): one U+FFFD per maximal invalid
// UTF-8 subsequence, lone surrogates kept, in WTF-8.
//
// Content given as a plain string, which dsh's validator refuses, is read
// as that text (a tolerance, docs/reliability.md). Content that is neither
// an array, a string nor null is an error.
func joinTextBlocks(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	if raw[0] == '"' {
		s, ok := decodeJSText(raw)
		if !ok {
			return "", fmt.Errorf("content string is not valid JSON")
		}
		return s, nil
	}
	var blocks []json.RawMessage
	if err := json.Unmarshal(raw, &blocks); err != nil {
		return "", err
	}
	var b strings.Builder
	first := true
	for _, blk := range blocks {
		if len(blk) == 0 || blk[0] != '{' {
			continue
		}
		var fields map[string]json.RawMessage
		if json.Unmarshal(blk, &fields) != nil {
			continue
		}
		if typ, ok := decodeJSText(fields["type"]); !ok || typ != "text" {
			continue
		}
		text, ok := decodeJSText(fields["text"])
		if !ok {
			continue
		}
		if !first {
			b.WriteByte('\n')
		}
		b.WriteString(text)
		first = false
	}
	return b.String(), nil
}
