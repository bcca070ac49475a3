package server

import (
	"bytes"
	"fmt"
	"slices"
	"unicode/utf8"
)

// editBuffer applies the incremental edits of one didChange to a single
// byte buffer. Each edit is spliced in place, and its positions are found
// by walking lines from the previous edit instead of re-indexing the whole
// text, so 2,000 edits to a 1 MB document cost 2,000 moves of the text
// after each edit and one copy in and out, not 2,000 copies and line
// indexes of the document.
type editBuffer struct {
	buf []byte
	enc PositionEncoding
	// line and lineStart are a line of buf and its start offset: where
	// finding the next position begins.
	line, lineStart int
}

func newEditBuffer(text string, enc PositionEncoding) *editBuffer {
	return &editBuffer{buf: []byte(text), enc: enc}
}

// reset replaces the whole text.
func (b *editBuffer) reset(text string) {
	b.buf = append(b.buf[:0], text...)
	b.line, b.lineStart = 0, 0
}

// seekLine moves the line cursor to line n.
func (b *editBuffer) seekLine(n int) error {
	for b.line < n {
		i := bytes.IndexByte(b.buf[b.lineStart:], '\n')
		if i < 0 {
			return fmt.Errorf("line %d is past the last line %d", n, b.line)
		}
		b.lineStart += i + 1
		b.line++
	}
	for b.line > n {
		b.lineStart = bytes.LastIndexByte(b.buf[:b.lineStart-1], '\n') + 1
		b.line--
	}
	return nil
}

// offset converts p to a byte offset of buf, with Mapper.Offset's rules:
// a character past the end of its line is clamped to the line end, one
// inside a character moves back to its start, a line past the end is an
// error.
func (b *editBuffer) offset(p Position) (int, error) {
	if p.Line < 0 || p.Character < 0 {
		return 0, fmt.Errorf("negative position %d:%d", p.Line, p.Character)
	}
	if err := b.seekLine(p.Line); err != nil {
		return 0, err
	}
	line := b.buf[b.lineStart:]
	if i := bytes.IndexByte(line, '\n'); i >= 0 {
		line = bytes.TrimSuffix(line[:i], []byte("\r"))
	}
	// A column of n units spans at most 3n+4 bytes (a BMP character is one
	// UTF-16 unit in up to 3 bytes, a surrogate pair 4): convert only that.
	line = line[:min(len(line), 3*p.Character+utf8.UTFMax)]
	return b.lineStart + ColumnToByte(string(line), p.Character, b.enc), nil
}

// apply replaces the span r with text.
func (b *editBuffer) apply(r Range, text string) error {
	start, err := b.offset(r.Start)
	if err != nil {
		return fmt.Errorf("start: %w", err)
	}
	line, lineStart := b.line, b.lineStart
	end, err := b.offset(r.End)
	if err != nil {
		return fmt.Errorf("end: %w", err)
	}
	if end < start {
		return fmt.Errorf("end before start")
	}
	b.buf = slices.Replace(b.buf, start, end, []byte(text)...)
	// The lines before the edit did not move.
	b.line, b.lineStart = line, lineStart
	return nil
}
