package server

import (
	"context"
	"fmt"
	"path"

	"go.uber.org/zap"

	"github.com/dsh-refls/dsh-refls/watch"
)

// watchStatus is the effective watch mode of the session root and of the
// workspace, and the degraded states of both.
func (s *Server) watchStatus() (mode, workspaceMode string, degraded []string) {
	mode = watchModeOff
	if sess := s.currentSessions(); sess != nil {
		st := sess.Status()
		if st.WatchMode != "" {
			mode = st.WatchMode
		}
		if st.Degraded != "" {
			degraded = append(degraded, "session watcher polling: "+st.Degraded)
		}
	}
	s.filesMu.Lock()
	clientWatches := s.clientWatches
	s.filesMu.Unlock()
	workspace := s.workspaceWatcher.Load()
	switch {
	case clientWatches:
		workspaceMode = workspaceWatchClient
	case workspace != nil:
		st := workspace.Status()
		workspaceMode = string(st.Mode)
		if st.Degraded != "" {
			degraded = append(degraded, "workspace watcher polling: "+st.Degraded)
		}
	default:
		workspaceMode = watchModeOff
	}
	return mode, workspaceMode, degraded
}

// workspaceWatchClient is the workspace watch mode when the editor reports
// changes through workspace/didChangeWatchedFiles.
const workspaceWatchClient = "client"

// applier is a file index that takes change notifications.
type applier interface {
	Apply(paths []string)
}

// watchWorkspace keeps the workspace file index fresh with a watcher that
// skips excluded directories, for clients that do not report workspace
// changes themselves; the index re-reads what changed. It runs until ctx
// ends.
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
	s.bgWG.Add(2)
	go func() {
		defer s.bgWG.Done()
		// dsh/status names the watcher once it is watching, so a client
		// that saw it there knows its next change will be seen.
		select {
		case <-w.Ready():
			s.workspaceWatcher.Store(w)
		case <-ctx.Done():
		}
	}()
	go func() {
		defer s.bgWG.Done()
		err := w.Run(ctx, func(b watch.Batch) {
			paths := b.Paths
			if b.Rescan {
				paths = []string{root}
			}
			a.Apply(paths)
			s.diags.scheduleAll()
			s.kickSizes()
		})
		if err != nil {
			s.logger.Warn("workspace watcher stopped", zap.Error(err))
		}
	}()
}
