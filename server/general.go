package server

import (
	"context"
	"encoding/json"
	"io"
	"runtime"
	"time"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
	"go.uber.org/zap"

	"github.com/dsh-refls/dsh-refls/completion"
	"github.com/dsh-refls/dsh-refls/server/internal/lspwire"
	"github.com/dsh-refls/dsh-refls/server/internal/memtune"
)

// Serve runs the server over rwc until the client sends exit or closes its
// end. It returns the process exit code the protocol asks for: 0 after
// shutdown, 1 otherwise.
func Serve(ctx context.Context, rwc io.ReadWriteCloser, opts Options) (int, error) {
	if opts.Logger == nil {
		opts.Logger = zap.NewNop()
	}
	if opts.Watch == "" {
		opts.Watch = watchModeAuto
	}
	if opts.DiagnosticsDelay <= 0 {
		opts.DiagnosticsDelay = defaultDiagnosticsDelay
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	n := opts.MaxConcurrency
	if n <= 0 {
		n = max(2, runtime.NumCPU())
	}
	s := &Server{
		opts:     opts,
		logger:   opts.Logger,
		sem:      make(chan struct{}, n),
		docs:     newDocuments(),
		exited:   make(chan struct{}),
		exitCode: 1,
		cfg:      DefaultConfig(),
		memory:   memtune.NewReleaser(),
		gc:       memtune.Process(),
	}
	defer s.memory.Stop()
	s.cfg.Watch = opts.Watch
	s.caps.encoding = EncodingUTF16
	s.bgCtx, s.bgCancel = context.WithCancel(ctx)
	s.diags = newDiagnostics(s, opts.DiagnosticsDelay)

	stream := lspwire.New(rwc, lspwire.Hooks{
		Trace:        opts.Trace,
		WriteFailed:  s.cancels.cancelAll,
		Written:      s.answerDone,
		FrameWritten: s.memory.Touch,
	})
	s.stream = stream
	s.conn = jsonrpc2.NewConn(stream, jsonrpc2.WithCodec(jsonCodec{}))
	connCtx := protocol.WithLogger(s.bgCtx, NewSlogLogger(s.logger))
	s.conn.Go(connCtx, s.keepServing(s.cancelHandler(connCtx, s.handle)))

	select {
	case <-s.conn.Done():
	case <-s.exited:
		// Requests sent before exit are still answered.
		s.stream.WaitDrained()
		s.closeConn()
	case <-ctx.Done():
		s.closeConn()
	}
	s.bgCancel()
	s.diags.stop()
	s.bgWG.Wait()
	s.stopFrecency()
	if h := s.sessions.Load(); h != nil && h.cancel != nil {
		h.cancel()
	}
	if h := s.files.Load(); h != nil {
		h.cancel()
		_ = h.f.Close()
	}
	err := s.conn.Err()
	s.lifeMu.Lock()
	code := s.exitCode
	if s.state == stateShutdown {
		code = 0
	}
	select {
	case <-s.exited:
		code = s.exitCode
	default:
	}
	s.lifeMu.Unlock()
	return code, err
}

// closeConn closes the connection, waiting at most closeTimeout: a read
// blocked on a stdin that cannot be interrupted must not keep the process
// alive after exit.
func (s *Server) closeConn() {
	s.stream.Abort()
	go func() { _ = s.conn.Close() }()
	select {
	case <-s.conn.Done():
	case <-time.After(closeTimeout):
		s.logger.Debug("connection did not close in time; exiting anyway")
	}
}

// clientCaps are the capabilities negotiated at initialize.
func (s *Server) clientCaps() clientCaps { return s.caps }

// config is the effective configuration.
func (s *Server) config() Config {
	s.cfgMu.Lock()
	defer s.cfgMu.Unlock()
	return s.cfg
}

// workspace is the workspace root fixed at initialize.
func (s *Server) workspace() string { return s.workspaceRoot }

// initialize answers the initialize request: it negotiates the position
// encoding, reads the client's capabilities and validates the
// configuration. An invalid configuration fails initialize with
// INVALID_CONFIG and leaves the server uninitialized.
func (s *Server) initialize(params json.RawMessage) (*initializeResult, error) {
	var p initializeParams
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, invalidParams(protocol.MethodInitialize, err)
	}
	root := ""
	switch {
	case len(p.WorkspaceFolders) > 0:
		root = uriToPath(p.WorkspaceFolders[0].URI)
	case p.RootURI != nil:
		root = uriToPath(*p.RootURI)
	case p.RootPath != nil:
		root = *p.RootPath
	}
	cfg, unknown, err := s.computeConfig(p.InitializationOptions, root)
	if err != nil {
		return nil, err
	}
	if len(unknown) > 0 {
		s.logger.Warn("unknown initializationOptions ignored", zap.Strings("keys", unknown))
	}
	caps := clientCaps{encoding: EncodingUTF16}
	if g := p.Capabilities.General; g != nil {
		for _, e := range g.PositionEncodings {
			if e == string(EncodingUTF8) {
				caps.encoding = EncodingUTF8
			}
		}
	}
	if td := p.Capabilities.TextDocument; td != nil {
		if c := td.Completion; c != nil && c.CompletionItem != nil {
			caps.insertReplace = c.CompletionItem.InsertReplaceSupport
			caps.labelDetails = c.CompletionItem.LabelDetailsSupport
			caps.completionMarkdown = hasMarkdown(c.CompletionItem.DocumentationFormat)
		}
		if h := td.Hover; h != nil {
			caps.hoverMarkdown = hasMarkdown(h.ContentFormat)
		}
	}
	if w := p.Capabilities.Window; w != nil {
		caps.workDoneProgress = w.WorkDoneProgress
	}
	if ws := p.Capabilities.Workspace; ws != nil && ws.DidChangeWatchedFiles != nil {
		caps.watchedFiles = ws.DidChangeWatchedFiles.DynamicRegistration
		caps.relativePatterns = ws.DidChangeWatchedFiles.RelativePatternSupport
	}
	if root == "" {
		root = cfg.Cwd
	}
	caps.features = parseFeatureCaps(params)
	if p.ClientInfo != nil {
		caps.client = completion.ClientOf(p.ClientInfo.Name)
	}
	s.caps = caps
	s.workspaceRoot = root
	s.cfgMu.Lock()
	s.cfg = cfg
	s.cfgMu.Unlock()
	s.traceMu.Lock()
	s.traceLevel = p.Trace
	s.traceMu.Unlock()
	s.filesMu.Lock()
	s.clientWatches = caps.watchedFiles && root != ""
	s.filesMu.Unlock()

	if err := s.openSessions(cfg); err != nil {
		return nil, err
	}
	s.openFiles(root, cfg)
	s.openFrecency(cfg.Frecency)

	s.lifeMu.Lock()
	s.state = stateInitialized
	s.lifeMu.Unlock()
	s.logger.Info("initialized", zap.String("workspace", root), zap.String("encoding", string(caps.encoding)),
		zap.String("sessionId", cfg.SessionID))

	res := &initializeResult{
		Capabilities: serverCapabilities{
			PositionEncoding: string(caps.encoding),
			TextDocumentSync: textDocumentSyncOptions{OpenClose: true, Change: 2},
			CompletionProvider: completionOptions{
				// ":" ends a scope switch (@all:): clients that open the menu
				// only at trigger characters close it at a colon otherwise.
				TriggerCharacters: []string{"@", "/", `"`, "#", ":"},
				ResolveProvider:   true,
				CompletionItem:    &completionItemOptions{LabelDetailsSupport: true},
			},
			HoverProvider:        true,
			DefinitionProvider:   true,
			DocumentLinkProvider: &documentLinkOptions{},
			Experimental: map[string]any{
				"dshMethods": []string{MethodPrepare, MethodCandidates, MethodFiles, MethodStatus, MethodPreview, MethodSearch},
			},
		},
		ServerInfo: serverInfo{Name: ServerName, Version: s.opts.Version},
	}
	advertiseFeatures(caps.features, &res.Capabilities)
	return res, nil
}

func hasMarkdown(kinds []string) bool {
	for _, k := range kinds {
		if k == "markdown" {
			return true
		}
	}
	return false
}
