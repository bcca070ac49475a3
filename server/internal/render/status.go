package render

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// StatusMarkdown renders the index status st (dsh/status's answer) for a
// person: the plain facts as a list, in the order dsh/status gives them
// (strings as code spans, which read the same whether an editor renders
// the Markdown or shows its source), then each nested fact as a JSON
// block under a heading of its own.
func StatusMarkdown(st any) (string, error) {
	raw, err := json.Marshal(st)
	if err != nil {
		return "", fmt.Errorf("encoding the status: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if _, err := dec.Token(); err != nil { // {
		return "", fmt.Errorf("reading the status: %w", err)
	}
	var b, nested strings.Builder
	b.WriteString("# dsh-refls index status\n\n")
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return "", fmt.Errorf("reading the status: %w", err)
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return "", fmt.Errorf("reading the status: %w", err)
		}
		switch v[0] {
		case '{', '[':
			var indented bytes.Buffer
			_ = json.Indent(&indented, v, "", "  ")
			fmt.Fprintf(&nested, "\n## %s\n\n```json\n%s\n```\n", key, indented.String())
		case 'n':
			fmt.Fprintf(&b, "- **%s**: none\n", key)
		case '"':
			var str string
			_ = json.Unmarshal(v, &str)
			fmt.Fprintf(&b, "- **%s**: %s\n", key, InlineCode(str, true))
		default:
			fmt.Fprintf(&b, "- **%s**: %s\n", key, v)
		}
	}
	b.WriteString(nested.String())
	return b.String(), nil
}
