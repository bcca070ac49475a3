package server

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.lsp.dev/protocol"

	"github.com/dsh-refls/dsh-refls/completion"
	"github.com/dsh-refls/dsh-refls/fileref"
	"github.com/dsh-refls/dsh-refls/server/internal/render"
	"github.com/dsh-refls/dsh-refls/sessionref/titles"
)

// sortTextWidth zero-pads ranks so "00010" sorts after "00002".
const sortTextWidth = 5

// maxPresizedFiles bounds the room for file items a completion list is
// allocated with before its sessions are added, whatever fileMaxResults
// says.
const maxPresizedFiles = 256

// searchSlack is how many file candidates beyond fileMaxResults are asked
// for, to stand in for the ones that are never offered.
const searchSlack = 8

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
	// Seq is the message a body match was found in (preview_hit.go).
	Seq *int64 `json:"seq,omitempty"`
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
		return nil, invalidParams(protocol.MethodTextDocumentCompletion, err)
	}
	doc, ok := s.docs.get(p.TextDocument.URI)
	if !ok {
		return nil, invalidParams(protocol.MethodTextDocumentCompletion, fmt.Errorf("document %s is not open", p.TextDocument.URI))
	}
	req := completionRequest{doc: doc, pos: p.Position}
	return func(ctx context.Context) (any, error) {
		list, err := s.complete(ctx, req)
		if err != nil {
			return nil, err
		}
		dst, slot := s.answers.Get(completionSize(len(list.Items)))
		raw, err := encodeCompletionList(dst, list)
		s.answers.Settle(slot, raw)
		return raw, err
	}, nil
}

