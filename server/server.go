// Package server is the language server of dsh-refls: it speaks LSP and the
// dsh/* methods over one JSON-RPC connection and converts between protocol
// shapes and the values of packages sessionref, completion and the
// workspace file index. A Server holds the state of one connection.
package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
	"go.uber.org/zap"

	"github.com/dsh-refls/dsh-refls/sessionref"
	"github.com/dsh-refls/dsh-refls/watch"
)

// Tuning constants.
const (
	// defaultDiagnosticsDelay debounces diagnostics per document: long enough
	// to skip the intermediate states of fast typing, short enough to feel
	// immediate.
	defaultDiagnosticsDelay = 150 * time.Millisecond
	// outgoingCallTimeout bounds server-to-client requests (progress
	// creation) so a client that never answers cannot stall anything.
	outgoingCallTimeout = 5 * time.Second
	// closeTimeout bounds the wait for the connection to close at exit.
	// Every answer has been written by then; what remains is a read blocked
	// on a stdin that closing cannot interrupt, so the wait is short.
	closeTimeout = 250 * time.Millisecond
	// progressReportInterval throttles $/progress reports while indexing.
	progressReportInterval = 200 * time.Millisecond
)

// ServerName is the name the server reports in initialize.
const ServerName = "dsh-refls"

// Options configure Serve. Zero values are usable: a nop logger, the
// default session root, no file index and no watcher.
type Options struct {
	// Logger receives the server's log; it never writes to the protocol
	// stream.
	Logger *zap.Logger
	// Version is reported in serverInfo.
	Version string
	// SessionsRoot is the --sessions-root flag; initializationOptions may
	// override it.
	SessionsRoot string
	// Watch is the --watch flag: "auto", "fsnotify", "poll" or "off".
	Watch string
	// OpenSessions opens the session index of a root. Nil uses
	// package sessionref/live without the index cache.
	OpenSessions SessionsFactory
	// OpenFiles opens the workspace file index. Nil lists directories
	// live with a bounded walk for other queries.
	OpenFiles FilesFactory
	// Trace, when set, receives the JSON-lines trace of every frame.
	Trace io.Writer
	// MaxConcurrency bounds the requests handled at once; 0 means the
	// number of CPUs (at least 2).
	MaxConcurrency int
	// DiagnosticsDelay overrides the diagnostics debounce.
	DiagnosticsDelay time.Duration
	// Now is the clock of relative ages (completion labelDetails, hover);
	// nil means time.Now.
	Now func() time.Time
}

// lifecycle states of a connection.
type lifecycleState int

const (
	stateNew lifecycleState = iota
	stateInitialized
	stateShutdown
)

// clientCaps are what the client said it supports, fixed at initialize.
type clientCaps struct {
	encoding           PositionEncoding
	insertReplace      bool
	labelDetails       bool
	completionMarkdown bool
	hoverMarkdown      bool
	workDoneProgress   bool
	// watchedFiles is true when the client registers
	// workspace/didChangeWatchedFiles dynamically; it then reports
	// workspace changes and the server does not watch the workspace.
	watchedFiles bool
	// relativePatterns is true when the client takes RelativePattern
	// globs in file watchers.
	relativePatterns bool
}

