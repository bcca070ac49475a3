package server

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/dsh-refls/dsh-refls/internal/lsptest"
)

// wireClient drives Serve over two io.Pipes through the test editor's raw
// side: the test writes bytes and chosen ids itself, and reads every frame
// the server writes, in order, batch arrays included. The server's output
// is read strictly as frames (lsptest.ReadFrame).
type wireClient struct {
	t      testing.TB
	editor *lsptest.Editor
	pos    int // index of the next frame next returns
	done   chan serveResult
	logs   *observer.ObservedLogs
}

type pipeRWC struct {
	io.Reader
	io.Writer
	closeIn func() error
}

func (p pipeRWC) Close() error { return p.closeIn() }

// newWireClient starts Serve with opts; its log is observed at Info and
// above (debug lines of thousands of requests would only cost memory).
func newWireClient(t *testing.T, opts Options) *wireClient {
	t.Helper()
	core, logs := observer.New(zapcore.InfoLevel)
	opts.Logger = zap.New(core)
	opts.Watch = watchModeOff
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c := &wireClient{t: t, done: make(chan serveResult, 1), logs: logs}
	go func() {
		code, err := Serve(t.Context(), pipeRWC{Reader: inR, Writer: outW, closeIn: inR.Close}, opts)
		_ = outW.Close()
		c.done <- serveResult{code, err}
	}()
	c.editor = lsptest.New(outR, inW, inW, lsptest.Config{})
	t.Cleanup(func() {
		_ = c.editor.Close()
		select {
		case r := <-c.done:
			c.done <- r
		case <-time.After(testTimeout):
			t.Error("server did not stop")
		}
	})
	return c
}

// write sends raw bytes.
func (c *wireClient) write(b []byte) {
	c.t.Helper()
	if err := c.editor.WriteRaw(b); err != nil {
		c.t.Fatalf("writing to the server: %v", err)
	}
}

