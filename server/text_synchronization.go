package server

import (
	"encoding/json"
	"fmt"
)

// didOpen starts tracking a document and schedules its diagnostics.
func (s *Server) didOpen(params json.RawMessage) error {
	var p didOpenParams
	if err := json.Unmarshal(params, &p); err != nil {
		return fmt.Errorf("decoding didOpen: %w", err)
	}
	doc := document{URI: p.TextDocument.URI, Version: p.TextDocument.Version, Text: p.TextDocument.Text, Typing: -1}
	if err := s.docs.open(doc); err != nil {
		s.diags.forget(doc.URI)
		return err
	}
	s.frecencyOpened(doc.URI)
	s.diags.schedule(doc.URI)
	return nil
}

// didChange applies a document's content changes and schedules its
// diagnostics.
func (s *Server) didChange(params json.RawMessage) error {
	var p didChangeParams
	if err := json.Unmarshal(params, &p); err != nil {
		return fmt.Errorf("decoding didChange: %w", err)
	}
	uri := p.TextDocument.URI
	// The text before, when frecency looks at what this change inserts.
	prev, watched := "", s.frecencyWatches(uri)
	if watched {
		if d, ok := s.docs.get(uri); ok {
			prev = d.Text
		}
	}
	next, err := s.docs.change(uri, p.TextDocument.Version, p.ContentChanges, s.clientCaps().encoding)
	if err != nil {
		if _, open := s.docs.get(p.TextDocument.URI); !open {
			s.diags.forget(p.TextDocument.URI) // dropped for a bound
		}
		return err
	}
	if watched {
		s.frecencyChanged(uri, prev, next.Text)
	}
	s.diags.schedule(p.TextDocument.URI)
	return nil
}

// didClose stops tracking a document and forgets its diagnostics.
func (s *Server) didClose(params json.RawMessage) error {
	var p didCloseParams
	if err := json.Unmarshal(params, &p); err != nil {
		return fmt.Errorf("decoding didClose: %w", err)
	}
	last, wasOpen := s.docs.get(p.TextDocument.URI)
	s.docs.close(p.TextDocument.URI)
	if wasOpen {
		s.frecencyClosed(p.TextDocument.URI, last.Text)
	}
	s.diags.forget(p.TextDocument.URI)
	return nil
}
