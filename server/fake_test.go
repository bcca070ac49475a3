package server

import (
	"context"
	"encoding/json"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dsh-refls/dsh-refls/sessionref"
)

// fakeSessions is an in-memory Sessions for protocol tests. Mentions are
// found with the real sessionref parser; preparation follows §2.3.1's
// normalisation so error codes can be provoked, and behaviours that need a
// slow or failing source are switched on per session id.
type fakeSessions struct {
	root    string
	entries []sessionref.Entry
	// overBudget lists ids whose preparation exceeds the budget.
	overBudget map[string]bool
	// blockPrepare makes preparation wait for cancellation.
	blockPrepare atomic.Bool
	// panicQuery makes Candidates panic for this query.
	panicQuery string
	// candidatesDelay slows every candidate query down.
	candidatesDelay time.Duration
	// buildDelay slows the index build down.
	buildDelay time.Duration
	// holdBuild, when set, keeps the first build from finishing until it
	// is closed.
	holdBuild chan struct{}
	// degraded, when set, is reported (twice) as the watcher falling back
	// to polling.
	degraded string

	ready     chan struct{}
	readyOnce sync.Once

	mu     sync.Mutex
	builds int
	cfg    SessionsConfig
	opened int
}

// factory is the SessionsFactory serving f, recording what it was asked.
func (f *fakeSessions) factory(cfg SessionsConfig) (Sessions, error) {
	f.mu.Lock()
	f.cfg = cfg
	f.opened++
	f.mu.Unlock()
	return f, nil
}

func newFakeSessions(root string, now time.Time) *fakeSessions {
	cwd := "/home/dev/proj"
	other := "/home/dev/other"
	return &fakeSessions{
		root: root,
		entries: []sessionref.Entry{
			{ID: "s-alpha", Cwd: cwd, HasCwd: true, CreatedAt: now.Add(-time.Hour).UnixMilli(), Title: "Fix the parser", HasTitle: true},
			{ID: "s-beta", Cwd: other, HasCwd: true, CreatedAt: now.Add(-2 * time.Hour).UnixMilli(), Title: "Write `docs` for <api>", HasTitle: true},
			{ID: "s-gamma", CreatedAt: now.Add(-3 * time.Hour).UnixMilli(), Title: "Child task", HasTitle: true, DescriptorLabel: "Check direct child"},
			{ID: "s-delta", Cwd: cwd, HasCwd: true, CreatedAt: now.Add(-4 * time.Hour).UnixMilli(), Title: "Huge log", HasTitle: true},
			{ID: "s-target", Cwd: cwd, HasCwd: true, CreatedAt: now.Add(-5 * time.Hour).UnixMilli(), Title: "The current session", HasTitle: true},
		},
		overBudget: map[string]bool{"s-delta": true},
		ready:      make(chan struct{}),
	}
}

// Run builds (slowly, if asked), closes Ready and waits for ctx, like
// the live store.
func (f *fakeSessions) Run(ctx context.Context) error {
	defer f.readyOnce.Do(func() { close(f.ready) })
	f.mu.Lock()
	cfg := f.cfg
	f.mu.Unlock()
	if f.degraded != "" && cfg.OnDegraded != nil {
		cfg.OnDegraded(f.degraded)
		cfg.OnDegraded(f.degraded)
	}
	for i := range f.entries {
		select {
		case <-time.After(f.buildDelay / time.Duration(len(f.entries))):
		case <-ctx.Done():
			return nil
		}
		if cfg.Progress != nil {
			cfg.Progress(i+1, len(f.entries))
		}
	}
	if f.holdBuild != nil {
		select {
		case <-f.holdBuild:
		case <-ctx.Done():
			return nil
		}
	}
	f.mu.Lock()
	f.builds++
	f.mu.Unlock()
	f.readyOnce.Do(func() { close(f.ready) })
	if cfg.OnUpdate != nil {
		cfg.OnUpdate()
	}
	<-ctx.Done()
	return nil
}

func (f *fakeSessions) Ready() <-chan struct{} { return f.ready }

func (f *fakeSessions) Status() SessionStatus {
	f.mu.Lock()
	building := f.builds == 0
	f.mu.Unlock()
	f.mu.Lock()
	mode := f.cfg.Watch
	f.mu.Unlock()
	return SessionStatus{Root: f.root, Sessions: len(f.entries), Updated: time.Now(), Building: building, WatchMode: mode, Degraded: f.degraded,
		Skipped: []sessionref.Skipped{{Path: f.root + "/flat.jsonl", Reason: "flat layout"}}}
}

func (f *fakeSessions) Locate(id string) (sessionref.Entry, bool) {
	for _, e := range f.entries {
		if e.ID == id {
			return e, true
		}
	}
	return sessionref.Entry{}, false
}

