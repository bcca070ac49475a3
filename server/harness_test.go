package server

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.lsp.dev/jsonrpc2"
	"go.uber.org/zap/zaptest"

	"github.com/dsh-refls/dsh-refls/internal/lsptest"
	"github.com/dsh-refls/dsh-refls/internal/testfixtures"
)

// cursor marks the position of a request in test documents.
const cursor = lsptest.Cursor

// testTimeout bounds every wait of a test.
const testTimeout = 10 * time.Second

// notification is one message the server sent to the client.
type notification = lsptest.Message

// harness drives a Server in-process over net.Pipe through the test
// editor (internal/lsptest), failing the test on transport errors.
type harness struct {
	t      testing.TB
	editor *lsptest.Editor
	ctx    context.Context

	done chan serveResult
}

type serveResult struct {
	code int
	err  error
}

// newHarness starts Serve on one end of a pipe and a client on the other.
func newHarness(t *testing.T, opts Options) *harness {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = zaptest.NewLogger(t)
	}
	return newBenchHarness(t, opts)
}

// newBenchHarness is newHarness for tests and benchmarks alike; it does not
// default the logger.
func newBenchHarness(t testing.TB, opts Options) *harness {
	t.Helper()
	if opts.DiagnosticsDelay == 0 {
		opts.DiagnosticsDelay = 20 * time.Millisecond
	}
	if opts.Watch == "" {
		opts.Watch = watchModeOff
	}
	serverEnd, clientEnd := net.Pipe()
	h := &harness{t: t, done: make(chan serveResult, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	h.ctx = ctx
	go func() {
		code, err := Serve(ctx, serverEnd, opts)
		h.done <- serveResult{code, err}
	}()
	h.editor = lsptest.Connect(clientEnd, lsptest.Config{})
	t.Cleanup(func() {
		cancel()
		_ = h.editor.Close()
		select {
		case <-h.done:
		case <-time.After(testTimeout):
			t.Error("server did not stop after the client closed")
		}
	})
	return h
}

// call sends a request and decodes the result into result.
func (h *harness) call(method string, params, result any) error {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(h.ctx, testTimeout)
	defer cancel()
	return h.editor.Call(ctx, method, params, result)
}

// mustCall is call that fails the test on error.
func (h *harness) mustCall(method string, params, result any) {
	h.t.Helper()
	if err := h.call(method, params, result); err != nil {
		h.t.Fatalf("%s: %v", method, err)
	}
}

func (h *harness) notify(method string, params any) {
	h.t.Helper()
	if err := h.editor.Notify(h.ctx, method, params); err != nil {
		h.t.Fatalf("notify %s: %v", method, err)
	}
}

// initOptions are the knobs of one initialize.
type initOptions struct {
	utf8          bool
	markdown      bool
	insertReplace bool
	labelDetails  bool
	progress      bool
	// watchedFiles and relativePatterns announce client-side file watching.
	watchedFiles     bool
	relativePatterns bool
	root             string
	settings         map[string]any
	// client is the clientInfo name sent, none when empty.
	client string
}

// initialize runs initialize and initialized.
func (h *harness) initialize(o initOptions) initializeResult {
	h.t.Helper()
	var res initializeResult
	if err := h.call("initialize", initParams(o), &res); err != nil {
		h.t.Fatalf("initialize: %v", err)
	}
	h.notify("initialized", map[string]any{})
	return res
}

func initParams(o initOptions) map[string]any {
	formats := []string{"plaintext"}
	if o.markdown {
		formats = []string{"markdown", "plaintext"}
	}
	caps := map[string]any{
		"textDocument": map[string]any{
			"completion": map[string]any{"completionItem": map[string]any{
				"insertReplaceSupport": o.insertReplace, "labelDetailsSupport": o.labelDetails,
				"documentationFormat": formats}},
			"hover": map[string]any{"contentFormat": formats},
		},
		"window": map[string]any{"workDoneProgress": o.progress},
	}
	if o.watchedFiles {
		caps["workspace"] = map[string]any{"didChangeWatchedFiles": map[string]any{
			"dynamicRegistration": true, "relativePatternSupport": o.relativePatterns}}
	}
	if o.utf8 {
		caps["general"] = map[string]any{"positionEncodings": []string{"utf-8", "utf-16"}}
	}
	p := map[string]any{"processId": nil, "capabilities": caps, "initializationOptions": o.settings}
	if o.root != "" {
		p["rootUri"] = pathToURI(o.root)
	}
	if o.client != "" {
		p["clientInfo"] = map[string]any{"name": o.client, "version": "0.12.4"}
	}
	return p
}

// open opens a document whose text contains one cursor marker and returns
// the position of the marker in the given encoding, computed independently
// of the server's mapper.
func (h *harness) open(uri, marked string, enc PositionEncoding) Position {
	h.t.Helper()
	text, pos := splitMarked(h.t, marked, enc)
	h.notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{
		"uri": uri, "languageId": "markdown", "version": 1, "text": text}})
	return pos
}

