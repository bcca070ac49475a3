package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"go.lsp.dev/jsonrpc2"

	"github.com/dsh-refls/dsh-refls/completion"
	"github.com/dsh-refls/dsh-refls/fileref"
	"github.com/dsh-refls/dsh-refls/server/internal/lspwire"
	"github.com/dsh-refls/dsh-refls/sessionref"
	"github.com/dsh-refls/dsh-refls/sessionref/dshlog"
	"github.com/dsh-refls/dsh-refls/sessionref/prepare"
	"github.com/dsh-refls/dsh-refls/sessionref/recall"
	"github.com/dsh-refls/dsh-refls/sessionref/titles"
)

// The custom methods of §4.3.
const (
	MethodPrepare    = "dsh/prepare"
	MethodCandidates = "dsh/candidates"
	MethodFiles      = "dsh/files"
	MethodStatus     = "dsh/status"
)

// prepareParams are the params of dsh/prepare. Exactly one of text,
// content and textDocument gives the message.
type prepareParams struct {
	Text              *string                 `json:"text"`
	Content           json.RawMessage         `json:"content"`
	TextDocument      *textDocumentIdentifier `json:"textDocument"`
	References        json.RawMessage         `json:"references"`
	SessionID         *string                 `json:"sessionId"`
	Mode              string                  `json:"mode"`
	MaxReferenceBytes json.RawMessage         `json:"maxReferenceBytes"`
	ContextWindow     json.RawMessage         `json:"contextWindow"`
	// Views asks the server to keep the prepared message and its context
	// as documents (workspace/textDocumentContent) and return their URIs.
	Views bool `json:"views"`
}

func present(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && string(raw) != "null"
}

func (s *Server) prepareCall(params json.RawMessage) (call, error) {
	var p prepareParams
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, invalidParams(MethodPrepare, err)
	}
	given := 0
	var text string
	var blocks []json.RawMessage
	if p.Text != nil {
		given++
		text = *p.Text
	}
	if present(p.Content) {
		given++
		if err := json.Unmarshal(p.Content, &blocks); err != nil {
			return nil, invalidParams(MethodPrepare, fmt.Errorf("content must be an array of content blocks: %w", err))
		}
	}
	if p.TextDocument != nil {
		given++
		doc, ok := s.docs.get(p.TextDocument.URI)
		if !ok {
			return nil, invalidParams(MethodPrepare, fmt.Errorf("document %s is not open", p.TextDocument.URI))
		}
		text = doc.Text
	}
	if given != 1 {
		return nil, invalidParams(MethodPrepare, fmt.Errorf("give exactly one of text, content and textDocument (got %d)", given))
	}
	mode := prepare.ModeReplace
	switch p.Mode {
	case "", string(prepare.ModeReplace):
	case string(prepare.ModePreserve):
		mode = prepare.ModePreserve
	default:
		return nil, invalidParams(MethodPrepare, fmt.Errorf(`mode must be "replace" or "preserve", got %q`, p.Mode))
	}
	var explicit []sessionref.Reference
	if present(p.References) {
		refs, err := prepare.ParseReferences(p.References)
		if err != nil {
			return nil, err
		}
		explicit = refs
		if explicit == nil {
			explicit = []sessionref.Reference{}
		}
	}
	cfg := s.config()
	lim := cfg.Limits()
	if present(p.MaxReferenceBytes) {
		n, err := decodeInt(p.MaxReferenceBytes, 1, -1)
		if err != nil {
			return nil, &configError{Field: "maxReferenceBytes", Msg: err.Error()}
		}
		lim.MaxReferenceBytes = n
	}
	if present(p.ContextWindow) {
		n, err := decodeInt(p.ContextWindow, 1, -1)
		if err != nil {
			return nil, &configError{Field: "contextWindow", Msg: err.Error()}
		}
		lim.ContextWindow = n
	}
	target := cfg.SessionID
	if p.SessionID != nil {
		target = *p.SessionID
	}
	isContent, views := present(p.Content), p.Views
	return func(ctx context.Context) (any, error) {
		// A host may prepare right after initialize: wait for the first
		// build rather than report its sessions as missing.
		snap, err := s.readySnapshot(ctx)
		if err != nil {
			return nil, err
		}
		if snap == nil {
			return nil, jsonrpc2.NewError(jsonrpc2.InternalError, "no session index is open")
		}
		res := &PrepareResult{}
		// contentText is a text message's content, encoded straight into
		// the answer (see encodePrepareResult); content blocks come
		// encoded.
		var contentText *string
		if isContent {
			r, err := prepare.PrepareContent(ctx, snap, target, blocks, mode, explicit, lim)
			if err != nil {
				return nil, err
			}
			res.Content, res.References, res.AdditionalContext = r.Content, r.References, r.AdditionalContext
			res.Files = s.preparedFiles(blockTexts(blocks))
		} else {
			r, err := prepare.PrepareTextMessage(ctx, snap, target, text, mode, explicit, lim)
			if err != nil {
				return nil, err
			}
			contentText, res.References, res.AdditionalContext = &r.Text, r.References, r.AdditionalContext
			res.Files = s.preparedFiles([]string{text})
		}
		if views {
			if contentText != nil {
				res.Content = sessionref.AppendJSString(nil, *contentText)
			}
			message, context, err := preparedViewTexts(res)
			if err != nil {
				return nil, err
			}
			v := s.kept.keep(message, context)
			res.Views = &v
		}
		return encodePrepareResult(res, contentText)
	}, nil
}