func (f *fakeSessions) Candidates(q sessionref.CandidateQuery) ([]sessionref.Candidate, bool, error) {
	if f.panicQuery != "" && q.Query == f.panicQuery {
		panic("fake index failure")
	}
	time.Sleep(f.candidatesDelay)
	if q.Limit < 0 {
		return nil, false, sessionref.Errorf(sessionref.CodeInvalidReference, "negative limit")
	}
	limit := q.Limit
	if limit == 0 {
		limit = 50
	}
	var out []sessionref.Candidate
	low := strings.ToLower(q.Query)
	for _, e := range f.entries {
		if e.ID == q.TargetID {
			continue
		}
		hay := strings.ToLower(e.ID + "\x00" + e.Cwd + "\x00" + e.Label() + "\x00" + e.DisplayTitle())
		if !strings.Contains(hay, low) {
			continue
		}
		c := sessionref.Candidate{SessionID: e.ID, Label: e.Label(), DisplayTitle: e.DisplayTitle(),
			SameWorkspace: e.HasCwd && e.Cwd == q.TargetCwd, CreatedAt: e.CreatedAt,
			Mention: sessionref.Mention(e.DisplayTitle(), e.ID)}
		if e.HasCwd {
			cwd := e.Cwd
			c.Cwd = &cwd
		}
		out = append(out, c)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].CreatedAt > out[j].CreatedAt })
	if len(out) > limit {
		return out[:limit], true, nil
	}
	return out, false, nil
}

func (f *fakeSessions) FindMentions(text string) []sessionref.MentionSpan {
	return sessionref.FindMentions(text)
}

func (f *fakeSessions) Budget(lim sessionref.Limits) int {
	if lim.MaxReferenceBytes > 0 {
		return lim.MaxReferenceBytes
	}
	return 65536
}

func (f *fakeSessions) Preview(ctx context.Context, id string, lim sessionref.Limits) (*sessionref.Preview, error) {
	e, ok := f.Locate(id)
	if !ok {
		return nil, &sessionref.Error{Code: sessionref.CodeReadFailed, Message: "unknown session", SessionID: id}
	}
	seq := int64(41)
	p := &sessionref.Preview{Entry: e, CapturedThroughSeq: &seq, Budget: f.Budget(lim),
		Stats:   sessionref.Stats{OriginalMessages: 4, RetainedMessages: 4},
		Excerpt: []sessionref.Turn{{Role: "user", Text: "please fix ```the``` parser"}, {Role: "assistant", Text: "Done."}}}
	if f.overBudget[id] {
		p.Err = &sessionref.Error{Code: sessionref.CodeBudgetExceeded, Message: "does not fit the budget", SessionID: id}
	}
	return p, nil
}

// normalise applies §2.3.1 to refs.
func (f *fakeSessions) normalise(target string, refs []sessionref.Reference, lim sessionref.Limits) ([]sessionref.Reference, error) {
	maxRefs := lim.MaxReferences
	if maxRefs == 0 {
		maxRefs = 3
	}
	seen := map[string]bool{}
	var out []sessionref.Reference
	for _, r := range refs {
		if r.SessionID == target {
			return nil, &sessionref.Error{Code: sessionref.CodeSelfReference, Message: "self reference", SessionID: r.SessionID}
		}
		if seen[r.SessionID] {
			continue
		}
		seen[r.SessionID] = true
		out = append(out, r)
	}
	if len(out) > maxRefs {
		return nil, sessionref.Errorf(sessionref.CodeTooMany, "%d references, at most %d", len(out), maxRefs)
	}
	for _, r := range out {
		if _, ok := f.Locate(r.SessionID); !ok {
			return nil, &sessionref.Error{Code: sessionref.CodeReadFailed, Message: "no log", SessionID: r.SessionID}
		}
		if f.overBudget[r.SessionID] {
			return nil, &sessionref.Error{Code: sessionref.CodeBudgetExceeded, Message: "over budget", SessionID: r.SessionID}
		}
	}
	return out, nil
}

func (f *fakeSessions) PrepareText(ctx context.Context, target, text string, mode sessionref.Mode, explicit []sessionref.Reference, lim sessionref.Limits) (*PrepareResult, error) {
	if f.blockPrepare.Load() {
		<-ctx.Done()
		return nil, &sessionref.Error{Code: sessionref.CodeCancelled, Message: "cancelled", Err: ctx.Err()}
	}
	rewritten, refs, err := sessionref.ParseText(text)
	if err != nil {
		return nil, err
	}
	if explicit != nil {
		refs = explicit
	}
	if mode == sessionref.ModePreserve {
		rewritten = text
	}
	refs, err = f.normalise(target, refs, lim)
	if err != nil {
		return nil, err
	}
	content, _ := json.Marshal(rewritten)
	res := &PrepareResult{Content: content, References: refs}
	if len(refs) > 0 {
		res.AdditionalContext = &sessionref.ContextMessage{Role: "user", ID: "fixed",
			Source:  sessionref.ContextSource{Kind: "session-reference", Form: "recall", Version: 1},
			Content: []sessionref.ContentBlock{{Type: "text", Text: "## Referenced sessions"}}}
	}
	return res, nil
}

func (f *fakeSessions) PrepareContent(ctx context.Context, target string, blocks []json.RawMessage, mode sessionref.Mode, explicit []sessionref.Reference, lim sessionref.Limits) (*PrepareResult, error) {
	var texts []string
	for _, b := range blocks {
		var tb struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if json.Unmarshal(b, &tb) == nil && tb.Type == "text" {
			texts = append(texts, tb.Text)
		}
	}
	res, err := f.PrepareText(ctx, target, strings.Join(texts, "\n"), mode, explicit, lim)
	if err != nil {
		return nil, err
	}
	res.Content, _ = json.Marshal(blocks)
	return res, nil
}

// uriOf is the canonical URI of a session id.
func uriOf(id string) string { return sessionref.EncodeURI(id) }
