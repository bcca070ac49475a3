package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/dsh-refls/dsh-refls/server/internal/memtune"
	"github.com/dsh-refls/dsh-refls/server/internal/render"
	"github.com/dsh-refls/dsh-refls/sessionref/dshlog"
	"github.com/dsh-refls/dsh-refls/sessionref/titles"
)

// openSessions opens the session index for cfg's root, replacing the
// current one when the root or the watch mode changed.
func (s *Server) openSessions(cfg Config) error {
	flagRoot := cfg.SessionsRoot
	if flagRoot == "" {
		flagRoot = s.opts.SessionsRoot
	}
	open := s.opts.OpenSessions
	if open == nil {
		open = NewLiveSessionsFactory(false)
	}
	root, err := resolveRoot(flagRoot)
	if err != nil {
		return &configError{Field: "sessionsRoot", Msg: err.Error()}
	}
	if h := s.sessions.Load(); h != nil && h.s.Status().Root == root && h.watch == cfg.Watch {
		s.openRecall(h, cfg.RecallSearch)
		return nil
	}
	// Cancel the old index without waiting for it here (the read loop
	// goes on at once); the new one starts only once the old one stopped,
	// watcher included, so a burst of root changes never holds a watcher
	// (an inotify instance, 128 per user by default) per change.
	old := s.sessions.Load()
	if old != nil {
		defer close(old.replaced)
		old.cancel()
	}
	report := s.newProgressReporter()
	var degradedOnce sync.Once
	sess, err := open(SessionsConfig{
		Root:     root,
		Watch:    cfg.Watch,
		Logger:   s.logger.Named("sessions"),
		Progress: report.update,
		OnUpdate: func() { s.diags.scheduleAll(); s.memory.Touch(); s.kickRecall(); s.refreshInlayHints() },
		OnDegraded: func(reason string) {
			degradedOnce.Do(func() {
				s.showMessage(messageTypeWarning, fmt.Sprintf("dsh-refls: watching %s by polling: %s", root, reason))
			})
		},
		// No collection while the cache is restored: its heap is the
		// index, all live (100,000 sessions: see the commit that set it).
		DuringRestore: s.gc.Pause,
		// The attach and the build give way while calls are answered: the
		// complete list right after a restart (100,000 sessions) shared
		// the processors with the watch of every session directory, then
		// the check of every log.
		Yield: s.answering.waitBriefly,
	})
	if err != nil {
		// The old index is closed already: say there is none.
		if old != nil {
			s.sessions.CompareAndSwap(old, nil)
		}
		return &configError{Field: "sessionsRoot", Msg: err.Error()}
	}
	if !rootExists(root) {
		// The index waits for the root to appear (SPEC §1.1), but a
		// root that is not there is most often a mistyped setting: say
		// so now rather than list no sessions without a word.
		s.showMessage(messageTypeWarning, missingRootMessage(root))
	}
	ctx, cancel := context.WithCancel(s.bgCtx)
	h := &sessionsHolder{s: sess, watch: cfg.Watch, ctx: ctx, cancel: cancel,
		stopped: make(chan struct{}), replaced: make(chan struct{})}
	s.sessions.Store(h)
	s.runSessions(ctx, sess, report, h.stopped, old)
	s.openRecall(h, cfg.RecallSearch)
	if old == nil {
		s.firstBuild.Store(report)
	}
	return nil
}

// sessionsStopTimeout bounds the wait for a replaced session index to stop;
// it stops at once unless a log read ignores cancellation.
const sessionsStopTimeout = 5 * time.Second

// sessionsSettle is how long a session index that replaces another waits,
// once the old one stopped, before it starts: a burst of configuration
// changes (one per keystroke in a settings field, or a client replaying
// its settings) cancels every index but the last before any of them reads
// the store.
const sessionsSettle = 50 * time.Millisecond

// openFiles opens the workspace file index in the background. Until it is
// built, an opened but unbuilt fileref index answers with the same rules
// (live listings, a bounded walk), so completion answers at once.
func (s *Server) openFiles(root string, cfg Config) {
	if root == "" {
		return
	}
	ctx, cancel := context.WithCancel(s.bgCtx)
	interim := openInterimFiles(root, cfg.ExcludedDirectories, s.logger.Named("files"))
	open := s.opts.OpenFiles
	holder := &filesHolder{f: interim, building: open != nil, root: root, cfg: cfg, ctx: ctx, cancel: cancel}
	s.filesMu.Lock()
	old := s.files.Swap(holder)
	s.filesMu.Unlock()
	if old != nil {
		old.cancel()
		_ = old.f.Close()
	}
	if open == nil {
		return
	}
	s.bgWG.Add(1)
	go func() {
		defer s.bgWG.Done()
		start := time.Now()
		f, err := open(ctx, root, cfg.ExcludedDirectories)
		if err != nil {
			if ctx.Err() == nil {
				s.logger.Warn("workspace file index unavailable; listing directories live", zap.String("root", root), zap.Error(err))
				s.filesMu.Lock()
				if s.files.CompareAndSwap(holder, &filesHolder{f: interim, root: root, cfg: cfg, ctx: ctx, cancel: cancel}) {
					s.pendingChanges, s.pendingOverflow = nil, false
				}
				s.filesMu.Unlock()
			}
			return
		}
		if !s.publishFiles(holder, f) {
			_ = f.Close()
			return
		}
		s.logger.Info("workspace indexed", zap.String("root", root), zap.Int("files", f.Count()), zap.Duration("took", time.Since(start)))
		s.diags.scheduleAll()
		s.kickSizes()
	}()
}