// Server holds the server-side state of one client connection.
type Server struct {
	opts   Options
	logger *zap.Logger
	conn   jsonrpc2.Conn
	stream *serverStream
	sem    chan struct{}
	docs   *documents
	diags  *diagnostics

	// bgCtx ends when the connection ends; background work uses it.
	bgCtx    context.Context
	bgCancel context.CancelFunc
	bgWG     sync.WaitGroup

	// lifeMu guards state, exitCode and exited.
	lifeMu   sync.Mutex
	state    lifecycleState
	exited   chan struct{}
	exitCode int

	// capsMu guards caps, traceLevel, cfg, workspaceRoot, workspaceWatcher
	// and configErr.
	capsMu           sync.Mutex
	caps             clientCaps
	traceLevel       string
	cfg              Config
	workspaceRoot    string
	workspaceWatcher *watch.Watcher
	configErr        string

	// filesMu serialises publishing a built workspace index with the
	// workspace changes that arrive meanwhile: pendingChanges holds what
	// the client reported while the index was building (pendingOverflow
	// when there was too much to keep), and clientWatches says whether the
	// client watches the workspace for us.
	filesMu         sync.Mutex
	pendingChanges  []string
	pendingOverflow bool
	clientWatches   bool

	// These are atomics: read by every request, replaced only when the
	// configuration names another root.
	sessions atomic.Pointer[sessionsHolder]
	files    atomic.Pointer[filesHolder]

	progressSeq atomic.Int64
	// firstBuild is the progress of the first session index build, which
	// the client sees as work-done progress.
	firstBuild atomic.Pointer[progressReporter]
}

// sessionsHolder is one opened session index with the watch mode it was
// opened with and the context of its background work (build, watch),
// cancelled when it is replaced.
type sessionsHolder struct {
	s      Sessions
	watch  string
	ctx    context.Context
	cancel context.CancelFunc
}

// filesHolder is the current workspace file source with the context of
// its background work (build, watch), cancelled when it is replaced.
type filesHolder struct {
	f Files
	// building is true while f is the interim live lister and the
	// workspace index is still being built.
	building bool
	root     string
	cfg      Config
	ctx      context.Context
	cancel   context.CancelFunc
}

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
	}
	s.cfg.Watch = opts.Watch
	s.caps.encoding = EncodingUTF16
	s.bgCtx, s.bgCancel = context.WithCancel(ctx)
	s.diags = newDiagnostics(s, opts.DiagnosticsDelay)

	stream := newServerStream(rwc, newTracer(opts.Trace))
	s.stream = stream
	s.conn = jsonrpc2.NewConn(stream, jsonrpc2.WithCodec(jsonCodec{}))
	connCtx := protocol.WithLogger(s.bgCtx, NewSlogLogger(s.logger))
	s.conn.Go(connCtx, s.keepServing(protocol.CancelHandler(s.handle)))

	select {
	case <-s.conn.Done():
	case <-s.exited:
		// Requests sent before exit are still answered.
		s.stream.waitDrained()
		s.closeConn()
	case <-ctx.Done():
		s.closeConn()
	}
	s.bgCancel()
	s.diags.stop()
	s.bgWG.Wait()
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
	s.stream.abort()
	go func() { _ = s.conn.Close() }()
	select {
	case <-s.conn.Done():
	case <-time.After(closeTimeout):
		s.logger.Debug("connection did not close in time; exiting anyway")
	}
}

// keepServing wraps the handler chain so that a notification error (such
// as a malformed $/cancelRequest, which protocol.CancelHandler reports as a
// parse error) is logged instead of failing the whole connection.
func (s *Server) keepServing(h jsonrpc2.Handler) jsonrpc2.Handler {
	return func(ctx context.Context, req *jsonrpc2.Request) (any, error) {
		res, err := h(ctx, req)
		if err != nil && !req.IsCall() {
			s.logger.Warn("bad notification ignored", zap.String("method", req.Method()), zap.Error(err))
			return nil, nil
		}
		return res, err
	}
}

// waitsForFirstBuild reports whether a request's answer needs the session
// index built; the others answer at once with what they have.
func waitsForFirstBuild(method string) bool {
	switch method {
	case MethodPrepare, MethodCandidates, "textDocument/hover", "completionItem/resolve":
		return true
	}
	return false
}

// call is the part of a request that runs concurrently, after the parts
// that must see the connection's wire order (params, document snapshots).
type call func(ctx context.Context) (any, error)

