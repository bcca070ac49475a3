package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"

	"go.lsp.dev/protocol"

	"github.com/dsh-refls/dsh-refls/sessionref"
	"github.com/dsh-refls/dsh-refls/sessionref/titles"
)

// MethodPreview answers the recall preview of one session as a Markdown
// document: what go to definition on a mention and a document link open.
const MethodPreview = "dsh/preview"

// PreviewScheme is the URI scheme of the read-only documents the editor
// extensions serve (a session's preview, a prepared message, the status).
// The server never diagnoses documents of this scheme.
const PreviewScheme = "dsh-refls"

// previewPathPrefix starts the path of a session preview URI:
// dsh-refls:/session/<mention payload>/<title>.md.
const previewPathPrefix = "/session/"

// location is an LSP Location.
type location struct {
	URI   string `json:"uri"`
	Range Range  `json:"range"`
}

// documentLink is an LSP DocumentLink.
type documentLink struct {
	Range   Range  `json:"range"`
	Target  string `json:"target"`
	Tooltip string `json:"tooltip,omitempty"`
}

// previewParams are the params of dsh/preview: a session id, or a URI
// naming it (a dsh-session: mention URI or a dsh-refls: preview URI).
type previewParams struct {
	SessionID string `json:"sessionId"`
	URI       string `json:"uri"`
	// Seq opens the preview at the message of that event (a search hit's
	// seq; a preview URI may name it instead), Query selects its first
	// hit there (preview_hit.go).
	Seq   *int64 `json:"seq"`
	Query string `json:"query"`
}

// PreviewResult is the answer of dsh/preview.
type PreviewResult struct {
	SessionID string `json:"sessionId"`
	Title     string `json:"title"`
	// Markdown is the preview: the hover text of the session, then the
	// message asked for, if one was.
	Markdown string `json:"markdown"`
	// With a message asked for: the URI of this view, the range of the
	// message's section in Markdown and the range to select (the first
	// hit of the query, else the start of the message), in the client's
	// position encoding (preview_hit.go).
	URI            string `json:"uri,omitempty"`
	Range          *Range `json:"range,omitempty"`
	SelectionRange *Range `json:"selectionRange,omitempty"`
}

// PreviewURI is the dsh-refls: URI of the preview of session id titled
// title: the mention payload names the session, the title names the tab.
func PreviewURI(id, title string) string {
	payload := strings.TrimPrefix(sessionref.EncodeURI(id), sessionref.URIScheme)
	name := strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || r < ' ' || r == 0x7f {
			return '-'
		}
		return r
	}, title)
	if name == "" {
		name = "session"
	}
	u := url.URL{Scheme: PreviewScheme, Path: previewPathPrefix + payload + "/" + name + ".md", OmitHost: true}
	return u.String()
}

// sessionOfURI is the session id a dsh-session: or dsh-refls: preview URI
// names.
func sessionOfURI(raw string) (string, error) {
	if strings.HasPrefix(raw, sessionref.URIScheme) {
		return sessionref.DecodeURI(raw)
	}
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != PreviewScheme || !strings.HasPrefix(u.Path, previewPathPrefix) {
		return "", sessionref.Errorf(sessionref.CodeInvalidReference, "%q names no session preview", raw)
	}
	payload, _, _ := strings.Cut(strings.TrimPrefix(u.Path, previewPathPrefix), "/")
	return sessionref.DecodeURI(sessionref.URIScheme + payload)
}

func (s *Server) definitionCall(params json.RawMessage) (call, error) {
	var p textDocumentPositionParams
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, invalidParams(protocol.MethodTextDocumentDefinition, err)
	}
	doc, ok := s.docs.get(p.TextDocument.URI)
	if !ok {
		return nil, invalidParams(protocol.MethodTextDocumentDefinition, fmt.Errorf("document %s is not open", p.TextDocument.URI))
	}
	return func(context.Context) (any, error) { return s.definition(doc, p.Position), nil }, nil
}

// definition is the preview of the session mentioned under the cursor, or
// null when the cursor is on no well-formed session mention.
func (s *Server) definition(doc document, pos Position) []location {
	sess := s.currentSessions()
	if sess == nil {
		return nil
	}
	m := NewMapper(doc.Text, s.clientCaps().encoding)
	offset, err := m.Offset(pos)
	if err != nil {
		return nil
	}
	for _, men := range sessionref.FindMentions(doc.Text) {
		if men.Err != nil || offset < men.Start || offset >= men.End {
			continue
		}
		return []location{{URI: PreviewURI(men.SessionID, previewTitle(sess.Snapshot(), men.SessionID, men.Label)), Range: Range{}}}
	}
	return nil
}

// previewTitle names a session's preview: its display title when indexed,
// else the label the mention gives it.
func previewTitle(snap *titles.Snapshot, id, label string) string {
	if e, ok := snap.Locate(id); ok {
		return e.DisplayTitle()
	}
	return label
}

func (s *Server) documentLinkCall(params json.RawMessage) (call, error) {
	var p struct {
		TextDocument textDocumentIdentifier `json:"textDocument"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, invalidParams(protocol.MethodTextDocumentDocumentLink, err)
	}
	doc, ok := s.docs.get(p.TextDocument.URI)
	if !ok {
		return nil, invalidParams(protocol.MethodTextDocumentDocumentLink, fmt.Errorf("document %s is not open", p.TextDocument.URI))
	}
	return func(context.Context) (any, error) { return s.documentLinks(doc), nil }, nil
}

// documentLinks links every well-formed session mention to its preview, so
// that following the link (Ctrl+click) opens it, and file mentions to their
// files (document_link.go).
func (s *Server) documentLinks(doc document) []documentLink {
	m := NewMapper(doc.Text, s.clientCaps().encoding)
	out := s.fileLinks(doc, m)
	sess := s.currentSessions()
	if sess == nil {
		return out
	}
	snap := sess.Snapshot()
	for _, men := range sessionref.FindMentions(doc.Text) {
		if men.Err != nil {
			continue
		}
		out = append(out, documentLink{
			Range:   m.Range(men.Start, men.End),
			Target:  PreviewURI(men.SessionID, previewTitle(snap, men.SessionID, men.Label)),
			Tooltip: "Open what this mention would recall",
		})
	}
	return out
}

func (s *Server) previewCall(params json.RawMessage) (call, error) {
	var p previewParams
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, invalidParams(MethodPreview, err)
	}
	return func(ctx context.Context) (any, error) {
		id := p.SessionID
		if id == "" {
			var err error
			if id, err = sessionOfURI(p.URI); err != nil {
				return nil, err
			}
		}
		msg, err := previewMessageOf(p)
		if err != nil {
			return nil, err
		}
		snap, err := s.readySnapshot(ctx)
		if err != nil {
			return nil, err
		}
		if snap == nil {
			return nil, sessionref.Errorf(sessionref.CodeReadFailed, "no session index is open")
		}
		title := id
		if e, ok := snap.Locate(id); ok {
			title = e.DisplayTitle()
		}
		d, err := s.renderPreview(ctx, snap, id, msg)
		if err != nil {
			return nil, err
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return s.previewResult(id, title, msg, d), nil
	}, nil
}

// diagnosable reports whether documents at uri get diagnostics: files and
// unsaved buffers, not the read-only views of the dsh-refls: scheme or
// any other scheme an editor shows (git, output, diff views).
func diagnosable(uri string) bool {
	scheme, _, ok := strings.Cut(uri, ":")
	if !ok || len(scheme) == 1 {
		return true // a bare path (C:\x) from a lax client
	}
	switch strings.ToLower(scheme) {
	case "file", "untitled":
		return true
	}
	return false
}
