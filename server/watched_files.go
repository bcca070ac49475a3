package server

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"

	"go.lsp.dev/protocol"
	"go.uber.org/zap"
)

// Workspace watching by the editor (LSP workspace/didChangeWatchedFiles).
const (
	// watchedFilesRegistrationID names the one registration the server makes.
	watchedFilesRegistrationID = "dsh-refls/workspace-files"
	// watchedFilesGlob asks for every file under the workspace: the index
	// applies its own exclusions and ignore files.
	watchedFilesGlob = "**/*"
	// maxPendingChanges bounds the changes kept while the workspace index
	// is building; beyond it the index re-reads the whole workspace once
	// it is built.
	maxPendingChanges = 10000
)

// registerFileWatching asks a client that supports it to watch the
// workspace and report changes. It runs in the background: a
// server-to-client request must not block the read loop. If the client
// refuses, the server watches the workspace itself.
func (s *Server) registerFileWatching() {
	s.filesMu.Lock()
	clientWatches := s.clientWatches
	s.filesMu.Unlock()
	root := s.workspace()
	if !clientWatches || root == "" {
		return
	}
	var glob any = watchedFilesGlob
	if s.clientCaps().relativePatterns {
		glob = relativePattern{BaseURI: pathToURI(root), Pattern: watchedFilesGlob}
	}
	params := registrationParams{Registrations: []registration{{
		ID:              watchedFilesRegistrationID,
		Method:          protocol.MethodWorkspaceDidChangeWatchedFiles,
		RegisterOptions: didChangeWatchedFilesRegistrationOptions{Watchers: []fileSystemWatcher{{GlobPattern: glob}}},
	}}}
	s.bgWG.Add(1)
	go func() {
		defer s.bgWG.Done()
		ctx, cancel := context.WithTimeout(s.bgCtx, outgoingCallTimeout)
		defer cancel()
		err := protocol.Call(ctx, s.conn, protocol.MethodClientRegisterCapability, params, nil)
		if err == nil {
			s.logger.Debug("the client watches the workspace", zap.String("root", root))
			return
		}
		if s.bgCtx.Err() != nil {
			return
		}
		s.logger.Warn("the client did not register workspace file watching; watching it here", zap.Error(err))
		s.filesMu.Lock()
		defer s.filesMu.Unlock()
		s.clientWatches = false
		if h := s.files.Load(); h != nil && !h.building {
			if a, ok := h.f.(applier); ok {
				s.watchWorkspace(h.ctx, h.root, h.cfg, a)
			}
		}
	}()
}

// didChangeWatchedFiles applies the workspace changes a client reports to
// the file index, or keeps them until the index is built.
func (s *Server) didChangeWatchedFiles(params json.RawMessage) error {
	var p didChangeWatchedFilesParams
	if err := json.Unmarshal(params, &p); err != nil {
		return fmt.Errorf("decoding didChangeWatchedFiles: %w", err)
	}
	paths := make([]string, 0, len(p.Changes))
	for _, c := range p.Changes {
		path := uriToPath(c.URI)
		if !filepath.IsAbs(path) {
			s.logger.Warn("watched-file change without a file URI ignored", zap.String("uri", c.URI))
			continue
		}
		paths = append(paths, path)
	}
	if len(paths) == 0 {
		return nil
	}
	s.filesMu.Lock()
	h := s.files.Load()
	switch {
	case h == nil:
	case h.building:
		if len(s.pendingChanges)+len(paths) > maxPendingChanges {
			s.pendingChanges, s.pendingOverflow = nil, true
		} else if !s.pendingOverflow {
			s.pendingChanges = append(s.pendingChanges, paths...)
		}
	default:
		if a, ok := h.f.(applier); ok {
			a.Apply(paths)
		}
	}
	s.filesMu.Unlock()
	s.diags.scheduleAll()
	s.kickSizes()
	return nil
}
