package lsptest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.lsp.dev/jsonrpc2"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	if os.Getenv(echoChildEnv) == "1" {
		os.Exit(echoFrames())
	}
	goleak.VerifyTestMain(m)
}

// peer is a server built on go.lsp.dev/jsonrpc2, an implementation of
// JSON-RPC independent of the editor's, so the editor is tested against
// the framing and ids another library writes.
type peer struct {
	conn jsonrpc2.Conn

	mu       sync.Mutex
	received []string // methods of requests and notifications, in order
	opened   map[string]string
	changes  []json.RawMessage
	// onCall answers methods the test adds.
	onCall map[string]func(ctx context.Context, params json.RawMessage) (any, error)
}

// startPeer connects an Editor with cfg to a new peer over net.Pipe.
func startPeer(t *testing.T, cfg Config) (*Editor, *peer) {
	t.Helper()
	serverEnd, clientEnd := net.Pipe()
	p := &peer{opened: map[string]string{}, onCall: map[string]func(context.Context, json.RawMessage) (any, error){}}
	p.conn = jsonrpc2.NewConn(jsonrpc2.NewHeaderStream(serverEnd))
	// Each message, and each didChange's params, is recorded in wire order
	// before it is released to run beside the next (jsonrpc2.Async):
	// recorded after the release, two notifications could land in either
	// order, and a request after them (TestEditFile's echo) could be
	// answered before a change was recorded (a CI run: 1 didChange, want 2).
	p.conn.Go(context.Background(), func(ctx context.Context, req *jsonrpc2.Request) (any, error) {
		p.mu.Lock()
		p.received = append(p.received, strings.Clone(req.Method())) // borrowed until the release
		if req.Method() == "textDocument/didChange" {
			p.changes = append(p.changes, bytes.Clone(req.Params()))
		}
		p.mu.Unlock()
		jsonrpc2.Async(ctx)
		return p.handle(ctx, req)
	})
	e := Connect(clientEnd, cfg)
	t.Cleanup(func() {
		_ = e.Close()
		_ = p.conn.Close()
		<-e.Done()
	})
	return e, p
}