// splitMarked removes the cursor marker and returns the text and the
// marker's position.
func splitMarked(t testing.TB, marked string, enc PositionEncoding) (string, Position) {
	t.Helper()
	text, pos := lsptest.Marked(marked, lsptest.Encoding(enc))
	return text, Position(pos)
}

// colOf is the column of the first occurrence of sub in line, in enc.
func colOf(line, sub string, enc PositionEncoding) int {
	return lsptest.Units(line[:strings.Index(line, sub)], lsptest.Encoding(enc))
}

// waitNote waits for a notification matching pred.
func (h *harness) waitNote(pred func(notification) bool) notification {
	h.t.Helper()
	return h.await(func(m lsptest.Message) bool { return m.IsNotification() && pred(m) })
}

// await waits for a message from the server matching pred.
func (h *harness) await(pred lsptest.Predicate) lsptest.Message {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(h.ctx, testTimeout)
	defer cancel()
	m, err := h.editor.Await(ctx, pred)
	if err != nil {
		h.t.Fatalf("waiting for a message from the server: %v", err)
	}
	return m
}

// awaitFrom waits for a message matching pred among those from index
// from on (see lsptest.Editor.Mark).
func (h *harness) awaitFrom(from int, pred lsptest.Predicate) lsptest.Message {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(h.ctx, testTimeout)
	defer cancel()
	m, err := h.editor.AwaitFrom(ctx, from, pred)
	if err != nil {
		h.t.Fatalf("waiting for a message from the server: %v", err)
	}
	return m
}

// awaitAnyFrom waits at most d for any message from index from on: the
// pause of a poll that also wakes when the server says something.
func (h *harness) awaitAnyFrom(from int, d time.Duration) {
	ctx, cancel := context.WithTimeout(h.ctx, d)
	defer cancel()
	_, _ = h.editor.AwaitFrom(ctx, from, func(lsptest.Message) bool { return true })
}

// notesOf returns the notifications of one method received so far.
func (h *harness) notesOf(method string) []notification {
	return h.editor.Matching(lsptest.Notification(method))
}

// serverCalls returns the server-to-client requests received so far.
func (h *harness) serverCalls() []notification {
	return h.editor.Matching(func(m lsptest.Message) bool { return m.IsCall() })
}

// diagnosticsFor waits for published diagnostics of uri at version.
func (h *harness) diagnosticsFor(uri string, version int32) publishDiagnosticsParams {
	h.t.Helper()
	n := h.await(lsptest.DiagnosticsFor(uri, version))
	var p publishDiagnosticsParams
	if err := json.Unmarshal(n.Params, &p); err != nil {
		h.t.Fatalf("diagnostics %s: %v", n.Params, err)
	}
	return p
}

// shutdownExit sends shutdown and exit and returns the exit code.
func (h *harness) shutdownExit() int {
	h.t.Helper()
	h.mustCall("shutdown", nil, nil)
	h.notify("exit", nil)
	return h.wait()
}

// wait returns Serve's exit code.
func (h *harness) wait() int {
	h.t.Helper()
	select {
	case r := <-h.done:
		h.done <- r // for cleanup
		return r.code
	case <-time.After(testTimeout):
		h.t.Fatal("server did not exit")
		return -1
	}
}

// rpcError extracts the JSON-RPC error and its contract code.
func rpcError(t *testing.T, err error) (jsonrpc2.Code, string) {
	t.Helper()
	var e *lsptest.Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T) is not a JSON-RPC error", err, err)
	}
	var data ErrorData
	if len(e.Data) > 0 {
		if jerr := json.Unmarshal(e.Data, &data); jerr != nil {
			t.Fatalf("error data %s: %v", e.Data, jerr)
		}
	}
	return jsonrpc2.Code(e.Code), string(data.Code)
}

// testOptions returns options serving the test store's session index in a
// temp workspace with a few files.
func testOptions(t *testing.T) (Options, *testSessions, string) {
	t.Helper()
	ws := t.TempDir()
	for _, f := range []string{"README.md", "src/main.go", "src/parser.go", "my docs/guide.md", ".hidden/x"} {
		p := filepath.Join(ws, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("content of "+f), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fake := newTestSessions(t, time.Now())
	opts := Options{OpenSessions: fake.factory, SessionsRoot: fake.root}
	return opts, fake, ws
}

// waitStatus polls dsh/status until ok.
func waitStatus(t *testing.T, h *harness, ok func(statusResult) bool) statusResult {
	t.Helper()
	deadline := time.Now().Add(testTimeout)
	for {
		var st statusResult
		h.mustCall(MethodStatus, nil, &st)
		if ok(st) {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("status never ready: %+v", st)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// waitReady waits (with a deadline) until the session index is built.
func (h *harness) waitReady(t *testing.T) {
	t.Helper()
	waitStatus(t, h, func(st statusResult) bool { return !st.Building && st.SessionsIndexed > 0 })
}

// fixturesRoot returns the shared raw fixtures store or skips.
func fixturesRoot(t testing.TB) string {
	t.Helper()
	return filepath.Join(testfixtures.Dir(t), "raw", "sessions")
}

// asRPC is errors.As for JSON-RPC errors.
func asRPC(err error, target **lsptest.Error) bool { return errors.As(err, target) }
