package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf16"

	"go.uber.org/zap"

	"github.com/dsh-refls/dsh-refls/completion"
	"github.com/dsh-refls/dsh-refls/server/internal/memtune"
	"github.com/dsh-refls/dsh-refls/server/internal/render"
	"github.com/dsh-refls/dsh-refls/sessionref"
	"github.com/dsh-refls/dsh-refls/sessionref/recall"
	"github.com/dsh-refls/dsh-refls/sessionref/titles"
)

// MethodSearch finds sessions by what was said in them (issue 13).
const MethodSearch = "dsh/search"

// recallHolder is the body search index of one opened session index. It
// is synced in the background from the session index's snapshots: once
// after the first build, then after every update.
type recallHolder struct {
	sessions *sessionsHolder
	ix       *recall.Index
	// kick asks the sync loop for another pass; one pending is enough.
	kick chan struct{}
	// synced is closed after the first sync; searchable once the index
	// published its first view (a first build publishes its steps, the
	// newest sessions first).
	synced     chan struct{}
	searchable chan struct{}
	searchOnce sync.Once
	cancel     context.CancelFunc
	// discarded is set when recallSearch was switched off: the index is
	// removed from the disk, so it must not be saved as it stops.
	discarded atomic.Bool
	// path is where the index is stored, "" when it is not.
	path string
}

// openRecall starts or stops the recall index of h as on says. With on
// false nothing is built or read, and searches are refused.
// syncRecall brings the body index up to the sessions' current snapshot. A
// panic while doing so is logged with its stack and the index keeps serving
// what it had: the background loop must not take the server down with it.
func (s *Server) syncRecall(ctx context.Context, rh *recallHolder, h *sessionsHolder) {
	// A sync is work like a request: the memory releaser waits for its
	// end (memtune.Releaser), so what it allocated is returned after it,
	// not left behind by a check that ran in its middle.
	s.memory.Begin()
	defer s.memory.End()
	defer func() {
		if p := recover(); p != nil {
			s.logger.Error("recall index sync panicked", zap.Any("panic", p), zap.Stack("stack"))
		}
	}()
	if err := rh.ix.Sync(ctx, h.s.Snapshot()); err != nil && ctx.Err() == nil {
		s.logger.Warn("recall index sync failed", zap.Error(err))
	}
}

func (s *Server) openRecall(h *sessionsHolder, on bool) {
	cur := s.recall.Load()
	if on && cur != nil && cur.sessions == h {
		return
	}
	if !on || (cur != nil && cur.sessions != h) {
		if old := s.recall.Swap(nil); old != nil {
			old.discarded.Store(!on)
			old.cancel()
		}
	}
	root := h.s.Status().Root
	if !on {
		s.forgetRecall(root)
		return
	}
	ctx, cancel := context.WithCancel(h.ctx)
	rh := &recallHolder{sessions: h, kick: make(chan struct{}, 1), synced: make(chan struct{}), searchable: make(chan struct{}), cancel: cancel}
	if s.opts.RecallPath != nil {
		if p, err := s.opts.RecallPath(root); err == nil {
			rh.path = p
		} else {
			s.logger.Warn("recall index kept in a temporary file only", zap.Error(err))
		}
	}
	rh.ix = recall.New(recall.Options{Logger: s.logger.Named("recall"), Path: rh.path, Parallelism: recallParallelism(),
		Yield: s.recallYield, Published: func(recall.Stats) { rh.searchOnce.Do(func() { close(rh.searchable) }) }})
	if !s.recall.CompareAndSwap(nil, rh) {
		cancel() // another caller opened one for the same sessions meanwhile
		return
	}
	s.bgWG.Add(1)
	go func() {
		defer s.bgWG.Done()
		s.runRecall(ctx, rh, h, root)
	}()
}

// recallSaveEvery is the least time between two saves of the stored
// recall index while sessions change.
const recallSaveEvery = 30 * time.Second

