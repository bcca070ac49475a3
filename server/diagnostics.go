package server

import (
	"context"
	"fmt"
	"sync"
	"time"

	"go.lsp.dev/protocol"
	"go.uber.org/zap"

	"github.com/dsh-refls/dsh-refls/fileref"
	"github.com/dsh-refls/dsh-refls/server/internal/render"
	"github.com/dsh-refls/dsh-refls/sessionref"
	"github.com/dsh-refls/dsh-refls/sessionref/prepare"
	"github.com/dsh-refls/dsh-refls/sessionref/titles"
)

// diagnosticSource is the source of every diagnostic (§4.2).
const diagnosticSource = "dsh-refls"

// diagnostics debounces and publishes diagnostics per open document. Each
// document has at most one timer and one running computation; a newer
// change cancels the running one, and a result is published only if the
// document is still at the version it was computed for.
type diagnostics struct {
	s     *Server
	delay time.Duration
	wg    sync.WaitGroup

	// mu guards pending, running and stopped.
	mu      sync.Mutex
	pending map[string]*time.Timer
	running map[string]context.CancelFunc
	stopped bool

	// readers bounds the log reads of diagnostics across all documents
	// (one slot per read in progress), apart from the request limit so
	// diagnostics never hold completion up.
	readers chan struct{}

	// recallMu guards recall and flights. recall says whether a session
	// can be recalled, keyed by what the index knows of its log, so typing
	// does not re-read unchanged logs; flights holds the reads in progress,
	// so documents mentioning the same log state share one read.
	recallMu sync.Mutex
	recall   map[recallKey]error
	flights  map[recallKey]*recallFlight
}

// diagnosticReaders is how many session logs diagnostics read at once.
// Each read holds a whole log in memory, so this bounds their memory by
// a small multiple of the largest log, whatever the number of open
// documents (issue 12: 60 documents used to read 60 logs at once).
const diagnosticReaders = 2

// recallFlight is one read of a log state in progress. done is closed when
// it ends; err is its answer when ok (a cancelled read has none).
type recallFlight struct {
	done chan struct{}
	err  error
	ok   bool
}

// maxRecallCache bounds the recall cache; it is cleared when full, which
// only costs re-reading the logs of the mentions in open documents.
const maxRecallCache = 256

// recallKey identifies one session log state and budget.
type recallKey struct {
	id      string
	offset  int64
	lastSeq int64
	limits  prepare.Limits
}

