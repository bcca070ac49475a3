package server

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"
)

// rawClient speaks framed JSON-RPC by hand over two io.Pipes, so a test
// controls ids and can close the server's input while still reading its
// output.
type rawClient struct {
	t    *testing.T
	in   *io.PipeWriter // the server's stdin
	out  *bufio.Reader  // the server's stdout
	done chan serveResult
	seen map[string]rawMessage
}

type pipeRWC struct {
	io.Reader
	io.Writer
	closeIn func() error
}

func (p pipeRWC) Close() error { return p.closeIn() }

func newRawClient(t *testing.T, opts Options) *rawClient {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = zaptest.NewLogger(t)
	}
	opts.Watch = watchModeOff
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c := &rawClient{t: t, in: inW, out: bufio.NewReader(outR), done: make(chan serveResult, 1), seen: map[string]rawMessage{}}
	go func() {
		code, err := Serve(t.Context(), pipeRWC{Reader: inR, Writer: outW, closeIn: inR.Close}, opts)
		_ = outW.Close()
		c.done <- serveResult{code, err}
	}()
	t.Cleanup(func() {
		_ = inW.Close()
		go func() { _, _ = io.Copy(io.Discard, outR) }()
		select {
		case <-c.done:
		case <-time.After(testTimeout):
			t.Error("server did not stop")
		}
	})
	return c
}

func (c *rawClient) send(msg map[string]any) {
	c.t.Helper()
	msg["jsonrpc"] = "2.0"
	body, err := json.Marshal(msg)
	if err != nil {
		c.t.Fatal(err)
	}
	if _, err := fmt.Fprintf(c.in, "Content-Length: %d\r\n\r\n%s", len(body), body); err != nil {
		c.t.Fatalf("writing frame: %v", err)
	}
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

// readFrame reads one frame strictly: headers, then exactly Content-Length
// bytes of JSON.
func readFrame(r *bufio.Reader) (json.RawMessage, error) {
	length := -1
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return nil, err
		}
		if !strings.HasSuffix(line, "\r\n") {
			return nil, fmt.Errorf("header line %q does not end in CRLF", line)
		}
		line = strings.TrimSuffix(line, "\r\n")
		if line == "" {
			break
		}
		name, value, ok := strings.Cut(line, ":")
		if !ok {
			return nil, fmt.Errorf("malformed header %q", line)
		}
		if strings.EqualFold(strings.TrimSpace(name), "Content-Length") {
			n, err := strconv.Atoi(strings.TrimSpace(value))
			if err != nil {
				return nil, fmt.Errorf("bad Content-Length %q", value)
			}
			length = n
		}
	}
	if length < 0 {
		return nil, fmt.Errorf("frame without Content-Length")
	}
	body := make([]byte, length)
	if _, err := io.ReadFull(r, body); err != nil {
		return nil, fmt.Errorf("reading body: %w", err)
	}
	if !json.Valid(body) {
		return nil, fmt.Errorf("body is not JSON: %q", body)
	}
	return body, nil
}

// readResponse returns the response with id, reading frames until it
// arrives; responses to other ids are kept for later calls.
func (c *rawClient) readResponse(id string) rawMessage {
	c.t.Helper()
	if m, ok := c.seen[id]; ok {
		delete(c.seen, id)
		return m
	}
	type res struct {
		m   rawMessage
		err error
	}
	deadline := time.After(testTimeout)
	for {
		ch := make(chan res, 1)
		go func() {
			body, err := readFrame(c.out)
			if err != nil {
				ch <- res{err: err}
				return
			}
			var m rawMessage
			err = json.Unmarshal(body, &m)
			ch <- res{m: m, err: err}
		}()
		select {
		case r := <-ch:
			if r.err != nil {
				c.t.Fatalf("reading response %s: %v", id, r.err)
			}
			if r.m.Method != "" {
				continue
			}
			if string(r.m.ID) == id {
				return r.m
			}
			c.seen[string(r.m.ID)] = r.m
		case <-deadline:
			c.t.Fatalf("no response to %s", id)
			return rawMessage{}
		}
	}
}

func (c *rawClient) initialize(settings map[string]any) {
	c.t.Helper()
	c.send(map[string]any{"id": 1, "method": "initialize", "params": initParams(initOptions{settings: settings})})
	if m := c.readResponse("1"); m.Error != nil {
		c.t.Fatalf("initialize: %+v", m.Error)
	}
	c.send(map[string]any{"method": "initialized", "params": map[string]any{}})
}

// testCancelOverWire sends a dsh/prepare that blocks, cancels it with
// $/cancelRequest, and expects RequestCancelled with the CANCELLED code.
func testCancelOverWire(t *testing.T, opts Options) {
	c := newRawClient(t, opts)
	c.initialize(map[string]any{"sessionId": "s-target"})
	c.send(map[string]any{"id": "slow", "method": MethodPrepare, "params": map[string]any{"text": "@[a](dsh-session:" + strings.TrimPrefix(uriOf("s-alpha"), "dsh-session:") + ")"}})
	time.Sleep(30 * time.Millisecond)
	c.send(map[string]any{"method": "$/cancelRequest", "params": map[string]any{"id": "slow"}})
	m := c.readResponse(`"slow"`)
	if m.Error == nil || m.Error.Code != -32800 || m.Error.Data.Code != "SESSION_REFERENCE_CANCELLED" {
		t.Fatalf("cancelled request answered %+v, want -32800 with SESSION_REFERENCE_CANCELLED", m.Error)
	}
}

func TestResponsesFlushedAtEOF(t *testing.T) {
	opts, fake, ws := testOptions(t)
	// Slow enough that every request is still running when input ends.
	fake.snapshotDelay = 200 * time.Millisecond
	c := newRawClient(t, opts)
	c.initialize(map[string]any{"sessionId": "s-target", "cwd": ws})
	// Several requests, then the client closes its end at once.
	for i := 0; i < 5; i++ {
		c.send(map[string]any{"id": 10 + i, "method": MethodCandidates, "params": map[string]any{"query": ""}})
	}
	_ = c.in.Close()
	for i := 0; i < 5; i++ {
		m := c.readResponse(strconv.Itoa(10 + i))
		if m.Error != nil || len(m.Result) == 0 {
			t.Errorf("request %d: %+v", 10+i, m.Error)
		}
	}
	select {
	case r := <-c.done:
		c.done <- r
		if r.code != 1 {
			t.Errorf("exit code after EOF without shutdown = %d, want 1", r.code)
		}
	case <-time.After(testTimeout):
		t.Fatal("server did not exit at EOF")
	}
}