// handle is the connection's handler. Notifications run inline, in wire
// order; requests decode their params and snapshot what they read inline,
// then release the read loop and run bounded by the semaphore, each with its
// own panic recovery.
func (s *Server) handle(ctx context.Context, req *jsonrpc2.Request) (any, error) {
	method := strings.Clone(req.Method())
	if !req.IsCall() {
		s.safeNotify(ctx, method, json.RawMessage(req.Params()))
		return nil, nil
	}
	start := time.Now()
	s.logger.Debug("request", zap.String("method", method))
	run, err := s.admitAndRoute(ctx, method, json.RawMessage(req.Params()))
	// Every call is released from the read loop, even one answered at once:
	// jsonrpc2 recycles the request context of a call that stays
	// synchronous, while the context CancelHandler derived from it may still
	// be watched by a goroutine of package context.
	jsonrpc2.Async(ctx)
	if err != nil {
		return nil, toRPCError(ctx, err)
	}
	if waitsForFirstBuild(method) {
		// Wait before taking a concurrency slot: requests parked until the
		// first build must not keep completion, which answers at once,
		// from running.
		if _, err := s.readySessions(ctx); err != nil && ctx.Err() != nil {
			return nil, cancelledError()
		}
	}
	select {
	case s.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, cancelledError()
	}
	defer func() { <-s.sem }()
	result, err := s.runRecovered(ctx, method, run)
	s.traceRequest(method, start, err)
	if err != nil {
		rpcErr := toRPCError(ctx, err)
		s.logger.Debug("request failed", zap.String("method", method), zap.Error(err))
		return nil, rpcErr
	}
	if ctx.Err() != nil {
		return nil, cancelledError()
	}
	return result, nil
}

// admitAndRoute checks the lifecycle and routes a call.
func (s *Server) admitAndRoute(ctx context.Context, method string, params json.RawMessage) (call, error) {
	if err := s.admit(method); err != nil {
		return nil, err
	}
	run, err := s.route(ctx, method, params)
	if err != nil {
		return nil, err
	}
	if run == nil {
		return nil, jsonrpc2.Errorf(jsonrpc2.MethodNotFound, "method %q is not supported", method)
	}
	return run, nil
}

// runRecovered runs one request, turning a panic into an internal error.
func (s *Server) runRecovered(ctx context.Context, method string, run call) (result any, err error) {
	defer func() {
		if r := recover(); r != nil {
			s.logger.Error("request panicked", zap.String("method", method),
				zap.Any("panic", r), zap.ByteString("stack", debug.Stack()))
			result, err = nil, jsonrpc2.Errorf(jsonrpc2.InternalError, "internal error in %s: %v", method, r)
		}
	}()
	return run(ctx)
}

// admit checks the lifecycle: nothing but initialize before initialize,
// nothing after shutdown.
func (s *Server) admit(method string) error {
	s.lifeMu.Lock()
	defer s.lifeMu.Unlock()
	switch {
	case s.state == stateNew && method != protocol.MethodInitialize:
		return jsonrpc2.NewError(jsonrpc2.ServerNotInitialized, "the server is not initialized yet: send initialize first")
	case s.state != stateNew && method == protocol.MethodInitialize:
		return jsonrpc2.NewError(jsonrpc2.InvalidRequest, "initialize was already received")
	case s.state == stateShutdown:
		return jsonrpc2.NewError(jsonrpc2.InvalidRequest, "the server is shutting down: only exit is accepted")
	}
	return nil
}

