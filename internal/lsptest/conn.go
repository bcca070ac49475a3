package lsptest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"time"
)

// Conn is a synchronous JSON-RPC client over a server's stdin and stdout,
// for benchmarks that send one request at a time and time it: Call writes
// a request and reads frames until its answer, answering the server's own
// requests on the way. Unlike Editor it has no reader goroutine and keeps
// nothing it read, so nothing but the request under measurement runs in
// the client. A Conn is not safe for concurrent use.
type Conn struct {
	w    io.Writer
	r    *bufio.Reader
	next int
	// sent is when the latest Call began sending its request, lastByte
	// when the last byte of the latest frame was read, and decoded how
	// long decoding that frame took after it.
	sent     time.Time
	lastByte time.Time
	decoded  time.Duration
}

// NewConn returns a Conn writing to w (the server's stdin) and reading
// from r (its stdout, as StartPipes gives them).
func NewConn(w io.Writer, r *bufio.Reader) *Conn { return &Conn{w: w, r: r} }

// Send writes msg as one JSON-RPC 2.0 message (FrameMessage sets
// "jsonrpc"; HTML characters are not escaped), for a message Call and
// Notify do not write.
func (c *Conn) Send(msg map[string]any) error {
	frame, err := FrameMessage(msg)
	if err != nil {
		return err
	}
	if _, err := c.w.Write(frame); err != nil {
		return fmt.Errorf("writing to the server: %w", err)
	}
	return nil
}

// Notify sends a notification of method with params.
func (c *Conn) Notify(method string, params any) error {
	return c.Send(map[string]any{"method": method, "params": params})
}

// frame is the part of a frame Call looks at.
type frame struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Result json.RawMessage `json:"result"`
	Error  *Error          `json:"error"`
}

// readFrame reads one frame, notes when its last byte was read, and then
// decodes it, noting how long that took.
func (c *Conn) readFrame() (frame, error) {
	body, err := ReadFrameBody(c.r)
	if err != nil {
		return frame{}, fmt.Errorf("reading from the server: %w", err)
	}
	c.lastByte = time.Now()
	var f frame
	if err := json.Unmarshal(body, &f); err != nil {
		return frame{}, fmt.Errorf("decoding a frame: %w", err)
	}
	c.decoded = time.Since(c.lastByte)
	return f, nil
}

// Call sends a request of method with params, under the next integer id
// (1 first), and returns the result of its answer. While it waits it
// answers each request of the server (a frame with a method and an id)
// with a null result under the same id, and skips notifications and
// answers to other ids. An error answer is returned as an error naming
// method, code and message, which wraps the answer's *Error.
func (c *Conn) Call(method string, params any) (json.RawMessage, error) {
	c.next++
	id := c.next
	c.sent = time.Now()
	if err := c.Send(map[string]any{"id": id, "method": method, "params": params}); err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	want := strconv.Itoa(id)
	for {
		f, err := c.readFrame()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", method, err)
		}
		if f.Method != "" {
			if len(f.ID) > 0 {
				if err := c.Send(map[string]any{"id": f.ID, "result": nil}); err != nil {
					return nil, fmt.Errorf("%s: answering the server's %s: %w", method, f.Method, err)
				}
			}
			continue
		}
		if string(f.ID) != want {
			continue
		}
		if f.Error != nil {
			return nil, fmt.Errorf("%s: error %d: %w", method, f.Error.Code, f.Error)
		}
		return f.Result, nil
	}
}

// LastByte is when the last byte of the latest frame read was read: for
// a Call that returned, the last byte of its answer.
func (c *Conn) LastByte() time.Time { return c.lastByte }

// RoundTrip is the latest Call's round trip: from just before its request
// was encoded and written to LastByte of its answer. Decoding the answer
// is not in it (see Decoded). It is meaningful only when that Call got an
// answer (an error answer included).
func (c *Conn) RoundTrip() time.Duration { return c.lastByte.Sub(c.sent) }

// Decoded is how long decoding the latest frame read took, after its last
// byte was read: the client's work, which RoundTrip leaves out.
func (c *Conn) Decoded() time.Duration { return c.decoded }
