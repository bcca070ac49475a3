package lspwire

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"time"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
)

// Stream is the header-framed stream of one connection, a jsonrpc2.Stream
// (with the frame reading and writing jsonrpc2 looks for).
//
// It reads frames itself, with bounded headers and bodies: a frame that is
// well framed but not a JSON-RPC message (invalid JSON, not a request
// object, a body over MaxMessageBytes) is answered with the matching
// JSON-RPC error and skipped, so the connection goes on; only input whose
// framing is lost (garbage, a missing or unparsable Content-Length) ends
// it, with the reason logged and returned.
//
// It counts the incoming calls still unanswered so that, at end of input,
// the read side reports the end only after every answer has been written:
// jsonrpc2 refuses writes once its reader has failed, which would otherwise
// drop the responses of requests still running. It counts rather than
// matching ids: jsonrpc2 answers an id re-encoded ("\u0061" comes back as
// "a", -0 as 0), so raw id bytes would never match and every exit would
// wait the whole drain timeout. It also writes the optional JSON-lines trace
// of every frame (§4.3).
type Stream struct {
	inner  *frameWriter
	reader *frameReader
	trace  *tracer

	// pendingMu guards pending (how many calls were read and not yet
	// answered); drained, which is closed, and replaced, whenever pending
	// drops to zero so that every waiter wakes; and room, closed and
	// replaced whenever pending drops below maxPendingCalls.
	pendingMu sync.Mutex
	pending   int
	drained   chan struct{}
	room      chan struct{}

	abortOnce sync.Once
	aborted   chan struct{} // closed when the server stops waiting for answers

	// writeFailed is Hooks.WriteFailed.
	writeFailed func()
}

// Hooks are what a Stream calls back; each may be nil.
type Hooks struct {
	// Trace, when set, receives the JSON-lines trace of every frame.
	Trace io.Writer
	// WriteFailed is called when a frame could not be written for a
	// reason other than its context: the output is broken, and no call
	// being handled can deliver its answer.
	WriteFailed func()
	// Written is called once for every answer held (Hold) when it is
	// written or dropped (its call's context ended, or the Stream closed
	// first), with its result when it was Encoded (AnswerBuffers.GiveBack
	// takes the array back), nil when it was Streamed.
	Written func(result []byte)
	// FrameWritten is called after each frame, under the writer's lock (a
	// large answer is garbage once written: the memory releaser counts it
	// as activity).
	FrameWritten func()
}

// New returns the stream of the connection rwc.
func New(rwc io.ReadWriteCloser, hooks Hooks) *Stream {
	s := &Stream{
		inner:       newFrameWriter(rwc),
		reader:      newFrameReader(rwc),
		trace:       newTracer(hooks.Trace),
		drained:     make(chan struct{}),
		room:        make(chan struct{}),
		aborted:     make(chan struct{}),
		writeFailed: hooks.WriteFailed,
	}
	s.inner.written = hooks.FrameWritten
	s.inner.answered = hooks.Written
	s.inner.wholeBodies = s.trace != nil
	return s
}

// Hold keeps the answer a of a call and returns the placeholder the
// handler gives jsonrpc2 as its result: Write and WriteFrame write a in its
// place (see Answer). An answer whose placeholder is never written (the
// connection shut down before its answer) stays held while the Stream
// lives.
func (s *Stream) Hold(a Answer) json.RawMessage { return s.inner.held.hold(a) }

// Abort stops waiting for unanswered calls: the server is going away.
func (s *Stream) Abort() {
	s.abortOnce.Do(func() { close(s.aborted) })
}

// forEachMessage calls f with each message of a frame (one, or a batch)
// and its kind. A single message is classified by jsonrpc2's scanner, which
// reads the envelope without decoding params or results, so classifying a
// 100 MB answer costs one pass and no copy. Batches (rare: only clients
// send them, and jsonrpc2 answers them) are split with encoding/json.
func forEachMessage(frame []byte, f func(m []byte, kind jsonrpc2.MessageViewKind)) {
	trimmed := bytes.TrimSpace(frame)
	if len(trimmed) > 0 && trimmed[0] == '[' {
		var batch []json.RawMessage
		if json.Unmarshal(trimmed, &batch) == nil {
			for _, m := range batch {
				f(m, kindOf(m))
			}
			return
		}
	}
	f(trimmed, kindOf(trimmed))
}

