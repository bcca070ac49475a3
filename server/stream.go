package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"sync"
	"time"

	"go.lsp.dev/jsonrpc2"
)

// drainTimeout bounds how long the server waits, after the client closed
// its end, for in-flight requests to answer: long enough for any prepare,
// short enough that a stuck handler cannot keep the process alive.
const drainTimeout = 30 * time.Second

// frameIO is the frame-level surface of jsonrpc2's header stream. Exposing
// ReadFrame/WriteFrame keeps the connection on its fast path.
type frameIO interface {
	jsonrpc2.Stream
	ReadFrame(ctx context.Context) ([]byte, int64, error)
	WriteFrame(ctx context.Context, data []byte) (int64, error)
}

// serverStream wraps the header-framed stream of the connection. It
// remembers which incoming calls are still unanswered so that, at end of
// input, the read side reports EOF only after every answer has been
// written: jsonrpc2 refuses writes once its reader has failed, which would
// otherwise drop the responses of requests still running. It also writes
// the optional JSON-lines trace of every frame (§4.3).
type serverStream struct {
	inner frameIO
	trace *tracer

	// pendingMu guards pending (ids of calls read and not yet answered) and
	// drained, which is closed, and replaced, whenever pending becomes empty
	// so that every waiter wakes.
	pendingMu sync.Mutex
	pending   map[string]struct{}
	drained   chan struct{}

	abortOnce sync.Once
	aborted   chan struct{} // closed when the server stops waiting for answers
}

func newServerStream(rwc io.ReadWriteCloser, trace *tracer) *serverStream {
	return &serverStream{
		inner:   jsonrpc2.NewHeaderStream(rwc).(frameIO),
		trace:   trace,
		pending: map[string]struct{}{},
		drained: make(chan struct{}),
		aborted: make(chan struct{}),
	}
}

// abort stops waiting for unanswered calls: the server is going away.
func (s *serverStream) abort() {
	s.abortOnce.Do(func() { close(s.aborted) })
}

// envelope is the part of a JSON-RPC message the stream looks at.
type envelope struct {
	ID     json.RawMessage `json:"id"`
	Method *string         `json:"method"`
}

// kindOf classifies one encoded message.
func kindOf(frame []byte) (e envelope, isRequest, isNotification, isResponse bool) {
	if err := json.Unmarshal(frame, &e); err != nil {
		return e, false, false, false
	}
	hasID := len(e.ID) > 0 && string(e.ID) != "null"
	switch {
	case e.Method != nil && hasID:
		return e, true, false, false
	case e.Method != nil:
		return e, false, true, false
	default:
		return e, false, false, true
	}
}

// forEachMessage calls f for each message of a frame (one, or a batch).
func forEachMessage(frame []byte, f func([]byte)) {
	trimmed := bytes.TrimSpace(frame)
	if len(trimmed) > 0 && trimmed[0] == '[' {
		var batch []json.RawMessage
		if json.Unmarshal(trimmed, &batch) == nil {
			for _, m := range batch {
				f(m)
			}
			return
		}
	}
	f(trimmed)
}

// ReadFrame implements the connection's frame reading.
func (s *serverStream) ReadFrame(ctx context.Context) ([]byte, int64, error) {
	frame, n, err := s.inner.ReadFrame(ctx)
	if err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.ErrClosedPipe) {
			s.waitDrained()
		}
		return frame, n, err
	}
	forEachMessage(frame, func(m []byte) {
		e, isReq, isNote, _ := kindOf(m)
		if isReq {
			s.pendingMu.Lock()
			s.pending[string(e.ID)] = struct{}{}
			s.pendingMu.Unlock()
		}
		s.trace.record(directionReceive, m, isReq, isNote)
	})
	return frame, n, nil
}

// waitDrained blocks until every pending call has been answered, or the
// drain timeout passes.
func (s *serverStream) waitDrained() {
	deadline := time.NewTimer(drainTimeout)
	defer deadline.Stop()
	for {
		s.pendingMu.Lock()
		n, drained := len(s.pending), s.drained
		s.pendingMu.Unlock()
		if n == 0 {
			return
		}
		select {
		case <-drained:
		case <-s.aborted:
			return
		case <-deadline.C:
			return
		}
	}
}

// Read implements jsonrpc2.Stream.
func (s *serverStream) Read(ctx context.Context) (jsonrpc2.Message, int64, error) {
	frame, n, err := s.ReadFrame(ctx)
	if err != nil {
		return nil, n, err
	}
	msg, err := jsonrpc2.DecodeMessage(bytes.Clone(frame))
	return msg, n, err
}

// WriteFrame implements the connection's frame writing.
func (s *serverStream) WriteFrame(ctx context.Context, data []byte) (int64, error) {
	n, err := s.inner.WriteFrame(ctx, data)
	forEachMessage(data, func(m []byte) {
		e, isReq, isNote, isResp := kindOf(m)
		s.trace.record(directionSend, m, isReq, isNote)
		if isResp {
			s.pendingMu.Lock()
			delete(s.pending, string(e.ID))
			if len(s.pending) == 0 {
				close(s.drained)
				s.drained = make(chan struct{})
			}
			s.pendingMu.Unlock()
		}
	})
	return n, err
}

// Write implements jsonrpc2.Stream.
func (s *serverStream) Write(ctx context.Context, msg jsonrpc2.Message) (int64, error) {
	data, err := jsonrpc2.EncodeMessage(msg)
	if err != nil {
		return 0, err
	}
	return s.WriteFrame(ctx, data)
}

// Close implements jsonrpc2.Stream.
func (s *serverStream) Close() error { return s.inner.Close() }

// Trace directions.
const (
	directionSend    = "send"
	directionReceive = "receive"
)

// tracer writes the JSON-lines trace of §4.3, which LSP inspectors load.
// A nil tracer records nothing.
type tracer struct {
	mu sync.Mutex
	w  io.Writer
}

// newTracer returns a tracer writing to w, or nil when w is nil.
func newTracer(w io.Writer) *tracer {
	if w == nil {
		return nil
	}
	return &tracer{w: w}
}

// traceLine is one line of the trace.
type traceLine struct {
	IsLSPMessage bool            `json:"isLSPMessage"`
	Type         string          `json:"type"`
	Message      json.RawMessage `json:"message"`
	Timestamp    int64           `json:"timestamp"`
}

func (t *tracer) record(direction string, msg []byte, isRequest, isNotification bool) {
	if t == nil {
		return
	}
	kind := "response"
	switch {
	case isRequest:
		kind = "request"
	case isNotification:
		kind = "notification"
	}
	if !json.Valid(msg) {
		msg, _ = json.Marshal(string(msg))
	}
	line, err := json.Marshal(traceLine{
		IsLSPMessage: true,
		Type:         direction + "-" + kind,
		Message:      json.RawMessage(msg),
		Timestamp:    time.Now().UnixMilli(),
	})
	if err != nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	_, _ = t.w.Write(append(line, '\n'))
}