// route decodes a request's params and returns the work to run, or nil for
// an unknown method. Errors here are answered at once.
func (s *Server) route(ctx context.Context, method string, params json.RawMessage) (call, error) {
	switch method {
	case protocol.MethodInitialize:
		res, err := s.initialize(params)
		return func(context.Context) (any, error) { return res, err }, nil
	case protocol.MethodShutdown:
		s.lifeMu.Lock()
		s.state = stateShutdown
		s.lifeMu.Unlock()
		return func(context.Context) (any, error) { return nil, nil }, nil
	case protocol.MethodTextDocumentCompletion:
		return s.completionCall(params)
	case protocol.MethodCompletionItemResolve:
		return s.resolveCall(params)
	case protocol.MethodTextDocumentHover:
		return s.hoverCall(params)
	case MethodPrepare:
		return s.prepareCall(params)
	case MethodCandidates:
		return s.candidatesCall(params)
	case MethodFiles:
		return s.filesCall(params)
	case MethodStatus:
		return s.statusCall()
	}
	return nil, nil
}

// safeNotify handles a notification, logging instead of failing: a
// notification error would end the connection.
func (s *Server) safeNotify(ctx context.Context, method string, params json.RawMessage) {
	defer func() {
		if r := recover(); r != nil {
			s.logger.Error("notification panicked", zap.String("method", method),
				zap.Any("panic", r), zap.ByteString("stack", debug.Stack()))
		}
	}()
	if method == protocol.MethodExit {
		s.lifeMu.Lock()
		if s.state == stateShutdown {
			s.exitCode = 0
		} else {
			s.exitCode = 1
		}
		select {
		case <-s.exited:
		default:
			close(s.exited)
		}
		s.lifeMu.Unlock()
		return
	}
	s.lifeMu.Lock()
	state := s.state
	s.lifeMu.Unlock()
	if state == stateNew {
		s.logger.Debug("notification before initialize dropped", zap.String("method", method))
		return
	}
	if err := s.notify(ctx, method, params); err != nil {
		s.logger.Warn("notification failed", zap.String("method", method), zap.Error(err))
	}
}

func (s *Server) notify(ctx context.Context, method string, params json.RawMessage) error {
	switch method {
	case protocol.MethodInitialized:
		s.attachProgress()
		s.registerFileWatching()
	case protocol.MethodWorkspaceDidChangeWatchedFiles:
		return s.didChangeWatchedFiles(params)
	case protocol.MethodTextDocumentDidOpen:
		var p didOpenParams
		if err := json.Unmarshal(params, &p); err != nil {
			return fmt.Errorf("decoding didOpen: %w", err)
		}
		doc := document{URI: p.TextDocument.URI, Version: p.TextDocument.Version, Text: p.TextDocument.Text}
		s.docs.open(doc)
		s.diags.schedule(doc.URI)
	case protocol.MethodTextDocumentDidChange:
		var p didChangeParams
		if err := json.Unmarshal(params, &p); err != nil {
			return fmt.Errorf("decoding didChange: %w", err)
		}
		if _, err := s.docs.change(p.TextDocument.URI, p.TextDocument.Version, p.ContentChanges, s.clientCaps().encoding); err != nil {
			return err
		}
		s.diags.schedule(p.TextDocument.URI)
	case protocol.MethodTextDocumentDidClose:
		var p didCloseParams
		if err := json.Unmarshal(params, &p); err != nil {
			return fmt.Errorf("decoding didClose: %w", err)
		}
		s.docs.close(p.TextDocument.URI)
		s.diags.forget(p.TextDocument.URI)
	case protocol.MethodWorkspaceDidChangeConfiguration:
		return s.didChangeConfiguration(params)
	case protocol.MethodSetTrace:
		var p setTraceParams
		if err := json.Unmarshal(params, &p); err != nil {
			return fmt.Errorf("decoding setTrace: %w", err)
		}
		s.capsMu.Lock()
		s.traceLevel = p.Value
		s.capsMu.Unlock()
	default:
		s.logger.Debug("notification ignored", zap.String("method", method))
	}
	return nil
}

func (s *Server) clientCaps() clientCaps {
	s.capsMu.Lock()
	defer s.capsMu.Unlock()
	return s.caps
}

func (s *Server) config() Config {
	s.capsMu.Lock()
	defer s.capsMu.Unlock()
	return s.cfg
}

