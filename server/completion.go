package server

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/dsh-refls/dsh-refls/completion"
	"github.com/dsh-refls/dsh-refls/sessionref"
)

// sortTextWidth zero-pads ranks so "00010" sorts after "00002".
const sortTextWidth = 5

// Kinds of completion payload in an item's data.
const (
	dataKindSession = "session"
	dataKindFile    = "file"
)

// completionData is the typed payload of an item, read back by resolve.
type completionData struct {
	Kind      string `json:"kind"`
	SessionID string `json:"sessionId,omitempty"`
	Path      string `json:"path,omitempty"`
}

// completionRequest is a completion with the document text it refers to,
// captured when the request arrived.
type completionRequest struct {
	doc document
	pos Position
}

func (s *Server) completionCall(params json.RawMessage) (call, error) {
	var p textDocumentPositionParams
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, invalidParams("textDocument/completion", err)
	}
	doc, ok := s.docs.get(p.TextDocument.URI)
	if !ok {
		return nil, invalidParams("textDocument/completion", fmt.Errorf("document %s is not open", p.TextDocument.URI))
	}
	req := completionRequest{doc: doc, pos: p.Position}
	return func(ctx context.Context) (any, error) { return s.complete(ctx, req) }, nil
}

// complete builds the one list of sessions and files for the `@` token at
// the cursor.
func (s *Server) complete(ctx context.Context, req completionRequest) (*completionList, error) {
	caps := s.clientCaps()
	cfg := s.config()
	list := &completionList{Items: []completionItem{}}
	m := NewMapper(req.doc.Text, caps.encoding)
	if req.pos.Line >= m.LineCount() {
		return list, nil
	}
	line, lineStart := m.Line(req.pos.Line)
	cursor := ColumnToByte(line, req.pos.Character, caps.encoding)
	tok, ok := completion.At(line, cursor)
	if !ok {
		return list, nil
	}
	insertRange := m.Range(lineStart+tok.Start, lineStart+tok.Cursor)
	replaceRange := m.Range(lineStart+tok.Start, lineStart+tok.End)
	// Clients filter on the text inside the edit range; the replace range
	// covers the whole token, and the insert range its start up to the
	// cursor, a prefix of it. filterText starts with the whole token so it
	// starts with both.
	covered := line[tok.Start:tok.End]
	edit := func(newText string) any {
		if caps.insertReplace {
			return insertReplaceEdit{NewText: newText, Insert: insertRange, Replace: replaceRange}
		}
		return textEdit{Range: replaceRange, NewText: newText}
	}
	rank := 0
	nextSort := func() string {
		rank++
		return fmt.Sprintf("%0*d", sortTextWidth, rank)
	}

	if sess := s.currentSessions(); sess != nil && !tok.Quoted && !strings.Contains(tok.Query, "/") {
		cands, capped, err := sess.Candidates(sessionref.CandidateQuery{
			Query: tok.Query, TargetID: cfg.SessionID, TargetCwd: cfg.Cwd, Limit: cfg.CandidateLimit,
		})
		if err != nil {
			return nil, err
		}
		// Incomplete while the first build (or a rescan) runs: asking again
		// later gives more.
		list.IsIncomplete = list.IsIncomplete || capped || !sessionsReady(sess) || sess.Status().Building
		now := s.now()
		for _, c := range cands {
			data, _ := json.Marshal(completionData{Kind: dataKindSession, SessionID: c.SessionID})
			item := completionItem{
				Label:      c.DisplayTitle,
				Kind:       completionKindReference,
				SortText:   nextSort(),
				FilterText: covered + " " + c.DisplayTitle + " " + c.SessionID,
				TextEdit:   edit(c.Mention),
				Data:       data,
			}
			where, age := "", humanAge(now, c.CreatedAt)
			if c.Cwd != nil {
				where = path.Base(*c.Cwd)
			}
			if caps.labelDetails {
				item.LabelDetails = &labelDetails{Description: age}
				if where != "" {
					item.LabelDetails.Detail = " " + where
				}
			} else {
				item.Detail = strings.TrimPrefix(where+" · "+age, " · ")
			}
			list.Items = append(list.Items, item)
		}
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if fh := s.files.Load(); fh != nil {
		cands, capped, err := fh.f.Search(ctx, tok.Query, cfg.FileMaxResults)
		if err != nil {
			return nil, fmt.Errorf("searching workspace files for %q: %w", tok.Query, err)
		}
		list.IsIncomplete = list.IsIncomplete || capped || fh.building
		for _, f := range cands {
			if !completion.Offerable(f.Path) {
				continue
			}
			kind, ckind := completion.KindFile, completionKindFile
			label := f.Path
			if f.Kind == FileKindDirectory {
				kind, ckind = completion.KindDirectory, completionKindFolder
				label = strings.TrimSuffix(f.Path, "/") + "/"
			}
			data, _ := json.Marshal(completionData{Kind: dataKindFile, Path: f.Path})
			item := completionItem{
				Label:      label,
				Kind:       ckind,
				SortText:   nextSort(),
				FilterText: covered + " " + label,
				TextEdit:   edit(completion.InsertFile(f.Path, kind, tok.Quoted)),
				Data:       data,
			}
			if f.Ignored {
				item.Detail = "ignored"
			}
			list.Items = append(list.Items, item)
		}
	}
	return list, nil
}

// humanAge says how long ago createdAt (ms) was.
func humanAge(now time.Time, createdAtMs int64) string {
	d := now.Sub(time.UnixMilli(createdAtMs))
	switch {
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return fmt.Sprintf("%dm ago", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh ago", int(d.Hours()))
	default:
		return fmt.Sprintf("%dd ago", int(d.Hours()/24))
	}
}

func (s *Server) resolveCall(params json.RawMessage) (call, error) {
	var item map[string]json.RawMessage
	if err := json.Unmarshal(params, &item); err != nil {
		return nil, invalidParams("completionItem/resolve", err)
	}
	return func(ctx context.Context) (any, error) { return s.resolve(ctx, item) }, nil
}

// resolve adds documentation to an item: the preview of a session, or the
// facts of a file. Everything else in the item comes back unchanged.
func (s *Server) resolve(ctx context.Context, item map[string]json.RawMessage) (any, error) {
	var data completionData
	if raw, ok := item["data"]; ok {
		if err := json.Unmarshal(raw, &data); err != nil {
			return item, nil
		}
	}
	markdown := s.clientCaps().completionMarkdown
	var doc string
	switch data.Kind {
	case dataKindSession:
		sess, err := s.readySessions(ctx)
		if err != nil {
			return nil, err
		}
		if sess == nil {
			return item, nil
		}
		doc = s.sessionPreviewText(ctx, sess, data.SessionID, markdown)
	case dataKindFile:
		doc = s.fileFactsText(data.Path, markdown)
	default:
		return item, nil
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	kind := "plaintext"
	if markdown {
		kind = "markdown"
	}
	raw, err := json.Marshal(markupContent{Kind: kind, Value: doc})
	if err != nil {
		return nil, fmt.Errorf("encoding documentation: %w", err)
	}
	item["documentation"] = raw
	return item, nil
}
