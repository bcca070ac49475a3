package dshlog

import "unicode/utf8"

// MaxLabelBytes caps a title and a display title (descriptor label) as the
// index keeps them: at most this many bytes of UTF-8. A longer one keeps its
// longest prefix that ends on a rune boundary and, with the ellipsis "…"
// appended, fits in MaxLabelBytes. Everything that shows or matches a
// session's title — candidates, completion, hover, queries, and mentions
// built from candidates — sees the capped text, so one hostile title cannot
// make every answer megabytes long. dsh's own titles are a line of text.
const MaxLabelBytes = 1024

// labelEllipsis marks a capped label.
const labelEllipsis = "…"

// CapLabel applies MaxLabelBytes to s.
func CapLabel(s string) string {
	if len(s) <= MaxLabelBytes {
		return s
	}
	cut := MaxLabelBytes - len(labelEllipsis)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + labelEllipsis
}
