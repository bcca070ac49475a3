package server

import (
	"fmt"
	"sync"

	"github.com/dsh-refls/dsh-refls/server/internal/lspwire"
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

// Bounds on what a client can make the server hold as open documents
// (issue 15 item 2): one document is at most the largest frame, and all
// of them together at most maxOpenDocumentBytes. A document that would
// pass either is not kept (its open or change fails, which is logged):
// requests about it answer as for a document that is not open.
const (
	maxDocumentBytes     = lspwire.MaxMessageBytes
	maxOpenDocumentBytes = 128 << 20
)

// documents holds the open documents. Notifications that change them are
// handled in wire order on the connection's read loop; requests take a
// snapshot when they arrive, so each answers from the version it refers to.
type documents struct {
	// mu guards byURI and total.
	mu    sync.Mutex
	byURI map[string]document
	// total is the bytes of text of all open documents.
	total int
}

func newDocuments() *documents {
	return &documents{byURI: map[string]document{}}
}

// open starts tracking doc, unless that would pass a bound: then the
// document (any earlier version too) is not tracked.
func (d *documents) open(doc document) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.store(doc)
}

// store replaces the document at doc.URI, within the bounds. d.mu is held.
func (d *documents) store(doc document) error {
	old := len(d.byURI[doc.URI].Text)
	total := d.total - old + len(doc.Text)
	switch {
	case len(doc.Text) > maxDocumentBytes:
		d.forget(doc.URI)
		return fmt.Errorf("document %s of %d bytes is larger than the %d-byte bound and is not tracked", doc.URI, len(doc.Text), maxDocumentBytes)
	case total > maxOpenDocumentBytes:
		d.forget(doc.URI)
		return fmt.Errorf("document %s of %d bytes would bring open documents to %d bytes, more than the %d-byte bound; it is not tracked", doc.URI, len(doc.Text), total, maxOpenDocumentBytes)
	}
	d.byURI[doc.URI] = doc
	d.total = total
	return nil
}

// forget stops tracking uri. d.mu is held.
func (d *documents) forget(uri string) {
	d.total -= len(d.byURI[uri].Text)
	delete(d.byURI, uri)
}

func (d *documents) close(uri string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.forget(uri)
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
	if err := d.store(doc); err != nil {
		return document{}, err
	}
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
