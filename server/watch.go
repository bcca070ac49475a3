package server

import (
	"context"
	"fmt"
	"path"

	"go.uber.org/zap"

	"github.com/dsh-refls/dsh-refls/watch"
)

// startWatch keeps sess fresh: a watcher on the session root (outside the
// workspace, where editors report nothing) feeds changed paths to Refresh,
// and a batch that may have missed changes triggers a full rebuild. It runs
// until ctx ends. It returns the watcher, or nil when not watching.
func (s *Server) startWatch(ctx context.Context, sess Sessions) *watch.Watcher {
	mode, err := watch.ParseMode(s.config().Watch)
	if err != nil || mode == watch.ModeOff {
		return nil
	}
	root := sess.Status().Root
	w, err := watch.New(watch.Options{
		Root:   root,
		Mode:   mode,
		Logger: s.logger.Named("watch"),
		OnDegraded: func(reason string) {
			s.showMessage(messageTypeWarning, fmt.Sprintf("dsh-refls: watching %s by polling: %s", root, reason))
		},
	})
	if err != nil {
		s.logger.Warn("cannot watch the session root", zap.String("root", root), zap.Error(err))
		return nil
	}
	s.capsMu.Lock()
	s.watcher = w
	s.capsMu.Unlock()
	s.bgWG.Add(1)
	go func() {
		defer s.bgWG.Done()
		err := w.Run(ctx, func(b watch.Batch) {
			var rerr error
			if b.Rescan {
				rerr = sess.Build(ctx, nil)
			} else {
				rerr = sess.Refresh(ctx, b.Paths)
			}
			if rerr != nil && ctx.Err() == nil {
				s.logger.Warn("session index refresh failed", zap.Error(rerr))
			}
			s.diags.scheduleAll()
		})
		if err != nil {
			s.logger.Warn("session watcher stopped", zap.Error(err))
		}
	}()
	return w
}

// watchStatus is the effective watch mode of the session root and the
// degraded states of both watchers.
func (s *Server) watchStatus() (mode string, degraded []string) {
	s.capsMu.Lock()
	sessions, workspace := s.watcher, s.workspaceWatcher
	s.capsMu.Unlock()
	mode = watchModeOff
	if sessions != nil {
		st := sessions.Status()
		mode = string(st.Mode)
		if st.Degraded != "" {
			degraded = append(degraded, "session watcher polling: "+st.Degraded)
		}
	}
	if workspace != nil {
		if st := workspace.Status(); st.Degraded != "" {
			degraded = append(degraded, "workspace watcher polling: "+st.Degraded)
		}
	}
	return mode, degraded
}

// applier is a file index that takes change notifications.
type applier interface {
	Apply(paths []string)
}

// watchWorkspace keeps the workspace file index fresh with a watcher that
// skips excluded directories; the index re-reads what changed. It runs
// until ctx ends.
func (s *Server) watchWorkspace(ctx context.Context, root string, cfg Config, a applier) {
	mode, err := watch.ParseMode(cfg.Watch)
	if err != nil || mode == watch.ModeOff {
		return
	}
	excluded := map[string]bool{".git": true}
	for _, e := range cfg.ExcludedDirectories {
		excluded[e] = true
	}
	w, err := watch.New(watch.Options{
		Root:   root,
		Mode:   mode,
		Logger: s.logger.Named("watch-workspace"),
		Skip: func(rel string, isDir bool) bool {
			return isDir && excluded[path.Base(rel)]
		},
		OnDegraded: func(reason string) {
			s.showMessage(messageTypeWarning, fmt.Sprintf("dsh-refls: watching the workspace %s by polling: %s", root, reason))
		},
	})
	if err != nil {
		s.logger.Warn("cannot watch the workspace", zap.String("root", root), zap.Error(err))
		return
	}
	s.capsMu.Lock()
	s.workspaceWatcher = w
	s.capsMu.Unlock()
	s.bgWG.Add(1)
	go func() {
		defer s.bgWG.Done()
		err := w.Run(ctx, func(b watch.Batch) {
			paths := b.Paths
			if b.Rescan {
				paths = []string{root}
			}
			a.Apply(paths)
			s.diags.scheduleAll()
		})
		if err != nil {
			s.logger.Warn("workspace watcher stopped", zap.Error(err))
		}
	}()
}
