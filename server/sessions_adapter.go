package server

import (
	"context"
	"fmt"

	"go.uber.org/zap"

	"github.com/dsh-refls/dsh-refls/sessionref/live"
	"github.com/dsh-refls/dsh-refls/sessionref/titles"
	"github.com/dsh-refls/dsh-refls/watch"
)

// liveSessions is the production Sessions: a live.Store (the title index
// with its cache and its watcher on the sessions root), with every lookup
// answered from one immutable snapshot of the index.
type liveSessions struct {
	store *live.Store
}

// NewLiveSessionsFactory returns the production SessionsFactory. With
// useCache the index persists under the user cache dir
// (titles.DefaultCachePath), which `dsh-refls index` also fills, so a
// restart reads only what changed.
func NewLiveSessionsFactory(useCache bool) SessionsFactory {
	return func(cfg SessionsConfig) (Sessions, error) { return openLiveSessions(cfg, useCache) }
}

// openLiveSessions opens a live store for cfg.
func openLiveSessions(cfg SessionsConfig, useCache bool) (Sessions, error) {
	mode, err := watch.ParseMode(cfg.Watch)
	if err != nil {
		return nil, fmt.Errorf("opening sessions root %s: %w", cfg.Root, err)
	}
	cachePath := live.NoCache
	if useCache {
		cachePath = "" // the default location
	}
	logger := cfg.Logger
	if logger == nil {
		logger = zap.NewNop()
	}
	st, err := live.Open(live.Options{
		Root: cfg.Root, Watch: mode, CachePath: cachePath, Logger: logger,
		OnDegraded: cfg.OnDegraded, Progress: cfg.Progress, OnUpdate: cfg.OnUpdate, DuringRestore: cfg.DuringRestore,
		Yield: cfg.Yield,
	})
	if err != nil {
		return nil, err
	}
	return &liveSessions{store: st}, nil
}

// Run implements Sessions.
func (a *liveSessions) Run(ctx context.Context) error { return a.store.Run(ctx) }

// Ready implements Sessions.
func (a *liveSessions) Ready() <-chan struct{} { return a.store.Ready() }

// Restored implements Sessions.
func (a *liveSessions) Restored() <-chan struct{} { return a.store.Restored() }

// Status implements Sessions.
func (a *liveSessions) Status() SessionStatus {
	snap := a.store.Index().Snapshot()
	st := a.store.Status()
	ready := false
	select {
	case <-a.store.Ready():
		ready = true
	default:
	}
	return SessionStatus{
		Root:      st.Root,
		Sessions:  len(snap.Sessions),
		Skipped:   snap.Skipped,
		Updated:   snap.Updated,
		Building:  snap.Building || !ready,
		WatchMode: string(st.WatchMode),
		Degraded:  st.Degraded,
		Problem:   st.RefreshError,

		UnknownEvents: snap.UnknownEvents,
		CacheLoaded:   st.CacheLoaded,
	}
}

// Snapshot implements Sessions.
func (a *liveSessions) Snapshot() *titles.Snapshot { return a.store.Index().Snapshot() }