func (p *peer) handle(ctx context.Context, req *jsonrpc2.Request) (any, error) {
	method := req.Method()
	params := json.RawMessage(append([]byte(nil), req.Params()...))
	p.mu.Lock()
	h := p.onCall[method]
	p.mu.Unlock()
	if h != nil {
		return h(ctx, params)
	}
	switch method {
	case "initialize":
		var ip struct {
			Capabilities struct {
				General struct {
					PositionEncodings []string `json:"positionEncodings"`
				} `json:"general"`
			} `json:"capabilities"`
		}
		_ = json.Unmarshal(params, &ip)
		enc := "utf-16"
		for _, e := range ip.Capabilities.General.PositionEncodings {
			if e == "utf-8" {
				enc = e
			}
		}
		return map[string]any{"capabilities": map[string]any{"positionEncoding": enc}}, nil
	case "textDocument/didOpen":
		var o struct {
			TextDocument struct {
				URI     string `json:"uri"`
				Text    string `json:"text"`
				Version int32  `json:"version"`
			} `json:"textDocument"`
		}
		_ = json.Unmarshal(params, &o)
		p.mu.Lock()
		p.opened[o.TextDocument.URI] = o.TextDocument.Text
		p.mu.Unlock()
		// Diagnostics come later, off the request, like a debounced server's.
		go func() {
			time.Sleep(20 * time.Millisecond) // the server's own debounce, not the test's synchronisation
			_ = p.conn.Notify(context.Background(), "textDocument/publishDiagnostics", map[string]any{
				"uri": o.TextDocument.URI, "version": o.TextDocument.Version, "diagnostics": []any{map[string]any{"message": "x"}}})
		}()
		return nil, nil
	case "textDocument/didChange":
		return nil, nil // recorded before the release (startPeer)
	case "echo":
		return params, nil
	case "fail":
		e := jsonrpc2.NewError(-32001, "refused on purpose")
		return nil, e
	}
	if req.IsCall() {
		return nil, jsonrpc2.NewError(jsonrpc2.MethodNotFound, method)
	}
	return nil, nil
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestCallAndErrors(t *testing.T) {
	e, _ := startPeer(t, Config{})
	ctx := ctxT(t)
	var got map[string]string
	if err := e.Call(ctx, "echo", map[string]string{"a": "b"}, &got); err != nil || got["a"] != "b" {
		t.Fatalf("echo: %v %v", got, err)
	}
	var raw json.RawMessage
	if err := e.Call(ctx, "echo", []int{1, 2}, &raw); err != nil || string(raw) != "[1,2]" {
		t.Fatalf("echo raw: %s %v", raw, err)
	}
	err := e.Call(ctx, "fail", nil, nil)
	var rpcErr *Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != -32001 || rpcErr.Message != "refused on purpose" {
		t.Fatalf("fail: %v, want the peer's error -32001", err)
	}
}

func TestInitializeNegotiatesEncoding(t *testing.T) {
	for _, tc := range []struct {
		encodings []string
		want      Encoding
		col       int // of the cursor after "😀é"
	}{
		{nil, UTF16, 3},
		{[]string{"utf-8", "utf-16"}, UTF8, 6},
	} {
		caps := map[string]any{}
		if tc.encodings != nil {
			caps["general"] = map[string]any{"positionEncodings": tc.encodings}
		}
		e, p := startPeer(t, Config{Capabilities: caps, InitializationOptions: map[string]any{"k": 1}, RootURI: "file:///ws"})
		ctx := ctxT(t)
		var res struct {
			Capabilities map[string]any `json:"capabilities"`
		}
		if err := e.Initialize(ctx, &res); err != nil {
			t.Fatal(err)
		}
		if e.Encoding() != tc.want || res.Capabilities["positionEncoding"] != string(tc.want) {
			t.Fatalf("encoding %q (result %v), want %q", e.Encoding(), res.Capabilities, tc.want)
		}
		pos, err := e.OpenFile(ctx, "file:///a.md", "x\n😀é‸z")
		if err != nil {
			t.Fatal(err)
		}
		if pos != (Position{Line: 1, Character: tc.col}) {
			t.Fatalf("%s: cursor at %+v, want line 1 character %d", tc.want, pos, tc.col)
		}
		if _, err := e.Await(ctx, DiagnosticsFor("file:///a.md", 1)); err != nil {
			t.Fatal(err)
		}
		p.mu.Lock()
		got, order := p.opened["file:///a.md"], strings.Join(p.received, ",")
		p.mu.Unlock()
		if got != "x\n😀éz" {
			t.Fatalf("server got text %q, want the marker removed", got)
		}
		if order != "initialize,initialized,textDocument/didOpen" {
			t.Fatalf("server received %s", order)
		}
	}
}

func TestAwaitHasADeadline(t *testing.T) {
	e, _ := startPeer(t, Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	begin := time.Now()
	_, err := e.Await(ctx, Notification("never/sent"))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Await of a message that never comes: %v, want the deadline", err)
	}
	if waited := time.Since(begin); waited > 2*time.Second {
		t.Fatalf("Await waited %v past its 50ms deadline", waited)
	}
}

func TestAwaitEndsWithTheServer(t *testing.T) {
	e, p := startPeer(t, Config{})
	errc := make(chan error, 1)
	go func() {
		_, err := e.Await(context.Background(), Notification("never/sent"))
		errc <- err
	}()
	_ = p.conn.Close()
	select {
	case err := <-errc:
		if err == nil || !strings.Contains(err.Error(), "ended") {
			t.Fatalf("Await after the server closed: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Await did not end when the server's output did")
	}
}

func TestAwaitSeesNotificationsOfEachKind(t *testing.T) {
	e, p := startPeer(t, Config{})
	ctx := ctxT(t)
	p.onCall["go"] = func(ctx context.Context, _ json.RawMessage) (any, error) {
		for _, n := range []struct {
			method string
			params any
		}{
			{"window/logMessage", map[string]any{"type": 3, "message": "index built in 3ms"}},
			{"window/showMessage", map[string]any{"type": 2, "message": "sessions root missing"}},
			{"$/progress", map[string]any{"token": "t", "value": map[string]any{"kind": "begin", "title": "Indexing"}}},
			{"$/progress", map[string]any{"token": "t", "value": map[string]any{"kind": "end"}}},
		} {
			if err := p.conn.Notify(ctx, n.method, n.params); err != nil {
				return nil, err
			}
		}
		return true, nil
	}
	mark := e.Mark()
	if err := e.Call(ctx, "go", nil, nil); err != nil {
		t.Fatal(err)
	}
	for name, pred := range map[string]Predicate{
		"logMessage":     LogMessage("index built"),
		"showMessage":    ShowMessage("root missing"),
		"progress begin": Progress("begin"),
		"progress end":   Progress("end"),
	} {
		if _, err := e.AwaitFrom(ctx, mark, pred); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if n := e.Count(LogMessage("not said")); n != 0 {
		t.Fatalf("a log line never sent matched %d times", n)
	}
	if n := e.Count(Progress("")); n != 2 {
		t.Fatalf("%d progress notifications, want 2", n)
	}
}

func TestServerRequestsAreAnswered(t *testing.T) {
	e, p := startPeer(t, Config{Settings: map[string]any{"dsh": map[string]any{"maxReferences": 3}}})
	ctx := ctxT(t)
	call := func(method string, params any) (json.RawMessage, error) {
		var res json.RawMessage
		_, err := p.conn.Call(ctx, method, params, &res)
		return res, err
	}
	res, err := call("workspace/configuration", map[string]any{"items": []any{map[string]any{"section": "dsh"}, map[string]any{"section": "other"}}})
	if err != nil || string(res) != `[{"maxReferences":3},null]` {
		t.Fatalf("configuration: %s %v", res, err)
	}
	for _, m := range []string{"window/workDoneProgress/create", "workspace/inlayHint/refresh", "client/registerCapability"} {
		if res, err := call(m, map[string]any{}); err != nil || string(res) != "null" {
			t.Fatalf("%s: %s %v", m, res, err)
		}
	}
	if res, err := call("window/showDocument", map[string]any{"uri": "file:///x"}); err != nil || string(res) != `{"success":true}` {
		t.Fatalf("showDocument: %s %v", res, err)
	}
	_, err = call("workspace/unknown", nil)
	var jerr *jsonrpc2.Error
	if !errors.As(err, &jerr) || jerr.Code != jsonrpc2.MethodNotFound {
		t.Fatalf("unknown request: %v, want MethodNotFound", err)
	}
	e.Refuse("window/showDocument")
	if _, err := call("window/showDocument", map[string]any{"uri": "file:///x"}); !errors.As(err, &jerr) || jerr.Code != jsonrpc2.MethodNotFound {
		t.Fatalf("refused showDocument: %v", err)
	}
	if n := e.Served("window/showDocument"); n != 2 {
		t.Fatalf("served showDocument %d times, want 2", n)
	}
	if n := e.Count(ServerCall("workspace/configuration")); n != 1 {
		t.Fatalf("%d configuration requests logged, want 1", n)
	}
}

func TestEditFile(t *testing.T) {
	e, p := startPeer(t, Config{})
	ctx := ctxT(t)
	if _, err := e.OpenFile(ctx, "file:///e.md", "😀 @ab"); err != nil {
		t.Fatal(err)
	}
	// Replace "ab" (UTF-16 columns 4–6, after the surrogate pair) and
	// append a line.
	if err := e.EditFile(ctx, "file:///e.md",
		Edit{Range: Range{Start: Position{0, 4}, End: Position{0, 6}}, Text: "src/"},
		Edit{Range: Range{Start: Position{0, 8}, End: Position{0, 8}}, Text: "\nnext"},
	); err != nil {
		t.Fatal(err)
	}
	text, version, ok := e.Text("file:///e.md")
	if !ok || text != "😀 @src/\nnext" || version != 2 {
		t.Fatalf("text %q version %d", text, version)
	}
	if err := e.EditFile(ctx, "file:///e.md", Edit{Range: Range{Start: Position{0, 1}, End: Position{0, 1}}}); err == nil {
		t.Fatal("an edit inside a surrogate pair was accepted")
	}
	if _, err := e.SetText(ctx, "file:///e.md", "whole‸"); err != nil {
		t.Fatal(err)
	}
	if err := e.Call(ctx, "echo", nil, nil); err != nil { // the peer read the changes
		t.Fatal(err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.changes) != 2 {
		t.Fatalf("%d didChange, want 2", len(p.changes))
	}
	var c struct {
		TextDocument struct {
			Version int32 `json:"version"`
		} `json:"textDocument"`
		ContentChanges []struct {
			Range *Range `json:"range"`
			Text  string `json:"text"`
		} `json:"contentChanges"`
	}
	if err := json.Unmarshal(p.changes[0], &c); err != nil || c.TextDocument.Version != 2 || len(c.ContentChanges) != 2 ||
		c.ContentChanges[0].Range == nil || *c.ContentChanges[0].Range != (Range{Position{0, 4}, Position{0, 6}}) {
		t.Fatalf("incremental change %s", p.changes[0])
	}
	c.ContentChanges = nil
	if err := json.Unmarshal(p.changes[1], &c); err != nil || c.TextDocument.Version != 3 || c.ContentChanges[0].Range != nil || c.ContentChanges[0].Text != "whole" {
		t.Fatalf("full change %s", p.changes[1])
	}
}

func TestCallCancelledByContext(t *testing.T) {
	e, p := startPeer(t, Config{})
	release := make(chan struct{})
	started := make(chan struct{})
	cancelled := make(chan json.RawMessage, 1)
	p.onCall["slow"] = func(context.Context, json.RawMessage) (any, error) {
		close(started)
		<-release
		return nil, nil
	}
	p.onCall["$/cancelRequest"] = func(_ context.Context, params json.RawMessage) (any, error) {
		cancelled <- params
		return nil, nil
	}
	defer close(release)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-started // the peer has the request, so the cancel has one to cancel
		cancel()
	}()
	if err := e.Call(ctx, "slow", nil, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled call: %v", err)
	}
	select {
	case params := <-cancelled:
		var c struct {
			ID json.Number `json:"id"`
		}
		if err := json.Unmarshal(params, &c); err != nil || c.ID.String() != "1099511627777" {
			t.Fatalf("$/cancelRequest %s, want the id of the first call", params)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the peer never saw $/cancelRequest")
	}
}

func TestRawFramesAndChosenIDs(t *testing.T) {
	e, _ := startPeer(t, Config{})
	ctx := ctxT(t)
	if err := e.Send(map[string]any{"id": "mine", "method": "echo", "params": map[string]any{"x": 1}}); err != nil {
		t.Fatal(err)
	}
	m, err := e.Await(ctx, Response(`"mine"`))
	if err != nil {
		t.Fatal(err)
	}
	if string(m.Result) != `{"x":1}` || !m.IDIs(` "mine" `) {
		t.Fatalf("answer %s", m.Raw)
	}
	// A hand-written frame, split across two writes.
	body := `{"jsonrpc":"2.0","id":7,"method":"echo","params":[7]}`
	f := Frame([]byte(body))
	if err := e.WriteRaw(f[:10]); err != nil {
		t.Fatal(err)
	}
	if err := e.WriteRaw(f[10:]); err != nil {
		t.Fatal(err)
	}
	if m, err := e.Await(ctx, Response("7")); err != nil || string(m.Result) != "[7]" {
		t.Fatalf("raw request: %+v %v", m, err)
	}
}

// TestStrictReading feeds the reader bytes a broken server could write.
func TestStrictReading(t *testing.T) {
	for _, tc := range []struct {
		name, out, want string
	}{
		{"clean", "Content-Length: 2\r\n\r\n{}", ""},
		{"empty", "", ""},
		{"LF only", "Content-Length: 2\n\n{}", "does not end in CRLF"},
		{"no length", "Content-Type: x\r\n\r\n{}", "without Content-Length"},
		{"bad length", "Content-Length: x\r\n\r\n{}", "bad Content-Length"},
		{"two lengths", "Content-Length: 2\r\nContent-Length: 3\r\n\r\n{}", "disagree"},
		{"not JSON", "Content-Length: 2\r\n\r\nhi", "not JSON"},
		{"cut body", "Content-Length: 9\r\n\r\n{}", "unexpected EOF"},
		{"stray print", "hello\n", "does not end in CRLF"},
		{"cut header", "Content-Len", "header"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := bufio.NewReader(strings.NewReader(tc.out))
			var err error
			for err == nil {
				_, err = ReadFrame(r)
			}
			if tc.want == "" {
				if !errors.Is(err, ErrNoFrame) {
					t.Fatalf("clean output: %v", err)
				}
				return
			}
			if errors.Is(err, ErrNoFrame) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
	}
}

// TestReadErrAndBatch: the editor keeps frames up to a violation, reports
// the violation, and splits batch arrays into members.
func TestReadErrAndBatch(t *testing.T) {
	serverEnd, clientEnd := net.Pipe()
	e := Connect(clientEnd, Config{})
	defer func() { _ = e.Close() }()
	go func() {
		_, _ = serverEnd.Write(Frame([]byte(`[{"jsonrpc":"2.0","id":1,"result":1},{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"bad"}}]`)))
		_, _ = serverEnd.Write([]byte("log line on stdout\n"))
		_ = serverEnd.Close()
	}()
	<-e.Done()
	if err := e.ReadErr(); err == nil || !strings.Contains(err.Error(), "CRLF") {
		t.Fatalf("ReadErr %v, want the stray line", err)
	}
	msgs := e.Messages()
	if len(msgs) != 1 || !msgs[0].Batch || len(msgs[0].Members) != 2 {
		t.Fatalf("messages %+v, want one batch of two", msgs)
	}
	if m := msgs[0].Members[1]; m.Error == nil || m.Error.Code != -32600 || !m.IDIs("null") {
		t.Fatalf("second member %+v", m)
	}
	if !Response("1")(msgs[0]) {
		t.Fatal("Response(1) does not find the batch member")
	}
}

func TestMarked(t *testing.T) {
	for _, tc := range []struct {
		marked string
		enc    Encoding
		text   string
		pos    Position
	}{
		{"abc", UTF16, "abc", Position{}},
		{"a‸bc", UTF16, "abc", Position{0, 1}},
		{"l1\n中文@‸", UTF16, "l1\n中文@", Position{1, 3}},
		{"l1\n中文@‸", UTF8, "l1\n中文@", Position{1, 7}},
		{"𝄞‸", UTF16, "𝄞", Position{0, 2}},
	} {
		text, pos := Marked(tc.marked, tc.enc)
		if text != tc.text || pos != tc.pos {
			t.Errorf("Marked(%q, %s) = %q %+v, want %q %+v", tc.marked, tc.enc, text, pos, tc.text, tc.pos)
		}
		if off, err := positionOffset(text, pos, tc.enc); err != nil || OffsetPosition(text, off, tc.enc) != pos {
			t.Errorf("%q: offset of %+v is %d (%v)", tc.marked, pos, off, err)
		}
	}
}

// TestNextAndForget reads the output in order and drops what was read.
func TestNextAndForget(t *testing.T) {
	e, _ := startPeer(t, Config{})
	ctx := ctxT(t)
	for i := range 3 {
		if err := e.Send(map[string]any{"id": i, "method": "echo", "params": []int{i}}); err != nil {
			t.Fatal(err)
		}
	}
	// The peer answers each request on a goroutine of its own, so the
	// answers may come in any order: each frame is an answer to one of the
	// three, and all three arrive.
	answered := map[string]bool{}
	for i := range 3 {
		m, err := e.Next(ctx, i)
		if err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		for id := range 3 {
			if m.IDIs(strconv.Itoa(id)) {
				answered[strconv.Itoa(id)] = true
			}
		}
		if len(answered) != i+1 {
			t.Fatalf("frame %d (%s) is not an answer to a request not yet answered: %v", i, m.Raw, answered)
		}
		e.Forget(i + 1)
	}
	if n := len(e.Messages()); n != 0 || e.Mark() != 3 {
		t.Fatalf("after forgetting all: %d kept, mark %d, want 0 and 3", n, e.Mark())
	}
	if e.Count(Response("0")) != 0 {
		t.Fatal("a forgotten frame is still found")
	}
}

// TestPauseKeepsEveryFrame: frames written while the editor does not read
// all arrive, in order, with their indices, once it reads again.
func TestPauseKeepsEveryFrame(t *testing.T) {
	e, p := startPeer(t, Config{})
	ctx := ctxT(t)
	e.PauseReading()
	sent := make(chan error, 1)
	go func() {
		for i := range 5 {
			if err := p.conn.Notify(ctx, "n", []int{i}); err != nil {
				sent <- err
				return
			}
		}
		sent <- nil
	}()
	e.ResumeReading()
	if err := <-sent; err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		m, err := e.Next(ctx, i)
		if err != nil || m.Index != i || string(m.Params) != fmt.Sprintf("[%d]", i) || m.Received.IsZero() {
			t.Fatalf("frame %d: %+v %v", i, m, err)
		}
	}
}