// A save is put off until no message has been handled for
// recallSaveQuiet, for recallSaveMostDelay at most: someone typing one
// keystroke after the other holds it back, never for long.
const (
	recallSaveQuiet     = 750 * time.Millisecond
	recallSaveMostDelay = 10 * time.Second
)

// runRecall loads the stored recall index, if any (searches are answered
// from it at once), then syncs it with the session index after its build
// and after every update, saving what changed at most every
// recallSaveEvery.
func (s *Server) runRecall(ctx context.Context, rh *recallHolder, h *sessionsHolder, root string) {
	defer rh.ix.Close()
	first := true
	var saved uint64
	if rh.path != "" {
		t0 := time.Now()
		err := rh.ix.Load(rh.path, root)
		switch {
		case err == nil:
			s.logger.Info("recall index loaded", zap.String("path", rh.path), zap.Int("sessions", rh.ix.Stats().Sessions),
				zap.Duration("took", time.Since(t0)))
			rh.searchOnce.Do(func() { close(rh.searchable) })
			close(rh.synced)
			first = false
		case errors.Is(err, fs.ErrNotExist):
		default:
			s.logger.Warn("stored recall index not used; rebuilding it", zap.Error(err))
		}
		saved = rh.ix.Changes()
	}
	select {
	case <-h.s.Ready():
	case <-ctx.Done():
		return
	}
	var lastSave time.Time
	var saveAt <-chan time.Time
	// saveDue is when the save put off (saveAt) became due; zero when none is.
	var saveDue time.Time
	save := func() {
		if rh.path == "" || rh.ix.Changes() == saved || ctx.Err() != nil {
			saveDue = time.Time{}
			return
		}
		// A save syncs the text file to disk and lays out the .idx file:
		// it is put off until nobody has been typing for a while, so that
		// the searches right after a build do not share the processors
		// and the disk with it. The loop goes on syncing meanwhile
		// (appended text stays searchable within its bound).
		if saveDue.IsZero() {
			saveDue = time.Now()
		}
		if wait := s.requests.untilQuiet(recallSaveQuiet); wait > 0 && time.Since(saveDue) < recallSaveMostDelay {
			saveAt = time.After(min(wait, recallSaveMostDelay-time.Since(saveDue)))
			return
		}
		saveDue = time.Time{}
		n := rh.ix.Changes()
		s.memory.Begin()
		defer s.memory.End()
		t0 := time.Now()
		if err := rh.ix.Save(rh.path, root); err != nil {
			s.logger.Warn("saving the recall index failed", zap.Error(err))
		} else {
			saved = n
			s.logger.Info("recall index saved", zap.String("path", rh.path), zap.Duration("took", time.Since(t0)))
		}
		lastSave = time.Now()
	}
	for {
		if first {
			// Nothing was stored: this sync reads every log.
			restore := s.gc.Lower(memtune.RecallBuildGCPercent)
			s.syncRecall(ctx, rh, h)
			restore()
		} else {
			s.syncRecall(ctx, rh, h)
		}
		if first {
			close(rh.synced)
			first = false
		}
		if since := time.Since(lastSave); lastSave.IsZero() || since >= recallSaveEvery {
			save()
		} else if saveAt == nil && rh.ix.Changes() != saved {
			saveAt = time.After(recallSaveEvery - since)
		}
		select {
		case <-rh.kick:
		case <-saveAt:
			saveAt = nil
			save()
		case <-ctx.Done():
			s.saveStopping(rh, root, saved)
			return
		}
	}
}

// saveStopping saves the recall index as it stops (the server shuts down,
// or the configuration names another root) when it changed since the last
// save, so that the next start answers from a stored copy that holds
// everything this one found: a save put off until nobody typed, or due in
// up to recallSaveEvery, would else be lost, and text appended meanwhile
// would be missing from the first searches after a restart (until the
// revalidating sync caught up). Not when recallSearch was switched off:
// then the stored index is removed.
func (s *Server) saveStopping(rh *recallHolder, root string, saved uint64) {
	if rh.path == "" || rh.discarded.Load() || rh.ix.Changes() == saved {
		return
	}
	t0 := time.Now()
	if err := rh.ix.Save(rh.path, root); err != nil {
		s.logger.Warn("saving the recall index as it stops failed", zap.Error(err))
		return
	}
	s.logger.Info("recall index saved as it stops", zap.String("path", rh.path), zap.Duration("took", time.Since(t0)))
}