func (s *Server) workspace() string {
	s.capsMu.Lock()
	defer s.capsMu.Unlock()
	return s.workspaceRoot
}

// initialize answers the initialize request: it negotiates the position
// encoding, reads the client's capabilities and validates the
// configuration. An invalid configuration fails initialize with
// INVALID_CONFIG and leaves the server uninitialized.
func (s *Server) initialize(params json.RawMessage) (*initializeResult, error) {
	var p initializeParams
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, invalidParams(protocol.MethodInitialize, err)
	}
	cfg, unknown, err := applyConfig(s.config(), p.InitializationOptions)
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
	root := ""
	switch {
	case len(p.WorkspaceFolders) > 0:
		root = uriToPath(p.WorkspaceFolders[0].URI)
	case p.RootURI != nil:
		root = uriToPath(*p.RootURI)
	case p.RootPath != nil:
		root = *p.RootPath
	}
	if cfg.Cwd == "" {
		cfg.Cwd = root
	}
	if root == "" {
		root = cfg.Cwd
	}
	s.capsMu.Lock()
	s.caps = caps
	s.cfg = cfg
	s.workspaceRoot = root
	s.traceLevel = p.Trace
	s.capsMu.Unlock()
	s.filesMu.Lock()
	s.clientWatches = caps.watchedFiles && root != ""
	s.filesMu.Unlock()

	if err := s.openSessions(cfg); err != nil {
		return nil, err
	}
	s.openFiles(root, cfg)

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
				TriggerCharacters: []string{"@", "/", `"`},
				ResolveProvider:   true,
				CompletionItem:    &completionItemOptions{LabelDetailsSupport: true},
			},
			HoverProvider: true,
			Experimental: map[string]any{
				"dshMethods": []string{MethodPrepare, MethodCandidates, MethodFiles, MethodStatus},
			},
		},
		ServerInfo: serverInfo{Name: ServerName, Version: s.opts.Version},
	}
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

// uriToPath converts a file:// URI to a path; other strings pass through.
func uriToPath(u string) string {
	parsed, err := url.Parse(u)
	if err != nil || parsed.Scheme != "file" {
		return u
	}
	return filepath.FromSlash(parsed.Path)
}

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
		return nil
	}
	report := s.newProgressReporter()
	var degradedOnce sync.Once
	sess, err := open(SessionsConfig{
		Root:     root,
		Watch:    cfg.Watch,
		Logger:   s.logger.Named("sessions"),
		Progress: report.update,
		OnUpdate: s.diags.scheduleAll,
		OnDegraded: func(reason string) {
			degradedOnce.Do(func() {
				s.showMessage(messageTypeWarning, fmt.Sprintf("dsh-refls: watching %s by polling: %s", root, reason))
			})
		},
	})
	if err != nil {
		return &configError{Field: "sessionsRoot", Msg: err.Error()}
	}
	ctx, cancel := context.WithCancel(s.bgCtx)
	old := s.sessions.Swap(&sessionsHolder{s: sess, watch: cfg.Watch, ctx: ctx, cancel: cancel})
	s.runSessions(ctx, sess, report)
	if old != nil {
		old.cancel()
	} else {
		s.firstBuild.Store(report)
	}
	return nil
}

// openFiles opens the workspace file index in the background. Until it is
// built, directories are listed live so completion answers at once.
func (s *Server) openFiles(root string, cfg Config) {
	if root == "" {
		return
	}
	ctx, cancel := context.WithCancel(s.bgCtx)
	interim, _ := openDirLister(ctx, root, cfg.ExcludedDirectories)
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
	cfg, unknown, err := applyConfig(s.config(), raw)
	if err != nil {
		s.capsMu.Lock()
		s.configErr = err.Error()
		s.capsMu.Unlock()
		s.showMessage(messageTypeError, err.Error())
		return err
	}
	if len(unknown) > 0 {
		s.logger.Warn("unknown settings ignored", zap.Strings("keys", unknown))
	}
	s.capsMu.Lock()
	prev := s.cfg
	s.cfg = cfg
	s.configErr = ""
	root := s.workspaceRoot
	s.capsMu.Unlock()
	if !slices.Equal(prev.ExcludedDirectories, cfg.ExcludedDirectories) {
		s.openFiles(root, cfg)
	}
	if err := s.openSessions(cfg); err != nil {
		s.showMessage(messageTypeError, err.Error())
		return err
	}
	s.diags.scheduleAll()
	return nil
}

