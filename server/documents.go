package server

import (
	"fmt"
	"sync"
)

// document is an immutable snapshot of one open document.
type document struct {
	URI     string
	Version int32
	Text    string
	// Typing is the byte offset just past the keystroke the last change
	// was (where the cursor of whoever typed it is), or -1 for a document
	// as opened or after a larger change. A mention that holds it is still
	// being typed.
	Typing int
}

// documents holds the open documents. Notifications that change them are
// handled in wire order on the connection's read loop; requests take a
// snapshot when they arrive, so each answers from the version it refers to.
type documents struct {
	// mu guards byURI.
	mu    sync.Mutex
	byURI map[string]document
}

func newDocuments() *documents {
	return &documents{byURI: map[string]document{}}
}

func (d *documents) open(doc document) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.byURI[doc.URI] = doc
}

func (d *documents) close(uri string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.byURI, uri)
}

func (d *documents) get(uri string) (document, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	doc, ok := d.byURI[uri]
	return doc, ok
}

// change applies content changes in order and returns the new snapshot.
func (d *documents) change(uri string, version int32, changes []contentChange, enc PositionEncoding) (document, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	doc, ok := d.byURI[uri]
	if !ok {
		return document{}, fmt.Errorf("change to %s, which is not open", uri)
	}
	text := doc.Text
	var b *editBuffer
	for i, c := range changes {
		switch {
		case c.Range == nil && b == nil:
			text = c.Text
		case c.Range == nil:
			b.reset(c.Text)
		default:
			if b == nil {
				b = newEditBuffer(text, enc)
			}
			if err := b.apply(*c.Range, c.Text); err != nil {
				return document{}, fmt.Errorf("change %d to %s: %w", i, uri, err)
			}
		}
	}
	if b != nil {
		text = string(b.buf)
	}
	doc = document{URI: uri, Version: version, Text: text, Typing: editEnd(doc.Text, text)}
	d.byURI[uri] = doc
	return doc, nil
}

// maxKeystrokeBytes is the most text one keystroke writes or removes: a
// character or an auto-closed pair, in UTF-8. A larger change (a paste, an
// accepted completion, a whole new text) is not typing.
const maxKeystrokeBytes = 8

// editEnd is the offset in next just past the text that differs from prev
// when the difference is a keystroke (typing or deleting a character), or
// -1 when it is larger or there is none.
func editEnd(prev, next string) int {
	p := 0
	for p < len(prev) && p < len(next) && prev[p] == next[p] {
		p++
	}
	s := 0
	for s < len(prev)-p && s < len(next)-p && prev[len(prev)-1-s] == next[len(next)-1-s] {
		s++
	}
	written, removed := len(next)-s-p, len(prev)-s-p
	if written+removed == 0 || written > maxKeystrokeBytes || removed > maxKeystrokeBytes {
		return -1
	}
	return len(next) - s
}

// uris lists the open documents.
func (d *documents) uris() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make([]string, 0, len(d.byURI))
	for u := range d.byURI {
		out = append(out, u)
	}
	return out
}