// recallError says why session id cannot be recalled now (nil when it
// can), reading its log only when it changed since the last check. A read
// of the same log state already in progress is waited for and shared; the
// read itself waits for one of the diagnosticReaders slots. A cancelled
// call returns ctx's error (the caller publishes nothing then).
func (d *diagnostics) recallError(ctx context.Context, snap *titles.Snapshot, id string, lim prepare.Limits) error {
	entry, ok := snap.Locate(id)
	if !ok {
		return &sessionref.Error{Code: sessionref.CodeReadFailed, Message: fmt.Sprintf("unknown session %q", id), SessionID: id}
	}
	key := recallKey{id: id, offset: entry.Offset, lastSeq: entry.LastSeq, limits: lim}
	for {
		d.recallMu.Lock()
		if err, hit := d.recall[key]; hit {
			d.recallMu.Unlock()
			return err
		}
		if f := d.flights[key]; f != nil {
			d.recallMu.Unlock()
			select {
			case <-f.done:
				if f.ok {
					return f.err
				}
				continue // the reader was cancelled: read it ourselves
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		f := &recallFlight{done: make(chan struct{})}
		d.flights[key] = f
		d.recallMu.Unlock()

		ok, err := d.readRecall(ctx, snap, id, lim)
		d.recallMu.Lock()
		delete(d.flights, key)
		if ok {
			if len(d.recall) >= maxRecallCache {
				clear(d.recall)
			}
			d.recall[key] = err
			f.err, f.ok = err, true
		}
		d.recallMu.Unlock()
		close(f.done)
		return err
	}
}

// readRecall reads session id's log in one of the readers slots. ok is
// false when ctx ended first: a cancelled read says nothing about the log.
func (d *diagnostics) readRecall(ctx context.Context, snap *titles.Snapshot, id string, lim prepare.Limits) (ok bool, err error) {
	select {
	case d.readers <- struct{}{}:
	case <-ctx.Done():
		return false, ctx.Err()
	}
	defer func() { <-d.readers }()
	if ctx.Err() != nil {
		return false, ctx.Err()
	}
	p, perr := prepare.PreviewSession(ctx, snap, id, lim)
	switch {
	case perr != nil:
		err = perr
	case p.Err != nil:
		err = p.Err
	}
	return ctx.Err() == nil, err
}

func newDiagnostics(s *Server, delay time.Duration) *diagnostics {
	return &diagnostics{s: s, delay: delay, pending: map[string]*time.Timer{}, running: map[string]context.CancelFunc{},
		readers: make(chan struct{}, diagnosticReaders),
		recall:  map[recallKey]error{}, flights: map[recallKey]*recallFlight{}}
}

// schedule (re)starts the debounce timer of uri and cancels a computation
// in progress for it.
func (d *diagnostics) schedule(uri string) {
	if !diagnosable(uri) {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.stopped {
		return
	}
	if cancel, ok := d.running[uri]; ok {
		cancel()
	}
	if t, ok := d.pending[uri]; ok {
		t.Reset(d.delay)
		return
	}
	d.pending[uri] = time.AfterFunc(d.delay, func() { d.fire(uri) })
}

// scheduleAll reschedules every open document, after the index changed.
func (d *diagnostics) scheduleAll() {
	for _, u := range d.s.docs.uris() {
		d.schedule(u)
	}
}

// forget drops the state of a closed document and clears its diagnostics.
func (d *diagnostics) forget(uri string) {
	d.mu.Lock()
	if t, ok := d.pending[uri]; ok {
		t.Stop()
		delete(d.pending, uri)
	}
	if cancel, ok := d.running[uri]; ok {
		cancel()
		delete(d.running, uri)
	}
	stopped := d.stopped
	d.mu.Unlock()
	if !stopped {
		d.publish(uri, nil, []diagnostic{})
	}
}

// stop cancels everything and waits for running computations.
func (d *diagnostics) stop() {
	d.mu.Lock()
	d.stopped = true
	for u, t := range d.pending {
		t.Stop()
		delete(d.pending, u)
	}
	for _, cancel := range d.running {
		cancel()
	}
	d.mu.Unlock()
	d.wg.Wait()
}

func (d *diagnostics) fire(uri string) {
	d.mu.Lock()
	delete(d.pending, uri)
	if d.stopped {
		d.mu.Unlock()
		return
	}
	ctx, cancel := context.WithCancel(d.s.bgCtx)
	d.running[uri] = cancel
	d.wg.Add(1)
	d.mu.Unlock()
	defer d.wg.Done()
	defer func() {
		cancel()
		d.mu.Lock()
		delete(d.running, uri)
		d.mu.Unlock()
	}()
	doc, ok := d.s.docs.get(uri)
	if !ok {
		return
	}
	diags := d.s.computeDiagnostics(ctx, doc)
	if ctx.Err() != nil {
		return
	}
	cur, ok := d.s.docs.get(uri)
	if !ok || cur.Version != doc.Version || cur.Text != doc.Text {
		return // stale: a newer change has its own run scheduled
	}
	version := doc.Version
	d.publish(uri, &version, diags)
}

func (d *diagnostics) publish(uri string, version *int32, diags []diagnostic) {
	p := publishDiagnosticsParams{URI: uri, Version: version, Diagnostics: diags}
	if err := d.s.conn.Notify(d.s.bgCtx, protocol.MethodTextDocumentPublishDiagnostics, p); err != nil {
		d.s.logger.Debug("diagnostics not published", zap.String("uri", uri), zap.Error(err))
	}
}

// computeDiagnostics finds every mention problem in doc (§4.2).
func (s *Server) computeDiagnostics(ctx context.Context, doc document) []diagnostic {
	caps := s.clientCaps()
	cfg := s.config()
	m := NewMapper(doc.Text, caps.encoding)
	out := []diagnostic{}
	add := func(start, end, severity int, code sessionref.Code, msg string) {
		out = append(out, diagnostic{Range: m.Range(start, end), Severity: severity, Code: string(code), Source: diagnosticSource, Message: msg})
	}
	maxRefs := cfg.MaxReferences
	if maxRefs <= 0 {
		maxRefs = defaultMaxReferences
	}
	if sess := s.currentSessions(); sess != nil {
		mentions := sessionref.FindMentions(doc.Text)
		snap := sess.Snapshot()
		if needsIndex(mentions) {
			// Unknown-session and budget checks need the index: wait for
			// its first build (a newer change cancels the wait).
			ready, err := s.readySnapshot(ctx)
			if err != nil || ready == nil {
				// Cancelled (the run is dropped) or the index was closed
				// (the next one reschedules this document).
				mentions = nil
			}
			snap = ready
		}
		// rank numbers the sessions in the order they are first mentioned:
		// every mention of one past maxRefs is one too many.
		rank := map[string]int{}
		checked := map[string]error{}
		for _, men := range mentions {
			if ctx.Err() != nil {
				return nil
			}
			if typing(doc, men.Start, men.End) {
				continue
			}
			switch {
			case men.Err != nil:
				add(men.Start, men.End, severityError, sessionref.CodeInvalidReference, render.ErrorText(men.Err))
				continue
			case men.SessionID == cfg.SessionID && cfg.SessionID != "":
				add(men.Start, men.End, severityError, sessionref.CodeSelfReference, "a session cannot reference itself")
				continue
			}
			if _, ok := snap.Locate(men.SessionID); !ok {
				add(men.Start, men.End, severityError, sessionref.CodeReadFailed, fmt.Sprintf("unknown session %q", men.SessionID))
				continue
			}
			r, seen := rank[men.SessionID]
			if !seen {
				r = len(rank) + 1
				rank[men.SessionID] = r
			}
			if r > maxRefs {
				add(men.Start, men.End, severityError, sessionref.CodeTooMany,
					fmt.Sprintf("more than %d distinct sessions are referenced", maxRefs))
				continue
			}
			err, done := checked[men.SessionID]
			if !done {
				err = s.diags.recallError(ctx, snap, men.SessionID, cfg.Limits())
				checked[men.SessionID] = err
			}
			if err != nil && ctx.Err() == nil {
				code := sessionref.CodeOf(err)
				if code == "" {
					code = sessionref.CodeReadFailed
				}
				add(men.Start, men.End, severityError, code, render.ErrorText(err))
			}
		}
	}
	if root := s.workspace(); root != "" {
		for _, fm := range fileMentionsIn(doc.Text, m) {
			if typing(doc, fm.Start, fm.End) {
				continue
			}
			switch f := fileref.StatMention(root, fm.Path); {
			case f.OutsideWorkspace:
				add(fm.Start, fm.End, severityWarning, "", fmt.Sprintf("%s is outside the workspace", fm.Path))
			case f.Missing:
				add(fm.Start, fm.End, severityWarning, "", fmt.Sprintf("%s does not exist in the workspace", fm.Path))
			case fm.Lines != nil:
				if msg, sev := rangeProblem(root, fm.Mention, f); msg != "" {
					add(fm.Start, fm.End, sev, "", msg)
				}
			case f.Kind == fileref.KindDirectory:
				if t, over := s.directoryOverBudget(ctx, fm.Path, cfg.DirectoryTokenBudget); over {
					add(fm.Start, fm.End, severityWarning, codeDirectoryBudget, budgetMessage(fm.Path, t, cfg.DirectoryTokenBudget))
				}
			}
		}
	}
	return out
}

// typing reports whether the mention at [start, end) of doc is still being
// typed: the last change ended inside it or right after it. It is checked
// once the cursor has moved on (the next change elsewhere), so a half
// written mention is not flagged as broken at every keystroke.
func typing(doc document, start, end int) bool {
	return doc.Typing >= start && doc.Typing <= end
}

// needsIndex reports whether checking mentions needs the session index:
// whether any of them is well formed.
func needsIndex(mentions []sessionref.MentionSpan) bool {
	for _, m := range mentions {
		if m.Err == nil {
			return true
		}
	}
	return false
}
