package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/dsh-refls/dsh-refls/internal/lsptest"
)

// rpcError is an error response from the server.
type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func (e *rpcError) Error() string { return fmt.Sprintf("%d %s", e.Code, e.Message) }

// message is any frame read from the server.
type message struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Result json.RawMessage `json:"result"`
	Error  *rpcError       `json:"error"`
}

// client is a minimal LSP client over the server's stdin and stdout: calls
// wait for their answer by id, server-to-client requests are answered
// with null, notifications are dropped.
type client struct {
	writeMu sync.Mutex
	w       io.Writer

	seq atomic.Int64

	// mu guards waiting and readErr.
	mu      sync.Mutex
	waiting map[string]chan message
	readErr error
	done    chan struct{} // closed when the server's output ends
}

func newClient(w io.Writer, r io.Reader) *client {
	c := &client{w: w, waiting: map[string]chan message{}, done: make(chan struct{})}
	go c.readLoop(bufio.NewReader(r))
	return c
}

func (c *client) send(msg map[string]any) error {
	msg["jsonrpc"] = "2.0"
	body, err := json.Marshal(msg)
	if err != nil {
		return fmt.Errorf("encoding %v: %w", msg["method"], err)
	}
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	if _, err := c.w.Write(lsptest.Frame(body)); err != nil {
		return fmt.Errorf("writing %v: %w", msg["method"], err)
	}
	return nil
}

// notify sends a notification.
func (c *client) notify(method string, params any) error {
	return c.send(map[string]any{"method": method, "params": params})
}

// call sends a request and waits for its answer.
func (c *client) call(method string, params any) (json.RawMessage, error) {
	id := c.seq.Add(1)
	key := strconv.FormatInt(id, 10)
	ch := make(chan message, 1)
	c.mu.Lock()
	if c.readErr != nil {
		err := c.readErr
		c.mu.Unlock()
		return nil, err
	}
	c.waiting[key] = ch
	c.mu.Unlock()
	if err := c.send(map[string]any{"id": id, "method": method, "params": params}); err != nil {
		c.mu.Lock()
		delete(c.waiting, key)
		c.mu.Unlock()
		return nil, err
	}
	select {
	case m := <-ch:
		if m.Error != nil {
			return nil, m.Error
		}
		return m.Result, nil
	case <-c.done:
		return nil, fmt.Errorf("%s: the server's output ended: %w", method, c.err())
	}
}

func (c *client) err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.readErr
}

func (c *client) readLoop(r *bufio.Reader) {
	err := c.readFrames(r)
	c.mu.Lock()
	if err == nil {
		err = io.EOF
	}
	c.readErr = err
	c.mu.Unlock()
	close(c.done)
}

// readFrames reads strictly framed JSON until the end of output.
func (c *client) readFrames(r *bufio.Reader) error {
	for {
		body, err := lsptest.ReadFrameBody(r)
		if errors.Is(err, lsptest.ErrNoFrame) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading a frame: %w", err)
		}
		var m message
		if err := json.Unmarshal(body, &m); err != nil {
			return fmt.Errorf("the server wrote %q: %w", body, err)
		}
		switch {
		case m.Method != "" && len(m.ID) > 0:
			// A server-to-client request (progress creation, registration).
			if err := c.send(map[string]any{"id": m.ID, "result": nil}); err != nil {
				return err
			}
		case m.Method != "":
		default:
			c.mu.Lock()
			ch := c.waiting[string(m.ID)]
			delete(c.waiting, string(m.ID))
			c.mu.Unlock()
			if ch != nil {
				ch <- m
			}
		}
	}
}
