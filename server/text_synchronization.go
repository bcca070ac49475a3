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
	if _, err := s.docs.change(p.TextDocument.URI, p.TextDocument.Version, p.ContentChanges, s.clientCaps().encoding); err != nil {
		if _, open := s.docs.get(p.TextDocument.URI); !open {
			s.diags.forget(p.TextDocument.URI) // dropped for a bound
		}
		return err
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
	s.docs.close(p.TextDocument.URI)
	s.diags.forget(p.TextDocument.URI)
	return nil
}