// forgetRecall removes the stored recall index of root: with
// recallSearch off nothing that was said in sessions is kept on disk.
func (s *Server) forgetRecall(root string) {
	if s.opts.RecallPath == nil {
		return
	}
	p, err := s.opts.RecallPath(root)
	if err != nil {
		return
	}
	if err := recall.Remove(p); err != nil {
		s.logger.Warn("removing the stored recall index failed", zap.Error(err))
	}
}

// kickRecall asks the recall index for a sync after a session index update.
func (s *Server) kickRecall() {
	if rh := s.recall.Load(); rh != nil {
		select {
		case rh.kick <- struct{}{}:
		default:
		}
	}
}

// readyRecall waits until the recall index is searchable: its first view
// published (during a first build, the newest sessions read so far); nil
// when recallSearch is off.
func (s *Server) readyRecall(ctx context.Context) (*recallHolder, error) {
	rh := s.recall.Load()
	if rh == nil {
		return nil, nil
	}
	select {
	case <-rh.searchable:
		return rh, nil
	default:
	}
	// A request waiting for the build is not work the build gives way to
	// (it would wait for itself).
	s.requests.end()
	defer s.requests.begin()
	select {
	case <-rh.searchable:
		return rh, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// syncedRecall is the recall index once it is searchable (readyRecall),
// for answers that never wait (completion).
func (s *Server) syncedRecall() *recallHolder {
	rh := s.recall.Load()
	if rh == nil {
		return nil
	}
	select {
	case <-rh.searchable:
		return rh
	default:
		return nil
	}
}

// searchParams are the params of dsh/search.
type searchParams struct {
	Query     *string         `json:"query"`
	Limit     json.RawMessage `json:"limit"`
	SessionID string          `json:"sessionId"`
}

// searchResult is one session of a dsh/search answer.
type searchResult struct {
	SessionID    string         `json:"sessionId"`
	Label        string         `json:"label"`
	DisplayTitle string         `json:"displayTitle"`
	Cwd          *string        `json:"cwd,omitempty"`
	CreatedAt    int64          `json:"createdAt"`
	Matches      []recall.Match `json:"matches"`
}

func (s *Server) searchCall(params json.RawMessage) (call, error) {
	var p searchParams
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, invalidParams(MethodSearch, err)
	}
	if p.Query == nil {
		return nil, sessionref.Errorf(sessionref.CodeInvalidReference, "query is required")
	}
	limit := recall.DefaultLimit
	if present(p.Limit) {
		var n float64
		if err := json.Unmarshal(p.Limit, &n); err != nil || n != float64(int(n)) || n <= 0 || n > recall.MaxLimit {
			return nil, sessionref.Errorf(sessionref.CodeInvalidReference, "limit must be an integer from 1 to %d, got %s", recall.MaxLimit, p.Limit)
		}
		limit = int(n)
	}
	if !s.config().RecallSearch {
		return nil, sessionref.Errorf(sessionref.CodeInvalidConfig, "searching what was said in sessions is off (recallSearch: false)")
	}
	q := recall.Query{Text: *p.Query, Limit: limit, SessionID: p.SessionID}
	return func(ctx context.Context) (any, error) {
		snap, err := s.readySnapshot(ctx)
		if err != nil {
			return nil, err
		}
		rh, err := s.readyRecall(ctx)
		if err != nil {
			return nil, err
		}
		out := []searchResult{}
		if rh == nil || snap == nil {
			return out, nil
		}
		if e, ok := snap.Locate(q.SessionID); ok && q.SessionID != "" {
			q.CreatedAt = e.CreatedAt
		}
		res, err := rh.ix.Search(ctx, q)
		var qe *recall.QueryError
		if errors.As(err, &qe) {
			return nil, sessionref.Errorf(sessionref.CodeInvalidReference, "%s", qe.Reason)
		}
		if err != nil {
			return nil, err
		}
		for _, r := range res {
			e, ok := snap.Locate(r.SessionID)
			if !ok {
				continue // dropped since the recall index synced
			}
			sr := searchResult{SessionID: e.ID, Label: e.Label(), DisplayTitle: e.DisplayTitle(), CreatedAt: e.CreatedAt, Matches: r.Matches}
			if e.HasCwd {
				cwd := e.Cwd
				sr.Cwd = &cwd
			}
			out = append(out, sr)
		}
		return tagSafe(out)
	}, nil
}

// tagSafe serialises v with every <, > and & written as a \u escape, so
// that no excerpt can open or close a tag in whatever a host pastes the
// raw answer into (as §2.3.4 writes snapshots).
func tagSafe(v any) (json.RawMessage, error) {
	raw, err := json.Marshal(v) // escapes <, > and & by default
	if err != nil {
		return nil, fmt.Errorf("serialising the search answer: %w", err)
	}
	return raw, nil
}

// bodyMatches are the sessions whose text holds query where a word starts
// (recall.Query.WordStart: "rate" in "generated" is noise in a list to
// pick from) but that the title candidates did not list, as candidates
// with their first match, at most limit of them. Queries shorter than three bytes find none: they would
// match nearly every session.
func (s *Server) bodyMatches(ctx context.Context, snap *titles.Snapshot, rh *recallHolder, query string, scope titles.Scope, listed []titles.Candidate, cfg Config, limit int) []bodyCandidate {
	if rh == nil || snap == nil || limit <= 0 || len(strings.TrimSpace(query)) < 3 {
		return nil
	}
	seen := make(map[string]bool, len(listed))
	for _, c := range listed {
		seen[c.SessionID] = true
	}
	// One match per session: a candidate shows only its first.
	res, err := rh.ix.Search(ctx, recall.Query{Text: query, Limit: limit + len(listed) + 1, Matches: 1, WordStart: true})
	if err != nil {
		return nil // a query the body search refuses finds no body matches
	}
	var out []bodyCandidate
	for _, r := range res {
		if seen[r.SessionID] || len(r.Matches) == 0 {
			continue
		}
		c, ok := snap.CandidateOf(r.SessionID, cfg.SessionID, cfg.Cwd)
		if !ok || !snap.Admits(scope, r.SessionID, cfg.SessionID, cfg.Cwd, query) {
			continue
		}
		m := r.Matches[0]
		out = append(out, bodyCandidate{Candidate: c, Match: &m})
		if len(out) == limit {
			break
		}
	}
	return out
}

// bodyCandidate is a candidate found by what was said in it; dsh/candidates
// lists it after the title, id and cwd matches, with the match.
type bodyCandidate struct {
	titles.Candidate
	Match *recall.Match `json:"match,omitempty"`
}

// excerptMarkdown renders a match for Markdown documentation: the hits in
// bold, everything else escaped (hover.go escapeMarkdown) so that no tag
// or markup in the text takes effect.
func excerptMarkdown(m *recall.Match) string {
	u := utf16.Encode([]rune(m.Excerpt))
	var b strings.Builder
	at := 0
	for _, r := range m.Ranges {
		if r[0] < at || r[1] > len(u) {
			continue
		}
		b.WriteString(render.Escape(string(utf16.Decode(u[at:r[0]]))))
		b.WriteString("**" + render.Escape(string(utf16.Decode(u[r[0]:r[1]]))) + "**")
		at = r[1]
	}
	b.WriteString(render.Escape(string(utf16.Decode(u[at:]))))
	return fmt.Sprintf("%s (message %d): %s", m.Role, m.Seq, b.String())
}

// bodyItem is the completion item of a session found by what was said in
// it.
type bodyItem struct {
	item          completionItem
	sameWorkspace bool
}

// bodyItems are the completion items of the sessions found by what was
// said in them, at a word start (recall.Query.WordStart), that the title
// candidates did not list. The label is the matched text (bodyLabel), so
// that a client highlighting the typed word in labels highlights the word
// that matched, and the title follows it; the documentation holds the
// excerpt with the hits in bold.
func (s *Server) bodyItems(ctx context.Context, snap *titles.Snapshot, line string, tok completion.Token, sq sessionQuery,
	listed []titles.Candidate, cfg Config, edit func(string) any) []bodyItem {
	caps := s.clientCaps()
	now := s.now()
	var items []bodyItem
	for _, b := range s.bodyMatches(ctx, snap, s.syncedRecall(), sq.text, sq.scope, listed, cfg, cfg.CandidateLimit-len(listed)) {
		label := bodyLabel(b.Match)
		item := completionItem{
			Label:      label,
			Kind:       completionKindReference,
			FilterText: completion.FilterText(caps.client, line, tok, label, b.DisplayTitle, b.SessionID),
			TextEdit:   edit(b.Mention),
			Data:       &completionData{Kind: dataKindSession, SessionID: b.SessionID, Seq: &b.Match.Seq},
		}
		age := render.Age(now, b.CreatedAt)
		if caps.labelDetails {
			item.LabelDetails = &labelDetails{Detail: " in " + b.DisplayTitle, Description: age}
		} else {
			item.Detail = "in " + b.DisplayTitle + " · " + age
		}
		if caps.completionMarkdown {
			item.Documentation = &markupContent{Kind: "markdown", Value: excerptMarkdown(b.Match)}
		} else {
			item.Documentation = &markupContent{Kind: "plaintext", Value: b.Match.Role + ": " + b.Match.Excerpt}
		}
		items = append(items, bodyItem{item: item, sameWorkspace: b.SameWorkspace})
	}
	return items
}

// Bounds of a body match's label: the words of the excerpt from at most
// bodyLabelBefore runes before the hit, bodyLabelRunes runes in all.
const (
	bodyLabelBefore = 16
	bodyLabelRunes  = 48
)

// bodyLabel is the label of a session found by its text: the excerpt's
// words around the first hit, quoted, with "…" where they were cut.
func bodyLabel(m *recall.Match) string {
	text := []rune(m.Excerpt)
	hit := 0
	if len(m.Ranges) > 0 {
		// Ranges are UTF-16 offsets: find the rune the first one starts at.
		for u16 := 0; hit < len(text) && u16 < m.Ranges[0][0]; hit++ {
			u16 += utf16.RuneLen(text[hit])
		}
	}
	start := hit
	for start > 0 && hit-start < bodyLabelBefore {
		start--
	}
	// Start at a word: after the space nearest the cut.
	for i := start; i < hit; i++ {
		if start > 0 && unicode.IsSpace(text[i]) {
			start = i + 1
			break
		}
	}
	end := min(len(text), start+bodyLabelRunes)
	label := strings.TrimSpace(string(text[start:end]))
	if start > 0 && !strings.HasPrefix(label, "…") {
		label = "…" + label
	}
	if end < len(text) && !strings.HasSuffix(label, "…") {
		label += "…"
	}
	return "“" + label + "”"
}

// recallParallelism is how many logs the recall index projects at once:
// one per processor. recallYield keeps all but one of them from running
// beside a request, so a build uses every core while nobody types and
// leaves all but one to the keystrokes while somebody does (it projected
// on half the processors before: a first build of 10,000 sessions on 2
// cores took twice the time with one idle most of it).
func recallParallelism() int { return max(1, runtime.GOMAXPROCS(0)) }

// recallYield is where a projecting goroutine of the recall index gives
// way (recall.Options.Yield), before each session and between messages:
// it lets any goroutine waiting for a processor run first (a request
// read from the pipe while every processor projects), and holds every
// worker but the first while requests are being handled.
func (s *Server) recallYield(ctx context.Context, worker int) {
	runtime.Gosched()
	if worker > 0 {
		s.requests.waitIdle(ctx)
	}
}