// kindOf classifies one encoded message; MessageViewInvalid when it is not
// one.
func kindOf(m []byte) jsonrpc2.MessageViewKind {
	v, err := jsonrpc2.ScanMessageView(m)
	if err != nil {
		return jsonrpc2.MessageViewInvalid
	}
	return v.Kind
}

// isResponse reports whether kind is an answer to a call.
func isResponse(kind jsonrpc2.MessageViewKind) bool {
	return kind == jsonrpc2.MessageViewResponseResult || kind == jsonrpc2.MessageViewResponseError
}

// ReadFrame implements the connection's frame reading. It returns the next
// frame that holds a JSON-RPC message or batch; frames that do not are
// answered here and skipped.
func (s *Stream) ReadFrame(ctx context.Context) ([]byte, int64, error) {
	for {
		if err := s.waitRoom(ctx); err != nil {
			return nil, 0, err
		}
		frame, n, err := s.reader.next()
		var rej *rejectedFrame
		if errors.As(err, &rej) {
			s.reject(ctx, rej, frame)
			continue
		}
		if err != nil {
			s.logReadError(ctx, err)
			// Let the calls already read write their answers before the
			// connection learns that its input ended.
			s.WaitDrained()
			return nil, 0, err
		}
		if rej := checkMessage(frame, s.reader.offset-n); rej != nil {
			s.reject(ctx, rej, frame)
			continue
		}
		forEachMessage(frame, func(m []byte, kind jsonrpc2.MessageViewKind) {
			if kind == jsonrpc2.MessageViewCall {
				s.pendingMu.Lock()
				s.pending++
				s.pendingMu.Unlock()
			}
			s.trace.record(directionReceive, m, kind == jsonrpc2.MessageViewCall, kind == jsonrpc2.MessageViewNotification)
		})
		return frame, n, nil
	}
}

// InputIdle reports whether no input is waiting to be read after the
// frame just read. Only the read loop may call it (a handler before it
// releases itself with jsonrpc2.Async).
func (s *Stream) InputIdle() bool { return s.reader.in.Buffered() == 0 }

// waitRoom blocks while maxPendingCalls calls are unanswered: reading more
// would only queue more answers for a client that is not taking them.
func (s *Stream) waitRoom(ctx context.Context) error {
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		s.pendingMu.Lock()
		n, room := s.pending, s.room
		s.pendingMu.Unlock()
		if n < maxPendingCalls {
			return nil
		}
		select {
		case <-room:
		case <-ctx.Done():
		case <-s.aborted:
			return net.ErrClosed
		}
	}
}

// logReadError logs why reading ended, unless the input simply ended or
// the server closed it on its way out.
func (s *Stream) logReadError(ctx context.Context, err error) {
	select {
	case <-s.aborted:
		return
	default:
	}
	switch {
	case errors.Is(err, io.EOF), errors.Is(err, os.ErrClosed), errors.Is(err, io.ErrClosedPipe),
		errors.Is(err, net.ErrClosed), errors.Is(err, context.Canceled):
	case errors.Is(err, io.ErrUnexpectedEOF):
		protocol.LoggerFromContext(ctx).Warn("input ended inside a frame; closing the connection", "error", err)
	default:
		protocol.LoggerFromContext(ctx).Error("input is not LSP framing; closing the connection", "error", err)
	}
}

// reject logs a skipped frame and, when it can be answered, answers it.
func (s *Stream) reject(ctx context.Context, rej *rejectedFrame, frame []byte) {
	if frame != nil {
		s.trace.record(directionReceive, frame, false, false)
	}
	id := rej.id
	if len(id) == 0 && rej.silent {
		protocol.LoggerFromContext(ctx).Warn("notification skipped", "reason", rej.msg)
		return
	}
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	protocol.LoggerFromContext(ctx).Warn("frame rejected", "reason", rej.msg, "id", string(id))
	body, err := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   jsonrpc2.Error  `json:"error"`
	}{"2.0", id, jsonrpc2.Error{Code: rej.code, Message: rej.msg}})
	if err != nil {
		protocol.LoggerFromContext(ctx).Error("encoding an error response", "error", err)
		return
	}
	if _, err := s.inner.WriteFrame(ctx, body); err != nil {
		protocol.LoggerFromContext(ctx).Warn("error response not written", "error", err)
		return
	}
	s.trace.record(directionSend, body, false, false)
}

