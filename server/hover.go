package server

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"go.lsp.dev/protocol"

	"github.com/dsh-refls/dsh-refls/fileref"
	"github.com/dsh-refls/dsh-refls/server/internal/render"
	"github.com/dsh-refls/dsh-refls/sessionref"
	"github.com/dsh-refls/dsh-refls/sessionref/prepare"
	"github.com/dsh-refls/dsh-refls/sessionref/titles"
)

func (s *Server) hoverCall(params json.RawMessage) (call, error) {
	var p textDocumentPositionParams
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, invalidParams(protocol.MethodTextDocumentHover, err)
	}
	doc, ok := s.docs.get(p.TextDocument.URI)
	if !ok {
		return nil, invalidParams(protocol.MethodTextDocumentHover, fmt.Errorf("document %s is not open", p.TextDocument.URI))
	}
	return func(ctx context.Context) (any, error) { return s.hover(ctx, doc, p.Position) }, nil
}

// hover describes the session or file mention under the cursor; nil when
// there is none.
func (s *Server) hover(ctx context.Context, doc document, pos Position) (*hoverResult, error) {
	caps := s.clientCaps()
	m := NewMapper(doc.Text, caps.encoding)
	offset, err := m.Offset(pos)
	if err != nil {
		return nil, nil
	}
	kind := "plaintext"
	if caps.hoverMarkdown {
		kind = "markdown"
	}
	if s.currentSessions() != nil {
		for _, men := range sessionref.FindMentions(doc.Text) {
			if offset < men.Start || offset >= men.End {
				continue
			}
			var text string
			if men.Err != nil {
				text = "Malformed session reference: " + render.ErrorText(men.Err)
			} else {
				// The recall facts need the index: wait for its first build.
				snap, err := s.readySnapshot(ctx)
				if err != nil {
					return nil, err
				}
				text = s.sessionPreviewText(ctx, snap, men.SessionID, caps.hoverMarkdown)
			}
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return &hoverResult{Contents: markupContent{Kind: kind, Value: text}, Range: m.Range(men.Start, men.End)}, nil
		}
	}
	for _, fm := range fileMentionsIn(doc.Text, m) {
		if offset < fm.Start || offset >= fm.End {
			continue
		}
		text := s.fileMentionText(ctx, fm.Mention, caps.hoverMarkdown)
		return &hoverResult{Contents: markupContent{Kind: kind, Value: text}, Range: m.Range(fm.Start, fm.End)}, nil
	}
	return nil, nil
}

// sessionPreviewText renders the preview of one session for a person
// (render.Session), all from one snapshot of the index.
func (s *Server) sessionPreviewText(ctx context.Context, snap *titles.Snapshot, id string, markdown bool) string {
	entry, ok := snap.Locate(id)
	if !ok {
		return render.UnknownSession(id, markdown)
	}
	p, err := prepare.PreviewSession(ctx, snap, id, s.config().Limits())
	return render.Session{Entry: entry, Snapshot: snap, Preview: p, PreviewErr: err, Now: s.now()}.Text(markdown)
}

// fileFactsText describes a mentioned workspace path: kind, size and
// modification time (for a directory, what is below it), or why there is
// none.
func (s *Server) fileFactsText(ctx context.Context, rel string, markdown bool) string {
	name := render.InlineCode(rel, markdown)
	root := s.workspace()
	if root == "" {
		return name + ": outside workspace (no workspace is open)"
	}
	f := fileref.StatMention(root, rel)
	switch {
	case f.OutsideWorkspace:
		return name + ": outside workspace"
	case f.Missing:
		return name + ": missing"
	case f.Kind == fileref.KindDirectory:
		return s.directoryText(ctx, name, rel, markdown)
	}
	return fmt.Sprintf("%s: %s, %d bytes, modified %s", name, f.Kind, f.Size, f.ModTime.UTC().Format(time.RFC3339))
}