// publishFiles replaces the interim holder with the built index f, unless
// a newer configuration replaced it meanwhile. It applies the changes the
// client reported during the build, and starts the workspace watcher when
// the client does not watch files itself.
func (s *Server) publishFiles(interim *filesHolder, f Files) bool {
	s.filesMu.Lock()
	defer s.filesMu.Unlock()
	built := &filesHolder{f: f, root: interim.root, cfg: interim.cfg, ctx: interim.ctx, cancel: interim.cancel}
	if !s.files.CompareAndSwap(interim, built) {
		return false
	}
	pending, overflow := s.pendingChanges, s.pendingOverflow
	s.pendingChanges, s.pendingOverflow = nil, false
	a, ok := f.(applier)
	if !ok {
		return true
	}
	if overflow {
		pending = []string{built.root}
	}
	if len(pending) > 0 {
		a.Apply(pending)
	}
	if !s.clientWatches {
		s.watchWorkspace(built.ctx, built.root, built.cfg, a)
	}
	return true
}

func (s *Server) currentSessions() Sessions {
	if h := s.sessions.Load(); h != nil {
		return h.s
	}
	return nil
}

func (s *Server) currentFiles() Files {
	if h := s.files.Load(); h != nil {
		return h.f
	}
	return nil
}

// computeConfig computes the configuration from scratch, as gopls does on
// every change: the defaults (with the --watch flag), then the client's
// options, then the workspace root as the default cwd. options are the
// initializationOptions at initialize and the "dsh" settings section
// afterwards: that section holds every option that is set (docs/editors.md),
// and clients send the same options as initializationOptions, so the latest
// section takes their place instead of layering on them. Nothing carries
// over from an earlier configuration: an option the client stops sending
// returns to its default.
func (s *Server) computeConfig(options json.RawMessage, root string) (Config, []string, error) {
	base := DefaultConfig()
	base.Watch = s.opts.Watch
	cfg, unknown, err := applyConfig(base, options)
	if err != nil {
		return Config{}, nil, err
	}
	if cfg.Cwd == "" {
		cfg.Cwd = root
	}
	return cfg, unknown, nil
}

// didChangeConfiguration applies settings under "dsh". A notification
// cannot be answered, so an invalid value is reported with
// window/showMessage (naming the code and field) and in dsh/status, and the
// previous configuration stays.
func (s *Server) didChangeConfiguration(params json.RawMessage) error {
	var p didChangeConfigurationParams
	if err := json.Unmarshal(params, &p); err != nil {
		return fmt.Errorf("decoding didChangeConfiguration: %w", err)
	}
	var sections map[string]json.RawMessage
	if err := json.Unmarshal(p.Settings, &sections); err != nil {
		sections = nil
	}
	raw, ok := sections[configSection]
	if !ok {
		return nil
	}
	cfg, unknown, err := s.computeConfig(raw, s.workspaceRoot)
	if err != nil {
		s.cfgMu.Lock()
		s.configErr = render.ErrorText(err)
		s.cfgMu.Unlock()
		s.showMessage(messageTypeError, "dsh-refls: settings not applied: "+render.ErrorText(err))
		return err
	}
	if len(unknown) > 0 {
		s.logger.Warn("unknown settings ignored", zap.Strings("keys", unknown))
	}
	s.cfgMu.Lock()
	prev := s.cfg
	s.cfg = cfg
	s.configErr = ""
	s.cfgMu.Unlock()
	root := s.workspaceRoot
	if !slices.Equal(prev.ExcludedDirectories, cfg.ExcludedDirectories) {
		s.openFiles(root, cfg)
	}
	if err := s.openSessions(cfg); err != nil {
		s.showMessage(messageTypeError, render.ErrorText(err))
		return err
	}
	s.openFrecency(cfg.Frecency)
	s.diags.scheduleAll()
	return nil
}