// complete builds the one list of sessions and files for the `@` token at
// the cursor: it finds the token, then a listBuilder adds the sessions and
// the files it names, and the list is ordered by rank.
func (s *Server) complete(ctx context.Context, req completionRequest) (*completionList, error) {
	caps := s.clientCaps()
	list := &completionList{Items: []completionItem{}}
	m := NewMapper(req.doc.Text, caps.encoding)
	if req.pos.Line >= m.LineCount() {
		return list, nil
	}
	line, lineStart := m.Line(req.pos.Line)
	cursor := ColumnToByte(line, req.pos.Character, caps.encoding)
	if rt, ok := completion.RangeAt(line, cursor); ok {
		// The offers follow the start line typed after `#`: the client asks
		// again on each keystroke (VS Code otherwise filters "L2" out of
		// "L1 L1-12 L12" and closes the list).
		list.IsIncomplete = true
		list.Items = append(list.Items, s.rangeItems(line, lineStart, cursor, rt, m, caps.insertReplace)...)
		return list, nil
	}
	tok, ok := completion.At(line, cursor)
	if !ok {
		return list, nil
	}
	// Every answer depends on the query: clients must ask again on each
	// keystroke instead of filtering this list themselves, or `@rate`
	// would never reach what `@` did not list.
	list.IsIncomplete = true
	b := s.newListBuilder(req, caps, m, line, lineStart, tok, list)
	if err := b.addSessions(ctx); err != nil {
		return nil, err
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if err := b.addFiles(ctx); err != nil {
		return nil, err
	}
	orderByRank(list.Items, b.ranks, b.fv, &b.match)
	if b.cfg.Frecency && len(list.Items) > 0 {
		s.rememberOffer(req.doc.URI, req.doc.Text, lineStart+tok.Start, list.Items)
	}
	return list, nil
}

// listBuilder adds the items of one completion list for the token tok of
// line, each with its rank.
type listBuilder struct {
	s    *Server
	caps clientCaps
	cfg  Config
	list *completionList
	line string
	tok  completion.Token
	// insert and replace are the token's range up to the cursor and
	// whole (edit).
	insert, replace Range
	// self is the document's own path, never offered.
	self string
	// ranked is set when a typed word ranks sessions and files together
	// (completion.Rank); a bare `@` or a directory lists sessions, then
	// files.
	ranked bool
	// sq is the session query, its scope switch (`@all:`) applied; files
	// match all that was typed.
	sq sessionQuery
	// ranks holds one rank per item of list.Items.
	ranks []completion.Rank
	// fv and match, with picks to rank by, say how each item matched
	// (frecency.go).
	fv    *frecencyView
	match itemMatches
}

// newListBuilder starts the list of the token tok of line (at lineStart in
// the document), for a client with caps.
func (s *Server) newListBuilder(req completionRequest, caps clientCaps, m *Mapper, line string, lineStart int, tok completion.Token, list *completionList) listBuilder {
	b := listBuilder{s: s, caps: caps, cfg: s.config(), list: list, line: line, tok: tok,
		insert:  m.Range(lineStart+tok.Start, lineStart+tok.Cursor),
		replace: m.Range(lineStart+tok.Start, lineStart+tok.End),
		self:    s.documentPath(req.doc.URI)}
	b.ranked = tok.Query != "" && !tok.Quoted && !strings.Contains(tok.Query, "/")
	b.fv = s.frecencyFor(b.self)
	b.sq = s.sessionQueryOf(tok, b.cfg)
	return b
}

// edit writes newText over the token, as the client can apply it.
func (b *listBuilder) edit(newText string) any {
	if b.caps.insertReplace {
		return insertReplaceEdit{NewText: newText, Insert: b.insert, Replace: b.replace}
	}
	return textEdit{Range: b.replace, NewText: newText}
}

// add appends one item with its rank and, with picks to rank by, what it
// matched as.
func (b *listBuilder) add(item completionItem, rank completion.Rank, ref itemRef) {
	b.list.Items = append(b.list.Items, item)
	b.ranks = append(b.ranks, rank)
	if b.fv != nil {
		b.match.refs = append(b.match.refs, ref)
	}
}

// addSessions adds the sessions the title index lists for the query, then
// the ones found by what was said in them.
func (b *listBuilder) addSessions(ctx context.Context) error {
	sess := b.s.currentSessions()
	if sess == nil || b.tok.Quoted || strings.Contains(b.sq.text, "/") {
		return nil
	}
	snap := sess.Snapshot()
	cfg := b.cfg
	cands, _, err := snap.Candidates(titles.CandidateQuery{
		Query: b.sq.text, TargetID: cfg.SessionID, TargetCwd: cfg.Cwd, Limit: cfg.CandidateLimit,
		ByActivity: cfg.CandidateOrder != candidateOrderCreated, Scope: b.sq.scope,
	})
	if err != nil {
		return err
	}
	now := b.s.now()
	// One allocation for the list: these items and the files'.
	room := len(cands) + min(max(cfg.FileMaxResults, 0), maxPresizedFiles)
	b.list.Items = slices.Grow(b.list.Items, room)
	b.ranks = make([]completion.Rank, 0, room)
	if b.fv != nil {
		b.match = itemMatches{query: strings.ToLower(b.sq.text), sessions: cands, refs: make([]itemRef, 0, room)}
	}
	rankSessions := b.ranked && b.sq.text != ""
	for i := range cands {
		c := &cands[i]
		rank := completion.SessionRank(!rankSessions || titles.WordMatch(*c, b.sq.text), !rankSessions || c.SameWorkspace, false)
		b.add(b.sessionItem(c, now), rank, itemRef{kind: refSession, i: int32(i)})
	}
	for _, body := range b.s.bodyItems(ctx, snap, b.line, b.tok, b.sq, cands, cfg, b.edit) {
		b.add(body.item, completion.SessionRank(false, body.sameWorkspace, true), itemRef{kind: refBody})
	}
	return nil
}

// sessionItem is the item of one listed session: its display title, where
// it works and how old it is.
func (b *listBuilder) sessionItem(c *titles.Candidate, now time.Time) completionItem {
	item := completionItem{
		Label:      c.DisplayTitle,
		Kind:       completionKindReference,
		FilterText: completion.FilterText(b.caps.client, b.line, b.tok, c.DisplayTitle, c.SessionID),
		TextEdit:   b.edit(c.Mention),
		Data:       &completionData{Kind: dataKindSession, SessionID: c.SessionID},
	}
	where, age := "", render.Age(now, c.CreatedAt)
	switch {
	case c.WorkingDirectory != nil: // where the session works now
		where = path.Base(*c.WorkingDirectory)
	case c.Cwd != nil:
		where = path.Base(*c.Cwd)
	}
	if b.caps.labelDetails {
		item.LabelDetails = &labelDetails{Description: age}
		if where != "" {
			item.LabelDetails.Detail = " " + where
		}
	} else {
		item.Detail = strings.TrimPrefix(where+" · "+age, " · ")
	}
	return item
}

// addFiles adds the workspace files and directories that match what was
// typed, leaving out the document itself and editor temporary files.
func (b *listBuilder) addFiles(ctx context.Context) error {
	fh := b.s.files.Load()
	if fh == nil {
		return nil
	}
	limit, query := b.cfg.FileMaxResults, b.tok.Query
	// A few more than the limit, so that the files left out below do not
	// shorten the list.
	cands, _, err := fh.f.Search(ctx, query, limit+searchSlack)
	if err != nil {
		return fmt.Errorf("searching workspace files for %q: %w", query, err)
	}
	offered, room := 0, len(cands)
	if limit > 0 {
		room = min(room, limit) // what is offered at most
	}
	b.list.Items = slices.Grow(b.list.Items, room)
	if b.fv != nil {
		b.match.files, b.match.fileQuery = cands, query
	}
	for fi, f := range cands {
		if offered == limit && limit > 0 {
			break
		}
		if !completion.Offerable(f.Path) || samePath(f.Path, b.self) || (f.Kind != fileref.KindDirectory && completion.EditorTemporary(f.Path)) {
			continue
		}
		offered++
		rank := completion.RankFile
		if b.ranked {
			rank = completion.FileRank(f.Path, query)
		}
		b.add(b.fileItem(fh.f, f), rank, itemRef{kind: refFile, i: int32(fi)})
	}
	return nil
}

// fileItem is the item of one file or directory of the workspace.
func (b *listBuilder) fileItem(files Files, f FileCandidate) completionItem {
	ckind, label := completionKindFile, f.Path
	if f.Kind == fileref.KindDirectory {
		ckind, label = completionKindFolder, strings.TrimSuffix(f.Path, "/")+"/"
	}
	item := completionItem{
		Label:      label,
		Kind:       ckind,
		FilterText: completion.FilterText(b.caps.client, b.line, b.tok, label),
		TextEdit:   b.edit(completion.InsertFile(f.Path, f.Kind, b.tok.Quoted)),
		Data:       &completionData{Kind: dataKindFile, Path: f.Path},
	}
	if f.Ignored {
		item.Detail = "ignored"
	} else if f.Kind == fileref.KindDirectory {
		directoryRow(&item, files, f.Path, b.caps.labelDetails)
	}
	return item
}

// orderByRank puts items in the order of their ranks (ranks[i] is the
// rank of items[i]), keeping the order of equal ranks, and numbers their
// sortText in that order. With a frecency view (and match, how each item
// matched), items of one rank that matched alike are ordered by their
// picks (orderByFrecency).
func orderByRank(items []completionItem, ranks []completion.Rank, fv *frecencyView, match *itemMatches) {
	var next [completion.RankCount + 1]int // where each rank's items start
	for _, r := range ranks {
		next[r+1]++
	}
	for r := 1; r < len(next); r++ {
		next[r] += next[r-1]
	}
	sorted := make([]completionItem, len(items))
	if scores := frecencyScores(fv, items); scores != nil {
		order := make([]int32, len(items))
		for i := range items {
			order[next[ranks[i]]] = int32(i)
			next[ranks[i]]++
		}
		orderByFrecency(order, ranks, scores, match.quality)
		for i, j := range order {
			sorted[i] = items[j]
		}
	} else {
		for i, it := range items {
			sorted[next[ranks[i]]] = it
			next[ranks[i]]++
		}
	}
	for i := range sorted {
		sorted[i].SortText = sortText(i + 1)
	}
	copy(items, sorted)
}

// documentPath is the workspace-relative slash path of the document at uri,
// or "" when it is not a file inside the workspace: the document being
// edited is never offered as a mention of itself.
func (s *Server) documentPath(uri string) string {
	root := s.workspace()
	p := uriToPath(uri)
	if root == "" || p == uri {
		return ""
	}
	rel, err := filepath.Rel(root, p)
	if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
		return ""
	}
	return filepath.ToSlash(rel)
}

// sortText is the sortText of the item ranked rank: the rank zero-padded
// to sortTextWidth digits (fmt's "%0*d", without its allocations).
func sortText(rank int) string {
	digits := strconv.Itoa(rank)
	if len(digits) >= sortTextWidth {
		return digits
	}
	return sortTextZeros[:sortTextWidth-len(digits)] + digits
}

// sortTextZeros pads sortText.
const sortTextZeros = "00000"

func (s *Server) resolveCall(params json.RawMessage) (call, error) {
	var item map[string]json.RawMessage
	if err := json.Unmarshal(params, &item); err != nil {
		return nil, invalidParams(protocol.MethodCompletionItemResolve, err)
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
		snap, err := s.readySnapshot(ctx)
		if err != nil {
			return nil, err
		}
		if snap == nil {
			return item, nil
		}
		doc = s.sessionPreviewText(ctx, snap, data.SessionID, markdown)
	case dataKindFile:
		doc = s.fileFactsText(ctx, data.Path, markdown)
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
	if err := s.acceptCommand(item, data); err != nil {
		return nil, err
	}
	return item, nil
}
