package server

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"sync"

	"go.uber.org/zap"

	"github.com/dsh-refls/dsh-refls/sessionref"
)

// sessionsAdapter is the production Sessions: package sessionref's title
// index, with every lookup answered from one immutable snapshot.
type sessionsAdapter struct {
	ix     *sessionref.Index
	logger *zap.Logger
	// cachePath, when set, is the persisted index: loaded before the first
	// build (so a restart reads only what changed) and saved after each.
	cachePath string

	// loadOnce guards the cache load.
	loadOnce sync.Once
}

// openSessionref opens the sessionref index of root, without a cache.
func openSessionref(root string) (Sessions, error) {
	return &sessionsAdapter{ix: sessionref.NewIndex(root, sessionref.IndexOptions{}), logger: zap.NewNop()}, nil
}

// NewSessionrefFactory returns a factory whose indexes use opts (logger,
// parallelism). With useCache the index persists under the user cache dir
// (sessionref.DefaultCachePath), which `dsh-refls index` also fills.
func NewSessionrefFactory(opts sessionref.IndexOptions, useCache bool) SessionsFactory {
	logger := opts.Logger
	if logger == nil {
		logger = zap.NewNop()
	}
	return func(root string) (Sessions, error) {
		a := &sessionsAdapter{ix: sessionref.NewIndex(root, opts), logger: logger}
		if useCache {
			path, err := sessionref.DefaultCachePath(root)
			if err != nil {
				logger.Warn("no index cache", zap.Error(err))
			} else {
				a.cachePath = path
			}
		}
		return a, nil
	}
}

// Build implements Sessions.
func (a *sessionsAdapter) Build(ctx context.Context, progress func(done, total int)) error {
	if a.cachePath != "" {
		a.loadOnce.Do(func() {
			if err := a.ix.LoadCache(a.cachePath); err != nil && !errors.Is(err, os.ErrNotExist) {
				a.logger.Warn("index cache not used", zap.String("path", a.cachePath), zap.Error(err))
			}
		})
	}
	if err := a.ix.Build(ctx, progress); err != nil {
		return err
	}
	if a.cachePath != "" {
		if err := a.ix.SaveCache(a.cachePath); err != nil {
			a.logger.Warn("index cache not saved", zap.String("path", a.cachePath), zap.Error(err))
		}
	}
	return nil
}

// Refresh implements Sessions.
func (a *sessionsAdapter) Refresh(ctx context.Context, paths []string) error {
	return a.ix.Refresh(ctx, paths)
}

// Status implements Sessions.
func (a *sessionsAdapter) Status() SessionStatus {
	snap := a.ix.Snapshot()
	return SessionStatus{
		Root:     a.ix.Root(),
		Sessions: len(snap.Sessions),
		Skipped:  snap.Skipped,
		Updated:  snap.Updated,
		Building: snap.Building,
	}
}

// Locate implements Sessions.
func (a *sessionsAdapter) Locate(id string) (sessionref.Entry, bool) {
	return a.ix.Snapshot().Locate(id)
}

// Candidates implements Sessions.
func (a *sessionsAdapter) Candidates(q sessionref.CandidateQuery) ([]sessionref.Candidate, bool, error) {
	return a.ix.Snapshot().Candidates(q)
}

// FindMentions implements Sessions.
func (a *sessionsAdapter) FindMentions(text string) []SessionMention {
	spans := sessionref.FindMentions(text)
	out := make([]SessionMention, len(spans))
	for i, m := range spans {
		out[i] = SessionMention{Start: m.Start, End: m.End, Label: m.Label, SessionID: m.SessionID, URI: m.URI, Bare: m.Bare, Err: m.Err}
	}
	return out
}

// Budget implements Sessions.
func (a *sessionsAdapter) Budget(lim sessionref.Limits) int { return sessionref.Budget(lim) }

// Preview implements Sessions.
func (a *sessionsAdapter) Preview(ctx context.Context, id string, lim sessionref.Limits) (*SessionPreview, error) {
	p, err := sessionref.PreviewSession(ctx, a.ix.Snapshot(), id, lim)
	if err != nil {
		return nil, err
	}
	out := &SessionPreview{Entry: p.Entry, Stats: p.Stats, CapturedThroughSeq: p.CapturedThroughSeq,
		CapturedFormatVersion: p.CapturedFormatVersion, Budget: p.Budget, Err: p.Err}
	for _, t := range p.Excerpt {
		out.Excerpt = append(out.Excerpt, Turn{Role: t.Role, Text: t.Text})
	}
	return out, nil
}

// PrepareText implements Sessions.
func (a *sessionsAdapter) PrepareText(ctx context.Context, targetID, text string, mode sessionref.Mode, explicit []sessionref.Reference, lim sessionref.Limits) (*PrepareResult, error) {
	r, err := sessionref.PrepareText(ctx, a.ix.Snapshot(), targetID, text, mode, explicit, lim)
	if err != nil {
		return nil, err
	}
	return &PrepareResult{Content: r.Content, References: r.References, AdditionalContext: r.AdditionalContext}, nil
}

// PrepareContent implements Sessions.
func (a *sessionsAdapter) PrepareContent(ctx context.Context, targetID string, blocks []json.RawMessage, mode sessionref.Mode, explicit []sessionref.Reference, lim sessionref.Limits) (*PrepareResult, error) {
	r, err := sessionref.PrepareContent(ctx, a.ix.Snapshot(), targetID, blocks, mode, explicit, lim)
	if err != nil {
		return nil, err
	}
	return &PrepareResult{Content: r.Content, References: r.References, AdditionalContext: r.AdditionalContext}, nil
}