// runSessions runs sess in the background until ctx ends, and ends report
// when its first build has finished.
func (s *Server) runSessions(ctx context.Context, sess Sessions, report *progressReporter, stopped chan struct{}, prev *sessionsHolder) {
	s.bgWG.Add(2)
	go func() {
		defer s.bgWG.Done()
		defer close(stopped)
		if prev != nil {
			if !s.awaitSessionsStop(ctx, prev) {
				return // replaced before it started: it never reads the store
			}
		}
		if err := sess.Run(ctx); err != nil && ctx.Err() == nil {
			s.logger.Warn("session index stopped", zap.String("root", sess.Status().Root), zap.Error(err))
		}
	}()
	go func() {
		defer s.bgWG.Done()
		start := time.Now()
		restoreGC := s.gc.LowerWithLimit(memtune.TitleBuildGCPercent) // until the first build ends
		select {
		case <-sess.Ready():
			// The limit stays while the index is open (HoldLimit); taken
			// before the build's is given back, so there is no gap.
			steady := s.gc.HoldLimit()
			defer func() { <-ctx.Done(); steady() }()
			restoreGC()
		case <-ctx.Done():
			restoreGC()
			report.end(ctx.Err())
			return
		}
		st := sess.Status()
		switch {
		case ctx.Err() != nil:
			report.end(ctx.Err())
			s.logger.Debug("session index build cancelled", zap.String("root", st.Root))
		case st.Problem != "":
			report.end(errors.New(st.Problem))
			s.logger.Warn("session index build failed", zap.String("root", st.Root), zap.String("error", st.Problem))
		default:
			report.end(nil)
			s.logger.Info("session index built", zap.String("root", st.Root), zap.Int("sessions", st.Sessions),
				zap.Int("skipped", len(st.Skipped)), zap.Duration("took", time.Since(start)))
		}
	}()
}

// awaitSessionsStop waits until the replaced index prev stopped (bounded
// by sessionsStopTimeout) and then for sessionsSettle, and reports whether
// the index of ctx should still start.
func (s *Server) awaitSessionsStop(ctx context.Context, prev *sessionsHolder) bool {
	stopTimer := time.NewTimer(sessionsStopTimeout)
	defer stopTimer.Stop()
	select {
	case <-prev.stopped:
	case <-stopTimer.C:
		s.logger.Warn("the previous session index did not stop in time", zap.String("root", prev.s.Status().Root))
	}
	settle := time.NewTimer(sessionsSettle)
	defer settle.Stop()
	select {
	case <-settle.C:
		return ctx.Err() == nil
	case <-ctx.Done():
		return false
	}
}

// readySessions returns the session index once its first build has
// finished, waiting until then or until ctx ends. It returns nil when no
// index is open.
func (s *Server) readySessions(ctx context.Context) (Sessions, error) {
	return s.waitSessions(ctx, false)
}

// listingSessions returns the session index as soon as its snapshot lists
// every session it knows: once a stored index has been restored (it lists
// what the last save knew, and a clean shutdown saves what changed) or
// the first build has finished. Sessions that changed while no server ran
// show once the build has checked their logs, as completion's do.
func (s *Server) listingSessions(ctx context.Context) (Sessions, error) {
	return s.waitSessions(ctx, true)
}

// waitSessions waits for the current session index to be ready, or, when
// restoredToo, restored from its stored copy.
func (s *Server) waitSessions(ctx context.Context, restoredToo bool) (Sessions, error) {
	for {
		h := s.sessions.Load()
		if h == nil {
			return nil, nil
		}
		var restored <-chan struct{} // nil: never
		if restoredToo {
			restored = h.s.Restored()
		}
		select {
		case <-h.s.Ready():
			return h.s, nil
		case <-restored:
			return h.s, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-h.ctx.Done():
			// Replaced by another root (or the connection ended): wait for
			// the current one instead.
			select {
			case <-h.replaced:
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-s.bgCtx.Done():
			}
			if s.sessions.Load() == h {
				return nil, fmt.Errorf("the session index of %s was closed: %w", h.s.Status().Root, context.Canceled)
			}
		}
	}
}

// readySnapshot is the snapshot of the session index once its first build
// has finished (see readySessions); nil when no index is open. A request
// takes it once and answers everything from it.
func (s *Server) readySnapshot(ctx context.Context) (*titles.Snapshot, error) {
	sess, err := s.readySessions(ctx)
	if err != nil || sess == nil {
		return nil, err
	}
	return sess.Snapshot(), nil
}

// listingSnapshot is the snapshot of the session index once it lists
// every session it knows (see listingSessions); nil when no index is open.
func (s *Server) listingSnapshot(ctx context.Context) (*titles.Snapshot, error) {
	sess, err := s.listingSessions(ctx)
	if err != nil || sess == nil {
		return nil, err
	}
	return sess.Snapshot(), nil
}

// resolveRoot applies §1.1 through sessionref.
// rootExists reports whether the sessions root is there now; an error
// other than "does not exist" (a permission problem) is left to the
// index, which reports it.
func rootExists(root string) bool {
	_, err := os.Stat(root)
	return !errors.Is(err, fs.ErrNotExist)
}

// missingRootMessage tells the user that no sessions can be listed from
// root, and what to set instead.
func missingRootMessage(root string) string {
	return fmt.Sprintf("dsh-refls: the sessions root %s does not exist: no sessions are listed until dsh writes one there. "+
		"Set sessionsRoot to the directory dsh keeps its sessions in (by default ~/.dsh/sessions, or $DSH_HOME/sessions).", root)
}

func resolveRoot(flagValue string) (string, error) {
	return dshlog.ResolveRoot(flagValue)
}
