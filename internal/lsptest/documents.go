package lsptest

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Cursor marks a position in the text given to OpenFile, SetText and
// Marked; it is removed before the text is sent.
const Cursor = "‸"

// Encoding is a position encoding of LSP 3.17 (the unit of Character).
type Encoding string

// The encodings the editor can count in.
const (
	UTF16 Encoding = "utf-16"
	UTF8  Encoding = "utf-8"
)

// Position is an LSP position; Character counts units of the encoding the
// editor negotiated (UTF16 until Initialize says otherwise).
type Position struct {
	Line      int `json:"line"`
	Character int `json:"character"`
}

// Range is an LSP range.
type Range struct {
	Start Position `json:"start"`
	End   Position `json:"end"`
}

// document is an open document as the editor holds it.
type document struct {
	text    string
	version int32
}

// Marked removes the first Cursor from marked and returns the text and
// the cursor's position counted in enc (the zero Position when there is no
// marker). It is computed here, independently of the server's own mapping.
func Marked(marked string, enc Encoding) (string, Position) {
	i := strings.Index(marked, Cursor)
	if i < 0 {
		return marked, Position{}
	}
	return marked[:i] + marked[i+len(Cursor):], OffsetPosition(marked, i, enc)
}

// OffsetPosition is the position of byte offset off of text in enc.
func OffsetPosition(text string, off int, enc Encoding) Position {
	before := text[:off]
	line := strings.Count(before, "\n")
	prefix := before[strings.LastIndex(before, "\n")+1:]
	return Position{Line: line, Character: Units(prefix, enc)}
}

// Units is the length of s in enc's code units.
func Units(s string, enc Encoding) int {
	if enc == UTF8 {
		return len(s)
	}
	return len(utf16.Encode([]rune(s)))
}

// positionOffset is the byte offset of p in text, or an error when p is
// beyond the text or inside a character.
func positionOffset(text string, p Position, enc Encoding) (int, error) {
	off := 0
	for line := 0; line < p.Line; line++ {
		nl := strings.IndexByte(text[off:], '\n')
		if nl < 0 {
			return 0, fmt.Errorf("line %d is beyond the %d lines of the text", p.Line, line+1)
		}
		off += nl + 1
	}
	end := len(text)
	if nl := strings.IndexByte(text[off:], '\n'); nl >= 0 {
		end = off + nl
	}
	units := 0
	for i := off; ; {
		if units == p.Character {
			return i, nil
		}
		if i >= end || units > p.Character {
			return 0, fmt.Errorf("character %d is not a boundary of line %d", p.Character, p.Line)
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		if enc == UTF8 {
			units += size
		} else {
			units += len(utf16.Encode([]rune{r}))
		}
		i += size
	}
}

// Encoding is the position encoding the editor counts in.
func (e *Editor) Encoding() Encoding {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.encoding
}

func (e *Editor) languageID() string {
	if e.cfg.LanguageID != "" {
		return e.cfg.LanguageID
	}
	return "markdown"
}

// OpenFile opens uri with marked's text at version 1 and returns the
// cursor's position in the editor's encoding.
func (e *Editor) OpenFile(ctx context.Context, uri, marked string) (Position, error) {
	text, pos := Marked(marked, e.Encoding())
	e.mu.Lock()
	e.docs[uri] = &document{text: text, version: 1}
	e.mu.Unlock()
	err := e.Notify(ctx, "textDocument/didOpen", map[string]any{"textDocument": map[string]any{
		"uri": uri, "languageId": e.languageID(), "version": 1, "text": text}})
	return pos, err
}

// SetText replaces the whole text of the open document uri with marked's
// text at the next version and returns the cursor's position.
func (e *Editor) SetText(ctx context.Context, uri, marked string) (Position, error) {
	text, pos := Marked(marked, e.Encoding())
	e.mu.Lock()
	d, ok := e.docs[uri]
	if !ok {
		e.mu.Unlock()
		return Position{}, fmt.Errorf("%s is not open", uri)
	}
	d.text = text
	d.version++
	v := d.version
	e.mu.Unlock()
	err := e.Notify(ctx, "textDocument/didChange", map[string]any{
		"textDocument":   map[string]any{"uri": uri, "version": v},
		"contentChanges": []any{map[string]any{"text": text}}})
	return pos, err
}

// Edit is one incremental change: Range's text becomes Text.
type Edit struct {
	Range Range  `json:"range"`
	Text  string `json:"text"`
}

// EditFile applies edits, in order, to the open document uri, locally and
// in one didChange at the next version.
func (e *Editor) EditFile(ctx context.Context, uri string, edits ...Edit) error {
	e.mu.Lock()
	d, ok := e.docs[uri]
	if !ok {
		e.mu.Unlock()
		return fmt.Errorf("%s is not open", uri)
	}
	text := d.text
	changes := make([]any, len(edits))
	for i, ed := range edits {
		start, err := positionOffset(text, ed.Range.Start, e.encoding)
		if err == nil {
			var end int
			end, err = positionOffset(text, ed.Range.End, e.encoding)
			if err == nil && end < start {
				err = fmt.Errorf("range ends before it starts")
			}
			if err == nil {
				text = text[:start] + ed.Text + text[end:]
			}
		}
		if err != nil {
			e.mu.Unlock()
			return fmt.Errorf("edit %d of %s: %w", i, uri, err)
		}
		changes[i] = ed
	}
	d.text = text
	d.version++
	v := d.version
	e.mu.Unlock()
	return e.Notify(ctx, "textDocument/didChange", map[string]any{
		"textDocument":   map[string]any{"uri": uri, "version": v},
		"contentChanges": changes})
}

// CloseFile closes the open document uri.
func (e *Editor) CloseFile(ctx context.Context, uri string) error {
	e.mu.Lock()
	delete(e.docs, uri)
	e.mu.Unlock()
	return e.Notify(ctx, "textDocument/didClose", map[string]any{"textDocument": map[string]any{"uri": uri}})
}

// Text returns the editor's text of the open document uri and its version.
func (e *Editor) Text(uri string) (string, int32, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	d, ok := e.docs[uri]
	if !ok {
		return "", 0, false
	}
	return d.text, d.version, true
}