// WaitDrained blocks until every pending call has been answered, or the
// drain timeout passes.
func (s *Stream) WaitDrained() {
	deadline := time.NewTimer(drainTimeout)
	defer deadline.Stop()
	for {
		s.pendingMu.Lock()
		n, drained := s.pending, s.drained
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
func (s *Stream) Read(ctx context.Context) (jsonrpc2.Message, int64, error) {
	frame, n, err := s.ReadFrame(ctx)
	if err != nil {
		return nil, n, err
	}
	msg, err := jsonrpc2.DecodeMessage(bytes.Clone(frame))
	return msg, n, err
}

// WriteFrame implements the connection's frame writing.
func (s *Stream) WriteFrame(ctx context.Context, data []byte) (int64, error) {
	var answers []Answer
	if bytes.Contains(data, []byte(heldPrefix)) {
		data, answers = s.inner.held.resolve(data)
		defer func() {
			for _, a := range answers {
				s.inner.resultDone(a)
			}
		}()
	}
	n, err := s.inner.WriteFrame(ctx, data)
	if err != nil && ctx.Err() == nil && s.writeFailed != nil {
		s.writeFailed()
	}
	forEachMessage(data, func(m []byte, kind jsonrpc2.MessageViewKind) {
		s.trace.record(directionSend, m, kind == jsonrpc2.MessageViewCall, kind == jsonrpc2.MessageViewNotification)
		if isResponse(kind) {
			s.answered()
		}
	})
	return n, err
}

// answered records the answer to one call. An answer to a call that was
// never counted (jsonrpc2 answering a malformed batch member) does not
// drive the count below zero.
func (s *Stream) answered() {
	s.pendingMu.Lock()
	defer s.pendingMu.Unlock()
	if s.pending == 0 {
		return
	}
	s.pending--
	if s.pending == maxPendingCalls-1 {
		close(s.room)
		s.room = make(chan struct{})
	}
	if s.pending == 0 {
		close(s.drained)
		s.drained = make(chan struct{})
	}
}

// Write implements jsonrpc2.Stream: every single message jsonrpc2 sends
// (answers, notifications, the server's own calls) comes here; batch
// answers come to WriteFrame. The message is encoded into the frame
// writer's buffer, and an answer is told by its envelope, without scanning
// the message again (answers are most of what is written, some of them
// megabytes): jsonrpc2 writes a response as {"jsonrpc":"2.0","id":…, and
// a call or notification as {"jsonrpc":"2.0","method":… (the envelope
// tests pin that).
func (s *Stream) Write(ctx context.Context, msg jsonrpc2.Message) (int64, error) {
	n, err := s.inner.WriteMessage(ctx, msg, func(body []byte) {
		if s.trace != nil {
			forEachMessage(body, func(m []byte, kind jsonrpc2.MessageViewKind) {
				s.trace.record(directionSend, m, kind == jsonrpc2.MessageViewCall, kind == jsonrpc2.MessageViewNotification)
			})
		}
		if isEncodedResponse(body) {
			s.answered()
		}
	})
	if errors.Is(err, errStreamedSize) {
		// The frame was written whole, and the connection goes on.
		protocol.LoggerFromContext(ctx).Error("answer written with the wrong size", "error", err)
		err = nil
	}
	if err != nil && ctx.Err() == nil && s.writeFailed != nil {
		s.writeFailed()
	}
	return n, err
}

// responseEnvelope is how jsonrpc2 begins every response it encodes.
const responseEnvelope = `{"jsonrpc":"2.0","id":`

// isEncodedResponse reports whether body, a message jsonrpc2 encoded, is a
// response.
func isEncodedResponse(body []byte) bool {
	return bytes.HasPrefix(body, []byte(responseEnvelope))
}

// Close implements jsonrpc2.Stream.
// The answers still held are dropped: no write can take them now.
func (s *Stream) Close() error {
	for _, a := range s.inner.held.dropAll() {
		s.inner.resultDone(a)
	}
	return s.inner.Close()
}
