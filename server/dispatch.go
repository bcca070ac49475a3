package server

import (
	"context"
	"encoding/json"
	"runtime/debug"
	"strings"
	"time"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
	"go.uber.org/zap"

	"github.com/dsh-refls/dsh-refls/server/internal/lspwire"
)

// keepServing wraps the handler chain so that a notification error (such
// as a malformed $/cancelRequest, which cancelHandler reports as a parse
// error) is logged instead of failing the whole connection.
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
	case MethodPrepare, MethodSearch, protocol.MethodTextDocumentHover, protocol.MethodCompletionItemResolve:
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
	s.memory.Begin() // see memtune.Releaser
	defer s.memory.End()
	s.requests.begin() // see recall.go
	defer s.requests.end()
	method := strings.Clone(req.Method())
	if !req.IsCall() {
		s.safeNotify(ctx, method, json.RawMessage(req.Params()))
		return nil, nil
	}
	start := time.Now()
	s.logger.Debug("request", zap.String("method", method))
	run, err := s.admitAndRoute(ctx, method, json.RawMessage(req.Params()))
	if err != nil {
		return nil, toRPCError(ctx, err)
	}
	if s.inlineable(method) && s.stream.InputIdle() {
		// Nothing more has arrived: no $/cancelRequest or later request
		// could be read while this one runs, so it runs here, on the
		// read loop, without handing the reading to a new goroutine and
		// the answer back (about a fifth of the server's CPU per keystroke,
		// the scheduler's thread hand-offs). With input waiting, it is
		// released like every other call.
		select {
		case s.sem <- struct{}{}:
			defer func() { <-s.sem }()
			return s.finish(ctx, method, start, run)
		default:
		}
	}
	// Every call is released from the read loop, even one answered at once,
	// so that a $/cancelRequest behind a slow call is read while it runs.
	jsonrpc2.Async(ctx)
	// Wait before taking a concurrency slot: requests parked until the
	// first build must not keep completion, which answers at once, from
	// running.
	if waitsForFirstBuild(method) {
		if _, err := s.readySessions(ctx); err != nil && ctx.Err() != nil {
			return nil, cancelledError()
		}
	} else if method == MethodCandidates {
		if _, err := s.listingSessions(ctx); err != nil && ctx.Err() != nil {
			return nil, cancelledError()
		}
	}
	select {
	case s.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, cancelledError()
	}
	defer func() { <-s.sem }()
	return s.finish(ctx, method, start, run)
}

// inlineable reports whether a call may run on the read loop: the calls
// of typing, which answer at once (completion never waits for the session
// index; dsh/candidates only until the index is restored or built, and
// is then released).
func (s *Server) inlineable(method string) bool {
	switch method {
	case protocol.MethodTextDocumentCompletion:
		return true
	case MethodCandidates:
		h := s.sessions.Load()
		if h == nil {
			return true
		}
		select {
		case <-h.s.Ready():
			return true
		case <-h.s.Restored():
			return true
		default:
		}
	}
	return false
}

// finish runs a call that holds a concurrency slot and turns its outcome
// into the answer. The call counts as answering (s.answering) until its
// answer is written: a held answer until the stream reports it done
// (answerDone), any other at once, its write being short.
func (s *Server) finish(ctx context.Context, method string, start time.Time, run call) (any, error) {
	s.answering.begin()
	result, err := s.runRecovered(ctx, method, run)
	held := false
	defer func() {
		if !held {
			s.answering.end()
		}
	}()
	s.traceRequest(method, start, err)
	if err != nil {
		rpcErr := toRPCError(ctx, err)
		s.logger.Debug("request failed", zap.String("method", method), zap.Error(err))
		return nil, rpcErr
	}
	if ctx.Err() != nil {
		if raw, ok := result.(json.RawMessage); ok {
			s.answers.GiveBack(raw) // never written
		}
		return nil, cancelledError()
	}
	// An encoded answer reaches jsonrpc2 as a placeholder, and the stream
	// writes it where it lies (see lspwire.Answer).
	switch r := result.(type) {
	case json.RawMessage:
		if r != nil {
			held = true
			return s.stream.Hold(lspwire.Encoded(r)), nil
		}
	case lspwire.Answer:
		held = true
		return s.stream.Hold(r), nil
	}
	return result, nil
}

// answerDone is told of each held answer once it is written or dropped,
// with its encoded result (lspwire.Hooks.Written): the array goes back to
// AnswerBuffers, and the call it answers is no longer answering.
func (s *Server) answerDone(result []byte) {
	s.answers.GiveBack(result)
	s.answering.end()
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
	case protocol.MethodTextDocumentDefinition:
		return s.definitionCall(params)
	case protocol.MethodTextDocumentDocumentLink:
		return s.documentLinkCall(params)
	case MethodPreview:
		return s.previewCall(params)
	case protocol.MethodTextDocumentCodeAction:
		return s.codeActionCall(params)
	case protocol.MethodWorkspaceExecuteCommand:
		return s.executeCommandCall(params)
	case protocol.MethodTextDocumentInlayHint:
		return s.inlayHintCall(params)
	case protocol.MethodWorkspaceSymbol:
		return s.workspaceSymbolCall(params)
	case MethodPrepare:
		return s.prepareCall(params)
	case MethodCandidates:
		return s.candidatesCall(params)
	case MethodSearch:
		return s.searchCall(params)
	case MethodFiles:
		return s.filesCall(params)
	case MethodStatus:
		return s.statusCall()
	case protocol.MethodWorkspaceTextDocumentContent:
		return s.textDocumentContentCall(params)
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
		return s.didOpen(params)
	case protocol.MethodTextDocumentDidChange:
		return s.didChange(params)
	case protocol.MethodTextDocumentDidClose:
		return s.didClose(params)
	case protocol.MethodWorkspaceDidChangeConfiguration:
		return s.didChangeConfiguration(params)
	case protocol.MethodSetTrace:
		return s.setTrace(params)
	default:
		s.logger.Debug("notification ignored", zap.String("method", method))
	}
	return nil
}
