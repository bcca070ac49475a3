package server

import (
	"fmt"
	"strings"
	"unicode/utf16"
)

// PositionEncoding says how the character offsets of LSP positions count:
// UTF-16 code units (the protocol default) or UTF-8 bytes.
type PositionEncoding string

// The two encodings the server speaks (§4.1).
const (
	EncodingUTF16 PositionEncoding = "utf-16"
	EncodingUTF8  PositionEncoding = "utf-8"
)

// Position is a zero-based line and character offset in the negotiated
// encoding.
type Position struct {
	Line      int `json:"line"`
	Character int `json:"character"`
}

// Range is a half-open span between two positions.
type Range struct {
	Start Position `json:"start"`
	End   Position `json:"end"`
}

// Mapper converts between byte offsets in a document's UTF-8 text and LSP
// positions. It is the one place columns are converted: everything else in
// the server works in byte offsets.
type Mapper struct {
	text       string
	enc        PositionEncoding
	lineStarts []int
}

// NewMapper indexes the line starts of text. Lines end at "\n"; a "\r"
// before it belongs to the line terminator.
func NewMapper(text string, enc PositionEncoding) *Mapper {
	starts := []int{0}
	for i := 0; i < len(text); i++ {
		if text[i] == '\n' {
			starts = append(starts, i+1)
		}
	}
	return &Mapper{text: text, enc: enc, lineStarts: starts}
}

// LineCount is the number of lines, counting an empty last line.
func (m *Mapper) LineCount() int { return len(m.lineStarts) }

// Line returns the content of line n without its terminator and the byte
// offset where it starts.
func (m *Mapper) Line(n int) (string, int) {
	if n < 0 || n >= len(m.lineStarts) {
		return "", len(m.text)
	}
	start := m.lineStarts[n]
	if n+1 == len(m.lineStarts) {
		return m.text[start:], start
	}
	return strings.TrimSuffix(m.text[start:m.lineStarts[n+1]-1], "\r"), start
}

// Offset converts p to a byte offset. A character past the end of its line
// is clamped to the line end (clients do send those), and one that falls
// inside a character (the middle of a surrogate pair or a UTF-8 sequence) is
// moved back to that character's start. A line past the end is an error.
func (m *Mapper) Offset(p Position) (int, error) {
	if p.Line < 0 || p.Character < 0 {
		return 0, fmt.Errorf("negative position %d:%d", p.Line, p.Character)
	}
	if p.Line >= len(m.lineStarts) {
		return 0, fmt.Errorf("line %d is past the last line %d", p.Line, len(m.lineStarts)-1)
	}
	line, start := m.Line(p.Line)
	return start + ColumnToByte(line, p.Character, m.enc), nil
}

// Position converts a byte offset to a position; offsets past the end are
// clamped to the end of the text.
func (m *Mapper) Position(offset int) Position {
	if offset < 0 {
		offset = 0
	}
	if offset > len(m.text) {
		offset = len(m.text)
	}
	// Binary search for the last line start <= offset.
	lo, hi := 0, len(m.lineStarts)-1
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if m.lineStarts[mid] <= offset {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	line, start := m.Line(lo)
	col := offset - start
	if col > len(line) {
		col = len(line)
	}
	return Position{Line: lo, Character: ByteToColumn(line, col, m.enc)}
}

// Range converts a byte span to a range.
func (m *Mapper) Range(start, end int) Range {
	return Range{Start: m.Position(start), End: m.Position(end)}
}

// ColumnToByte converts a column in enc units to a byte offset into line,
// clamping to the line end and backing off to the start of a split
// character.
func ColumnToByte(line string, col int, enc PositionEncoding) int {
	if enc == EncodingUTF8 {
		if col >= len(line) {
			return len(line)
		}
		start := 0
		for i := range line {
			if i > col {
				break
			}
			start = i
		}
		return start
	}
	units := 0
	for i, r := range line {
		w := utf16Len(r)
		if units+w > col {
			return i
		}
		units += w
	}
	return len(line)
}

// ByteToColumn converts a byte offset into line to a column in enc units.
func ByteToColumn(line string, offset int, enc PositionEncoding) int {
	if offset > len(line) {
		offset = len(line)
	}
	if enc == EncodingUTF8 {
		return offset
	}
	units := 0
	for _, r := range line[:offset] {
		units += utf16Len(r)
	}
	return units
}

// utf16Len is the number of UTF-16 code units of r; invalid bytes decode
// to U+FFFD, one unit, as editors show them.
func utf16Len(r rune) int {
	if n := utf16.RuneLen(r); n > 0 {
		return n
	}
	return 1
}
