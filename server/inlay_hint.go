package server

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"

	"go.lsp.dev/protocol"
	"go.uber.org/zap"

	"github.com/dsh-refls/dsh-refls/server/internal/render"
	"github.com/dsh-refls/dsh-refls/sessionref"
	"github.com/dsh-refls/dsh-refls/sessionref/prepare"
	"github.com/dsh-refls/dsh-refls/sessionref/titles"
)

// maxHintCache bounds the inlay hint cache; it is cleared when full.
const maxHintCache = 256

// inlayHintCache keeps the hint of each session log state, so that hints
// asked for at every edit do not re-read unchanged logs.
type inlayHintCache struct {
	mu     sync.Mutex
	labels map[recallKey]string
	// refreshing is set while a workspace/inlayHint/refresh is in flight.
	refreshing atomic.Bool
}

// inlayHint is an LSP InlayHint.
type inlayHint struct {
	Position    Position `json:"position"`
	Label       string   `json:"label"`
	PaddingLeft bool     `json:"paddingLeft"`
	Tooltip     string   `json:"tooltip,omitempty"`
}

func (s *Server) inlayHintCall(params json.RawMessage) (call, error) {
	var p struct {
		TextDocument textDocumentIdentifier `json:"textDocument"`
		Range        Range                  `json:"range"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, invalidParams(protocol.MethodTextDocumentInlayHint, err)
	}
	doc, ok := s.docs.get(p.TextDocument.URI)
	if !ok {
		return nil, invalidParams(protocol.MethodTextDocumentInlayHint, fmt.Errorf("document %s is not open", p.TextDocument.URI))
	}
	return func(ctx context.Context) (any, error) { return s.inlayHints(ctx, doc, p.Range) }, nil
}

// inlayHints puts after each known session mention in r what dsh/prepare
// would recall from it now: "· 12 msgs · 3.4 KB", or "· truncated: 9 of
// 48 msgs kept" when retention drops or shortens messages.
func (s *Server) inlayHints(ctx context.Context, doc document, r Range) ([]inlayHint, error) {
	out := []inlayHint{}
	if s.currentSessions() == nil {
		return out, nil
	}
	m := NewMapper(doc.Text, s.clientCaps().encoding)
	from, err := m.Offset(r.Start)
	if err != nil {
		return out, nil
	}
	to, err := m.Offset(r.End)
	if err != nil {
		to = len(doc.Text) // a range past the end: up to the end
	}
	mentions := sessionref.FindMentions(doc.Text)
	if len(mentions) == 0 {
		return out, nil
	}
	snap, err := s.readySnapshot(ctx)
	if err != nil || snap == nil {
		return out, err
	}
	lim := s.config().Limits()
	for _, men := range mentions {
		if men.Err != nil || men.End < from || men.Start > to {
			continue
		}
		label, ok := s.hintLabel(ctx, snap, men.SessionID, lim)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if ok {
			out = append(out, inlayHint{Position: m.Position(men.End), Label: label, PaddingLeft: true,
				Tooltip: "What this mention would recall now"})
		}
	}
	return out, nil
}

// hintLabel is the hint of session id, from the cache while its log is
// unchanged; false for a session that is unknown or cannot be recalled
// (its diagnostic says why).
func (s *Server) hintLabel(ctx context.Context, snap *titles.Snapshot, id string, lim prepare.Limits) (string, bool) {
	entry, ok := snap.Locate(id)
	if !ok {
		return "", false
	}
	c := &s.features.hints
	key := recallKey{id: id, offset: entry.Offset, lastSeq: entry.LastSeq, limits: lim}
	c.mu.Lock()
	label, hit := c.labels[key]
	c.mu.Unlock()
	if hit {
		return label, label != ""
	}
	p, err := prepare.PreviewSession(ctx, snap, id, lim)
	if ctx.Err() != nil {
		return "", false
	}
	if err == nil && p.Err == nil {
		label = hintText(p)
	}
	c.mu.Lock()
	if c.labels == nil || len(c.labels) >= maxHintCache {
		c.labels = map[recallKey]string{}
	}
	c.labels[key] = label
	c.mu.Unlock()
	return label, label != ""
}

// hintText writes what a preview says would be recalled.
func hintText(p *prepare.Preview) string {
	st := p.Stats
	if st.RetainedMessages < st.OriginalMessages || st.Truncated {
		return fmt.Sprintf("· truncated: %d of %d msgs kept", st.RetainedMessages, st.OriginalMessages)
	}
	return fmt.Sprintf("· %s · %s", render.Plural(st.RetainedMessages, "msg", "msgs"), hintBytes(p.RetainedTextBytes))
}

// hintBytes writes a size with one decimal: "512 B", "3.4 KB", "1.2 MB".
func hintBytes(n int64) string {
	switch {
	case n < 1024:
		return fmt.Sprintf("%d B", n)
	case n < 1024*1024:
		return fmt.Sprintf("%.1f KB", float64(n)/1024)
	default:
		return fmt.Sprintf("%.1f MB", float64(n)/(1024*1024))
	}
}

// refreshInlayHints asks the client to ask again for inlay hints after the
// session index changed, when it supports workspace/inlayHint/refresh;
// one request at a time.
func (s *Server) refreshInlayHints() {
	f := s.clientCaps().features
	if !f.inlayHints || !f.inlayHintRefresh || len(s.docs.uris()) == 0 {
		return
	}
	c := &s.features.hints
	if !c.refreshing.CompareAndSwap(false, true) {
		return
	}
	s.bgWG.Add(1)
	go func() {
		defer s.bgWG.Done()
		defer c.refreshing.Store(false)
		ctx, cancel := context.WithTimeout(s.bgCtx, outgoingCallTimeout)
		defer cancel()
		if _, err := s.conn.Call(ctx, protocol.MethodWorkspaceInlayHintRefresh, nil, nil); err != nil && s.bgCtx.Err() == nil {
			s.logger.Debug("inlay hint refresh not accepted", zap.Error(err))
		}
	}()
}
