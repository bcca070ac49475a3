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
	for i, c := range changes {
		if c.Range == nil {
			text = c.Text
			continue
		}
		m := NewMapper(text, enc)
		start, err := m.Offset(c.Range.Start)
		if err != nil {
			return document{}, fmt.Errorf("change %d to %s: start: %w", i, uri, err)
		}
		end, err := m.Offset(c.Range.End)
		if err != nil {
			return document{}, fmt.Errorf("change %d to %s: end: %w", i, uri, err)
		}
		if end < start {
			return document{}, fmt.Errorf("change %d to %s: end before start", i, uri)
		}
		text = text[:start] + c.Text + text[end:]
	}
	doc = document{URI: uri, Version: version, Text: text}
	d.byURI[uri] = doc
	return doc, nil
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