// encodePrepareResult encodes res as the codec would, with its content
// written once, into an answer of its size: contentText, when set, is the
// content as text (a text message), else res.Content is (compacted, as
// the codec's encoder compacts a raw value: content blocks come as the
// client wrote them). The codec's encoder copied a 30 MB message's
// content into its buffer, then the buffer into its result; and the
// content was encoded before that (issue 31, item 5).
func encodePrepareResult(res *PrepareResult, contentText *string) (json.RawMessage, error) {
	content := res.Content
	rest := *res
	rest.Content = json.RawMessage("0")
	tail, err := jsonCodec{}.Marshal(&rest)
	if err != nil {
		return nil, fmt.Errorf("encoding the prepared message: %w", err)
	}
	// Content is PrepareResult's first field: the encoding of rest begins
	// with it.
	const head = `{"content":0`
	if !bytes.HasPrefix(tail, []byte(head)) {
		return nil, fmt.Errorf("encoding the prepared message: unexpected start %.20q", tail)
	}
	if contentText != nil {
		out := make([]byte, 0, len(tail)+len(*contentText)+2)
		out = append(out, head[:len(head)-1]...)
		out = sessionref.AppendJSString(out, *contentText)
		return append(out, tail[len(head):]...), nil
	}
	if len(content) == 0 {
		content = json.RawMessage("null")
	}
	out := bytes.NewBuffer(make([]byte, 0, len(tail)-1+len(content)))
	out.WriteString(head[:len(head)-1])
	if err := json.Compact(out, content); err != nil {
		return nil, fmt.Errorf("encoding the prepared message's content: %w", err)
	}
	out.Write(tail[len(head):])
	return out.Bytes(), nil
}

// queryParams are the params of dsh/candidates and dsh/files.
type queryParams struct {
	Query string          `json:"query"`
	Limit json.RawMessage `json:"limit"`
}

// decodeQueryParams decodes params into p. The params a client sends on
// every keystroke, {"query":"…"} with a query of printable ASCII and no
// escape, are read off directly, without encoding/json's decoder (about a
// tenth of the server's CPU for a dsh/candidates call that finds nothing);
// any other shape is decoded by encoding/json. TestDecodeQueryParams
// compares the two.
func decodeQueryParams(params []byte, p *queryParams) error {
	const open, end = `{"query":"`, `"}`
	if len(params) >= len(open)+len(end) && string(params[:len(open)]) == open && string(params[len(params)-len(end):]) == end {
		q := params[len(open) : len(params)-len(end)]
		plain := true
		for _, c := range q {
			if !plainJSONByte(c) {
				plain = false
				break
			}
		}
		if plain {
			*p = queryParams{Query: string(q)}
			return nil
		}
	}
	return json.Unmarshal(params, p)
}

func (s *Server) candidatesCall(params json.RawMessage) (call, error) {
	var p queryParams
	if err := decodeQueryParams(params, &p); err != nil {
		return nil, invalidParams(MethodCandidates, err)
	}
	cfg := s.config()
	limit := cfg.CandidateLimit
	if present(p.Limit) {
		var n float64
		if err := json.Unmarshal(p.Limit, &n); err != nil || n != float64(int(n)) || n <= 0 {
			return nil, sessionref.Errorf(sessionref.CodeInvalidReference, "limit must be a positive integer, got %s", p.Limit)
		}
		limit = int(n)
	}
	return func(ctx context.Context) (any, error) {
		// Unlike completion, this answer has no way to say it is
		// incomplete, so it waits for a snapshot that lists every session
		// the index knows: the restored stored index, or the first build.
		snap, err := s.listingSnapshot(ctx)
		if err != nil {
			return nil, err
		}
		if snap == nil {
			return []titles.Candidate{}, nil
		}
		// The encoder writes each mention from the display title and id:
		// no string of its own per candidate.
		cands, _, err := snap.Candidates(titles.CandidateQuery{Query: p.Query, TargetID: cfg.SessionID, TargetCwd: cfg.Cwd, Limit: limit,
			NoMention: true})
		if err != nil {
			return nil, err
		}
		// Sessions found by what was said in them come after every title,
		// id and cwd match, in what the limit leaves.
		body := s.bodyMatches(ctx, snap, s.syncedRecall(), p.Query, titles.Scope{}, cands, cfg, limit-len(cands))
		list := candidateList{matched: cands, body: body}
		// A list larger than AnswerBuffers keeps would be encoded into an
		// array of its own: it is streamed instead.
		if candidatesSize(list.len()) > lspwire.KeptAnswerBytes {
			return list.streamed()
		}
		dst, slot := s.answers.Get(candidatesSize(list.len()))
		raw, err := list.encode(dst)
		s.answers.Settle(slot, raw)
		return raw, err
	}, nil
}