// frameBytes frames one message.
func frameBytes(t testing.TB, msg map[string]any) []byte {
	t.Helper()
	b, err := lsptest.FrameMessage(msg)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// rawFrame frames body as it is.
func rawFrame(body string) []byte { return lsptest.Frame([]byte(body)) }

func (c *wireClient) send(msg map[string]any) { c.t.Helper(); c.write(frameBytes(c.t, msg)) }

// closeInput ends the server's input; its output is still read.
func (c *wireClient) closeInput() { _ = c.editor.Close() }

// next returns the next frame the server wrote, failing on timeout or end.
// Frames it returned are forgotten, so long runs hold no history.
func (c *wireClient) next() json.RawMessage {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	m, err := c.editor.Next(ctx, c.pos)
	if err != nil {
		c.t.Fatalf("no frame from the server: %v (read error: %v)", err, c.editor.ReadErr())
	}
	c.pos++
	c.editor.Forget(c.pos)
	return m.Raw
}

// response returns the next response (not a server notification or
// request), failing if it is not an object.
func (c *wireClient) response() rawMessage {
	c.t.Helper()
	for {
		f := c.next()
		var m rawMessage
		if err := json.Unmarshal(f, &m); err != nil {
			c.t.Fatalf("frame %s is not a response object: %v", f, err)
		}
		if m.Method == "" {
			return m
		}
	}
}

// readResponse returns the response whose id is the JSON value id, among
// everything the server wrote so far or writes until the timeout; frames
// before it stay readable by a later readResponse (answers may come in
// any order).
func (c *wireClient) readResponse(id string) rawMessage {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	f, err := c.editor.AwaitFrom(ctx, c.pos, func(m lsptest.Message) bool { return m.IsResponse() && m.IDIs(id) })
	if err != nil {
		c.t.Fatalf("no response to %s: %v", id, err)
	}
	var m rawMessage
	if err := json.Unmarshal(f.Raw, &m); err != nil {
		c.t.Fatalf("response %s: %v", f.Raw, err)
	}
	return m
}

// rest closes the input and returns every frame the server writes, from
// the next unread one, until it closes its output, and how Serve ended.
func (c *wireClient) rest() ([]json.RawMessage, serveResult) {
	c.t.Helper()
	c.closeInput()
	select {
	case <-c.editor.Done():
	case <-time.After(testTimeout):
		c.t.Fatal("the server did not close its output")
	}
	if err := c.editor.ReadErr(); err != nil {
		c.t.Fatalf("the server wrote something other than frames: %v", err)
	}
	var out []json.RawMessage
	for _, m := range c.editor.Messages() {
		out = append(out, m.Raw)
	}
	// Messages holds what was not forgotten: the frames from c.pos on.
	c.pos += len(out)
	select {
	case r := <-c.done:
		c.done <- r
		return out, r
	case <-time.After(testTimeout):
		c.t.Fatal("Serve did not return")
		return nil, serveResult{}
	}
}

// exit waits for Serve to return and gives how it ended.
func (c *wireClient) exit() serveResult {
	c.t.Helper()
	select {
	case r := <-c.done:
		c.done <- r
		return r
	case <-time.After(testTimeout):
		c.t.Fatal("Serve did not return")
		return serveResult{}
	}
}

// initialize initializes with the workspace ws as root and as cwd.
func (c *wireClient) initialize(ws string) {
	c.t.Helper()
	c.send(map[string]any{"id": "init", "method": "initialize", "params": initParams(initOptions{root: ws, settings: map[string]any{"sessionId": "s-target", "cwd": ws}})})
	if m := c.response(); m.Error != nil || string(m.ID) != `"init"` {
		c.t.Fatalf("initialize answered %s %+v", m.ID, m.Error)
	}
	c.send(map[string]any{"method": "initialized", "params": map[string]any{}})
}

// initializeWith initializes with settings and no root.
func (c *wireClient) initializeWith(settings map[string]any) {
	c.t.Helper()
	c.send(map[string]any{"id": "init", "method": "initialize", "params": initParams(initOptions{settings: settings})})
	if m := c.readResponse(`"init"`); m.Error != nil {
		c.t.Fatalf("initialize: %+v", m.Error)
	}
	c.send(map[string]any{"method": "initialized", "params": map[string]any{}})
}

// statusProbe sends dsh/status with id and expects its answer next: the
// connection still serves, and nothing else was answered in between.
func (c *wireClient) statusProbe(id string) {
	c.t.Helper()
	c.send(map[string]any{"id": id, "method": MethodStatus, "params": map[string]any{}})
	m := c.response()
	if string(m.ID) != strconv.Quote(id) || m.Error != nil || len(m.Result) == 0 {
		c.t.Fatalf("status probe %q answered with id %s, error %+v", id, m.ID, m.Error)
	}
}

// waitBuilt asks dsh/status until it says the session index is built,
// pausing between asks until the server writes something or briefly; each
// answer must be the next response.
func (c *wireClient) waitBuilt() {
	c.t.Helper()
	deadline := time.Now().Add(testTimeout)
	for i := 0; ; i++ {
		id := fmt.Sprintf("built-%d", i)
		c.send(map[string]any{"id": id, "method": MethodStatus, "params": map[string]any{}})
		m := c.response()
		var st statusResult
		if string(m.ID) != strconv.Quote(id) || m.Error != nil || json.Unmarshal(m.Result, &st) != nil {
			c.t.Fatalf("dsh/status %s answered id %s: %s %+v", id, m.ID, m.Result, m.Error)
		}
		if !st.Building {
			return
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("session index not built within %v: %+v", testTimeout, st)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		_, _ = c.editor.AwaitFrom(ctx, c.editor.Mark(), func(lsptest.Message) bool { return true })
		cancel()
	}
}

// hasLog reports whether a log entry at Warn or above holds substr in its
// message or fields.
func (c *wireClient) hasLog(substr string) bool {
	for _, e := range c.logs.All() {
		if e.Level < zapcore.WarnLevel {
			continue
		}
		text := e.Message
		for k, v := range e.ContextMap() {
			text += fmt.Sprintf(" %s=%v", k, v)
		}
		if strings.Contains(text, substr) {
			return true
		}
	}
	return false
}

// rawMessage is one frame read back.
type rawMessage struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int       `json:"code"`
		Message string    `json:"message"`
		Data    ErrorData `json:"data"`
	} `json:"error"`
}
