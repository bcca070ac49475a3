package server

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/dsh-refls/dsh-refls/completion"
	"github.com/dsh-refls/dsh-refls/fileref"
)

// rangeItems offers line ranges after `#` of a complete file mention
// (`@a.go#`, `@a.go#L3`): the typed start line (or line 1), that line to
// the end of the file, and the last line. Only files inside the workspace
// whose lines can be counted get items.
func (s *Server) rangeItems(line string, lineStart, cursor int, rt completion.RangeToken, m *Mapper, insertReplace bool) []completionItem {
	root := s.workspace()
	if root == "" {
		return nil
	}
	if f := fileref.StatMention(root, rt.Mention.Path); f.Kind != fileref.KindFile || f.Missing || f.OutsideWorkspace {
		return nil
	}
	lines, err := readLines(root, rt.Mention.Path, completion.LineRange{}, false)
	if err != nil || !lines.Known || lines.Count == 0 {
		return nil
	}
	n := lines.Count
	start := 1
	typed := line[rt.Hash+1 : cursor]
	if a, _, _ := strings.Cut(strings.TrimPrefix(typed, "L"), "-"); a != "" {
		if v, err := strconv.Atoi(a); err == nil && v >= 1 && v <= n {
			start = v
		}
	}
	type offer struct {
		r      completion.LineRange
		detail string
	}
	offers := []offer{{completion.LineRange{Start: start, End: start}, fmt.Sprintf("line %d of %d", start, n)}}
	if n > start {
		offers = append(offers, offer{completion.LineRange{Start: start, End: n}, fmt.Sprintf("lines %d–%d, to the end", start, n)})
		if start == 1 {
			offers = append(offers, offer{completion.LineRange{Start: n, End: n}, fmt.Sprintf("the last line, %d", n)})
		}
	}
	insertRange := m.Range(lineStart+rt.Hash+1, lineStart+cursor)
	replaceRange := m.Range(lineStart+rt.Hash+1, lineStart+rt.End)
	items := make([]completionItem, 0, len(offers))
	for i, o := range offers {
		label := o.r.String()
		item := completionItem{
			Label:      label,
			Kind:       completionKindReference,
			Detail:     o.detail,
			SortText:   fmt.Sprintf("%0*d", sortTextWidth, i+1),
			FilterText: label,
		}
		if insertReplace {
			item.TextEdit = insertReplaceEdit{NewText: label, Insert: insertRange, Replace: replaceRange}
		} else {
			item.TextEdit = textEdit{Range: replaceRange, NewText: label}
		}
		items = append(items, item)
	}
	return items
}