// fileResult is one entry of dsh/files.
type fileResult struct {
	Path    string       `json:"path"`
	Kind    fileref.Kind `json:"kind"`
	Mention string       `json:"mention"`
	Ignored bool         `json:"ignored,omitempty"`
}

func (s *Server) filesCall(params json.RawMessage) (call, error) {
	var p queryParams
	if err := decodeQueryParams(params, &p); err != nil {
		return nil, invalidParams(MethodFiles, err)
	}
	limit := s.config().FileMaxResults
	if present(p.Limit) {
		n, err := decodeInt(p.Limit, 1, -1)
		if err != nil {
			return nil, invalidParams(MethodFiles, fmt.Errorf("limit %w", err))
		}
		limit = n
	}
	return func(ctx context.Context) (any, error) {
		out := []fileResult{}
		files := s.currentFiles()
		if files == nil {
			return out, nil
		}
		cands, _, err := files.Search(ctx, p.Query, limit)
		if err != nil {
			return nil, fmt.Errorf("searching workspace files for %q: %w", p.Query, err)
		}
		for _, c := range cands {
			if !completion.Offerable(c.Path) {
				continue
			}
			out = append(out, fileResult{Path: c.Path, Kind: c.Kind, Mention: completion.InsertFile(c.Path, c.Kind, false), Ignored: c.Ignored})
		}
		return out, nil
	}, nil
}

// statusResult is the answer of dsh/status.
type statusResult struct {
	SessionsRoot     string           `json:"sessionsRoot"`
	WorkspaceRoot    string           `json:"workspaceRoot"`
	SessionsIndexed  int              `json:"sessionsIndexed"`
	FilesIndexed     int              `json:"filesIndexed"`
	WatchMode        string           `json:"watchMode"`
	WorkspaceWatch   string           `json:"workspaceWatchMode"`
	LastUpdate       *time.Time       `json:"lastUpdate"`
	Building         bool             `json:"building"`
	Skipped          []dshlog.Skipped `json:"skipped"`
	Degraded         []string         `json:"degraded"`
	PositionEncoding PositionEncoding `json:"positionEncoding"`
	SessionID        string           `json:"sessionId,omitempty"`
	// UnknownEvents counts skipped events of v4 logs whose type this
	// reader does not know (SPEC §1.7: log-only, so nothing is lost).
	UnknownEvents int `json:"unknownEvents"`
	// IndexCacheLoaded says whether the session index was restored from
	// its cache (a warm start) before it was built.
	IndexCacheLoaded bool `json:"indexCacheLoaded"`
	// Recall describes the body search index; absent when recallSearch
	// is off.
	Recall *recall.Stats `json:"recall,omitempty"`
	// Frecency says whether completion learns from accepted items and
	// how many it remembers (frecency.go).
	Frecency *frecencyStatus `json:"frecency"`

	// FileSizesPending counts the indexed files whose size is still being
	// measured: until it is 0, directory facts are lower bounds.
	FileSizesPending int `json:"fileSizesPending"`
}

func (s *Server) statusCall() (call, error) {
	return func(context.Context) (any, error) { return s.status(), nil }, nil
}

// status gathers the facts dsh/status answers with.
func (s *Server) status() statusResult {
	s.cfgMu.Lock()
	res := statusResult{
		WorkspaceRoot:    s.workspaceRoot,
		PositionEncoding: s.caps.encoding,
		SessionID:        s.cfg.SessionID,
		Skipped:          []dshlog.Skipped{},
		Degraded:         []string{},
	}
	if s.configErr != "" {
		res.Degraded = append(res.Degraded, "configuration rejected: "+s.configErr)
	}
	s.cfgMu.Unlock()
	mode, wsMode, degraded := s.watchStatus()
	res.WatchMode = mode
	res.WorkspaceWatch = wsMode
	res.Degraded = append(res.Degraded, degraded...)
	if sess := s.currentSessions(); sess != nil {
		st := sess.Status()
		res.SessionsRoot = st.Root
		if !rootExists(st.Root) {
			res.Degraded = append(res.Degraded, "sessions root does not exist: "+st.Root)
		}
		res.SessionsIndexed = st.Sessions
		res.Building = st.Building
		res.UnknownEvents = st.UnknownEvents
		res.IndexCacheLoaded = st.CacheLoaded
		if st.Problem != "" {
			res.Degraded = append(res.Degraded, "session index: "+st.Problem)
		}
		if !st.Updated.IsZero() {
			u := st.Updated.UTC()
			res.LastUpdate = &u
		}
		if st.Skipped != nil {
			res.Skipped = append(res.Skipped, st.Skipped...)
			sort.SliceStable(res.Skipped, func(i, j int) bool { return res.Skipped[i].Path < res.Skipped[j].Path })
		}
	}
	if f := s.currentFiles(); f != nil {
		res.FilesIndexed = f.Count()
		res.FileSizesPending = s.fileSizesPending()
	}
	if rh := s.recall.Load(); rh != nil {
		st := rh.ix.Stats()
		res.Recall = &st
	}
	res.Frecency = s.frecencyStatus()
	return res
}