// showMessage sends window/showMessage; it only writes, so it is safe from
// the read loop.
func (s *Server) showMessage(typ int, msg string) {
	if err := s.conn.Notify(s.bgCtx, protocol.MethodWindowShowMessage, showMessageParams{Type: typ, Message: msg}); err != nil {
		s.logger.Debug("showMessage not sent", zap.Error(err))
	}
}

// traceRequest sends $/logTrace for a handled request when the client
// turned tracing on.
func (s *Server) traceRequest(method string, start time.Time, err error) {
	s.capsMu.Lock()
	level := s.traceLevel
	s.capsMu.Unlock()
	if level != "messages" && level != "verbose" {
		return
	}
	p := logTraceParams{Message: fmt.Sprintf("handled %s in %s", method, time.Since(start).Round(time.Microsecond))}
	if level == "verbose" {
		if err != nil {
			p.Verbose = "error: " + err.Error()
		} else {
			p.Verbose = "ok"
		}
	}
	if nerr := s.conn.Notify(s.bgCtx, protocol.MethodLogTrace, p); nerr != nil {
		s.logger.Debug("logTrace not sent", zap.Error(nerr))
	}
}

// attachProgress shows the first index build as work-done progress, when
// the client supports it and the build is still running.
func (s *Server) attachProgress() {
	r := s.firstBuild.Load()
	if r == nil || !s.clientCaps().workDoneProgress {
		return
	}
	token := fmt.Sprintf("dsh-refls/index/%d", s.progressSeq.Add(1))
	s.bgWG.Add(1)
	go func() {
		defer s.bgWG.Done()
		r.attach(s.bgCtx, token)
	}()
}

// runSessions runs sess in the background until ctx ends, and ends report
// when its first build has finished.
func (s *Server) runSessions(ctx context.Context, sess Sessions, report *progressReporter) {
	s.bgWG.Add(2)
	go func() {
		defer s.bgWG.Done()
		if err := sess.Run(ctx); err != nil && ctx.Err() == nil {
			s.logger.Warn("session index stopped", zap.String("root", sess.Status().Root), zap.Error(err))
		}
	}()
	go func() {
		defer s.bgWG.Done()
		start := time.Now()
		select {
		case <-sess.Ready():
		case <-ctx.Done():
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

// readySessions returns the session index once its first build has
// finished, waiting until then or until ctx ends. It returns nil when no
// index is open.
func (s *Server) readySessions(ctx context.Context) (Sessions, error) {
	for {
		h := s.sessions.Load()
		if h == nil {
			return nil, nil
		}
		select {
		case <-h.s.Ready():
			return h.s, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-h.ctx.Done():
			// Replaced by another root (or the connection ended): wait for
			// the current one instead.
			if s.sessions.Load() == h {
				return nil, fmt.Errorf("the session index of %s was closed: %w", h.s.Status().Root, context.Canceled)
			}
		}
	}
}

// sessionsReady reports whether the current index finished its first
// build, without waiting.
func sessionsReady(sess Sessions) bool {
	select {
	case <-sess.Ready():
		return true
	default:
		return false
	}
}

// now is the server's clock.
func (s *Server) now() time.Time { return s.opts.Now() }

// resolveRoot applies §1.1 through sessionref.
func resolveRoot(flagValue string) (string, error) {
	return sessionref.ResolveRoot(flagValue)
}
