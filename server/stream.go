package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
)

// drainTimeout bounds how long the server waits, after the client closed
// its end, for in-flight requests to answer: long enough for any prepare,
// short enough that a stuck handler cannot keep the process alive.
const drainTimeout = 30 * time.Second

// Limits of the frame reader.
const (
	// maxMessageBytes is the largest frame body the server reads. A body
	// above it is skipped without being held in memory: the request is
	// answered with InvalidRequest and the connection continues. 64 MiB is
	// far above any document an editor opens for @-mentions and keeps one
	// hostile frame from costing more than that in memory.
	maxMessageBytes = 64 << 20
	// maxHeaderLineBytes bounds one header line. LSP sends two short
	// fields; a longer line means the input is not LSP framing, and
	// reading on would buffer it whole.
	maxHeaderLineBytes = 4096
	// maxHeaderLines bounds the fields of one header block, for the same
	// reason.
	maxHeaderLines = 32
	// reuseBufferBytes is the largest body buffer kept between frames;
	// larger bodies get their own buffer, which the collector reclaims, so
	// one big didOpen does not pin its size for the rest of the session.
	reuseBufferBytes = 1 << 20
	// maxScannedIDBytes bounds the id recovered from a skipped frame; a
	// longer one is not an id a client would send.
	maxScannedIDBytes = 256
	// maxQuotedBytes bounds the bytes of bad input quoted in an error.
	maxQuotedBytes = 64
	// maxPendingCalls bounds the calls read and not yet answered. At the
	// bound the server stops reading until one is answered, so a client
	// that stops reading stdout blocks on its own writes instead of making
	// the server hold a goroutine and an answer for every request it keeps
	// sending. Requests run at most NumCPU at a time; 256 waiting is far
	// more than an editor has in flight.
	maxPendingCalls = 256
)

// serverStream wraps the header-framed stream of the connection.
//
// It reads frames itself, with bounded headers and bodies: a frame that is
// well framed but not a JSON-RPC message (invalid JSON, not a request
// object, a body over maxMessageBytes) is answered with the matching
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
type serverStream struct {
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

	// writeFailed, when set, is called when a frame could not be written
	// for a reason other than its context: the output is broken, and no
	// call being handled can deliver its answer.
	writeFailed func()
	// written, when set, is given the result of every answer once Write
	// is done with it, written or not (Server.answers takes its array
	// back).
	written func(result []byte)
}

func newServerStream(rwc io.ReadWriteCloser, trace *tracer) *serverStream {
	return &serverStream{
		inner:   newFrameWriter(rwc),
		reader:  newFrameReader(rwc),
		trace:   trace,
		drained: make(chan struct{}),
		room:    make(chan struct{}),
		aborted: make(chan struct{}),
	}
}

// abort stops waiting for unanswered calls: the server is going away.
func (s *serverStream) abort() {
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
func (s *serverStream) ReadFrame(ctx context.Context) ([]byte, int64, error) {
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
			s.waitDrained()
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

// inputIdle reports whether no input is waiting to be read after the
// frame just read. Only the read loop may call it (a handler before it
// releases itself with jsonrpc2.Async).
func (s *serverStream) inputIdle() bool { return s.reader.in.Buffered() == 0 }

// waitRoom blocks while maxPendingCalls calls are unanswered: reading more
// would only queue more answers for a client that is not taking them.
func (s *serverStream) waitRoom(ctx context.Context) error {
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
func (s *serverStream) logReadError(ctx context.Context, err error) {
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
func (s *serverStream) reject(ctx context.Context, rej *rejectedFrame, frame []byte) {
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

// checkMessage returns why a complete frame is not a JSON-RPC message or
// batch the connection can take, or nil when it is one. jsonrpc2 ends the
// connection on such a frame; the framing is intact, so the server answers
// it instead (JSON-RPC 2.0 §5.1: -32700 for invalid JSON, -32600 for
// valid JSON that is not a request).
func checkMessage(frame []byte, offset int64) *rejectedFrame {
	trimmed := bytes.TrimLeft(frame, " \t\r\n")
	if len(trimmed) > 0 && trimmed[0] == '[' {
		if _, err := jsonrpc2.ParseRequests(frame); err != nil {
			return rejectionOf(frame, err, nil, fmt.Sprintf("frame at offset %d is not a JSON-RPC batch", offset))
		}
		return nil
	}
	if _, err := jsonrpc2.DecodeMessage(frame); err != nil {
		// Answer under the request's id when it has one: any "method"
		// member marks a request, even one whose method is not a string.
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method json.RawMessage `json:"method"`
		}
		var id json.RawMessage
		if json.Unmarshal(frame, &req) == nil && len(req.Method) > 0 && string(req.Method) != "null" && validID(req.ID) {
			id = bytes.Clone(req.ID)
		}
		return rejectionOf(frame, err, id, fmt.Sprintf("frame at offset %d is not a JSON-RPC message", offset))
	}
	return nil
}

// rejectionOf turns the decoding error of frame into its answer: -32700
// when the frame is not JSON, -32600 when it is JSON but not a request
// (jsonrpc2 reports a JSON value that is not an object as a parse error).
func rejectionOf(frame []byte, err error, id json.RawMessage, what string) *rejectedFrame {
	if !json.Valid(frame) {
		return &rejectedFrame{code: jsonrpc2.ParseError, msg: what + ": invalid JSON"}
	}
	reason := "not a valid request object"
	var rpcErr *jsonrpc2.Error
	if errors.As(err, &rpcErr) && rpcErr.Code != jsonrpc2.ParseError {
		reason = rpcErr.Message
	}
	return &rejectedFrame{code: jsonrpc2.InvalidRequest, id: id, msg: what + ": " + reason}
}

// validID reports whether raw is a JSON-RPC id: a string or a number.
func validID(raw json.RawMessage) bool {
	if len(raw) == 0 || len(raw) > maxScannedIDBytes || !json.Valid(raw) {
		return false
	}
	c := raw[0]
	return c == '"' || c == '-' || (c >= '0' && c <= '9')
}

// waitDrained blocks until every pending call has been answered, or the
// drain timeout passes.
func (s *serverStream) waitDrained() {
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
func (s *serverStream) answered() {
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
func (s *serverStream) Write(ctx context.Context, msg jsonrpc2.Message) (int64, error) {
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
	if err != nil && ctx.Err() == nil && s.writeFailed != nil {
		s.writeFailed()
	}
	if r, ok := msg.(*jsonrpc2.Response); ok && s.written != nil {
		s.written(r.Result())
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
func (s *serverStream) Close() error { return s.inner.Close() }

// rejectedFrame is a frame that was read whole (the framing holds) but is
// not a message the connection can take. It is answered with code and msg
// under id (null when unknown), or only logged when silent (a skipped
// notification has no one to answer).
type rejectedFrame struct {
	code   jsonrpc2.Code
	id     json.RawMessage
	msg    string
	silent bool
}

// Error implements error.
func (r *rejectedFrame) Error() string { return r.msg }

// frameReader reads LSP base-protocol frames (header fields, a blank line,
// Content-Length bytes of body) with every part bounded.
type frameReader struct {
	in     *bufio.Reader
	buf    []byte
	offset int64 // input bytes consumed, for error messages
}

func newFrameReader(r io.Reader) *frameReader {
	return &frameReader{in: bufio.NewReaderSize(r, maxHeaderLineBytes)}
}

// next reads one frame. It returns the body (valid until the next call)
// and the frame's size in bytes; a *rejectedFrame when a frame was read
// whole but its body is too large (the body is then skipped); io.EOF at a
// clean end between frames; and any other error when the framing is lost.
func (r *frameReader) next() ([]byte, int64, error) {
	start := r.offset
	length, err := r.readHeader()
	if err != nil {
		return nil, 0, err
	}
	if length > maxMessageBytes {
		return nil, 0, r.skip(length, start)
	}
	var body []byte
	if length <= reuseBufferBytes {
		if cap(r.buf) < int(length) {
			r.buf = make([]byte, length, min(max(int(length), 2*cap(r.buf)), reuseBufferBytes))
		}
		body = r.buf[:length]
	} else {
		body = make([]byte, length)
	}
	n, err := io.ReadFull(r.in, body)
	r.offset += int64(n)
	if err != nil {
		return nil, 0, fmt.Errorf("frame at offset %d: body ends after %d of %d bytes: %w", start, n, length, unexpectedEOF(err))
	}
	return body, r.offset - start, nil
}

// readHeader reads one header block and returns its Content-Length.
func (r *frameReader) readHeader() (int64, error) {
	start := r.offset
	length := int64(-1)
	for lines := 0; ; lines++ {
		line, err := r.in.ReadSlice('\n')
		r.offset += int64(len(line))
		switch {
		case err == io.EOF && lines == 0 && len(line) == 0:
			return 0, io.EOF
		case errors.Is(err, bufio.ErrBufferFull):
			return 0, fmt.Errorf("header at offset %d: a line longer than %d bytes (%s…) is not an LSP header", start, maxHeaderLineBytes, quote(line))
		case err != nil:
			return 0, fmt.Errorf("header at offset %d: input ends inside the header: %w", start, unexpectedEOF(err))
		}
		if lines >= maxHeaderLines {
			return 0, fmt.Errorf("header at offset %d: more than %d header lines", start, maxHeaderLines)
		}
		field := bytes.TrimRight(line, "\r\n")
		if len(field) == 0 {
			break
		}
		name, value, ok := bytes.Cut(field, []byte(":"))
		if !ok {
			return 0, fmt.Errorf("header at offset %d: %s is not a header field", start, quote(field))
		}
		if !strings.EqualFold(string(bytes.TrimSpace(name)), "Content-Length") {
			continue
		}
		n, err := parseLength(bytes.TrimSpace(value))
		if err != nil {
			return 0, fmt.Errorf("header at offset %d: %w", start, err)
		}
		if length >= 0 && n != length {
			return 0, fmt.Errorf("header at offset %d: two Content-Length fields disagree (%d and %d)", start, length, n)
		}
		length = n
	}
	if length < 0 {
		return 0, fmt.Errorf("header at offset %d: no Content-Length field", start)
	}
	return length, nil
}

// maxLengthDigits bounds a Content-Length so it cannot overflow int64.
const maxLengthDigits = 18

// parseLength parses a Content-Length value: decimal digits only.
func parseLength(v []byte) (int64, error) {
	if len(v) == 0 || len(v) > maxLengthDigits {
		return 0, fmt.Errorf("invalid Content-Length %s", quote(v))
	}
	var n int64
	for _, c := range v {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("invalid Content-Length %s", quote(v))
		}
		n = n*10 + int64(c-'0')
	}
	return n, nil
}

// skip reads past a body over maxMessageBytes without keeping it, and
// returns the answer to it: InvalidRequest under the request's id when the
// body is a request whose id could be found, silence for a notification,
// and a null id otherwise.
func (r *frameReader) skip(length, start int64) error {
	var sc idScanner
	n, err := io.CopyN(&sc, r.in, length)
	r.offset += n
	if err != nil {
		return fmt.Errorf("frame at offset %d: oversized body ends after %d of %d bytes: %w", start, n, length, unexpectedEOF(err))
	}
	id, isRequest := sc.result()
	msg := fmt.Sprintf("frame at offset %d: message of %d bytes exceeds the maximum of %d bytes and was skipped", start, length, maxMessageBytes)
	return &rejectedFrame{code: jsonrpc2.InvalidRequest, id: id, msg: msg, silent: isRequest && id == nil}
}

// unexpectedEOF reports an end of input inside a frame as
// io.ErrUnexpectedEOF.
func unexpectedEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// quote renders bad input for an error message, shortened.
func quote(b []byte) string {
	if len(b) > maxQuotedBytes {
		return strconv.Quote(string(b[:maxQuotedBytes])) + "…"
	}
	return strconv.Quote(string(b))
}

// idScanner follows a JSON object written to it in pieces and keeps the
// raw value of its top-level "id" member and whether it has a "method"
// member, holding no more than a few bytes whatever the object's size.
type idScanner struct {
	depth     int
	inString  bool
	escaped   bool
	expectKey bool // at depth 1, the next string is a member name
	inKey     bool
	key       []byte
	keyLong   bool
	capturing bool // reading the value of "id"
	id        []byte
	idLong    bool
	hasMethod bool
	gotID     bool
}

// Write implements io.Writer.
func (sc *idScanner) Write(p []byte) (int, error) {
	for i := 0; i < len(p); i++ {
		// The bulk of a huge message is string contents that are neither
		// a member name nor the id: jump to the next byte that matters.
		if sc.inString && !sc.escaped && !sc.inKey && !sc.capturing {
			j := bytes.IndexAny(p[i:], `"\`)
			if j < 0 {
				break
			}
			i += j
		}
		sc.step(p[i])
	}
	return len(p), nil
}

func (sc *idScanner) step(c byte) {
	if sc.capturing {
		if len(sc.id) < maxScannedIDBytes {
			sc.id = append(sc.id, c)
		} else {
			sc.idLong = true
		}
	}
	if sc.inString {
		switch {
		case sc.escaped:
			sc.escaped = false
		case c == '\\':
			sc.escaped = true
		case c == '"':
			sc.inString = false
			sc.inKey = false
			return
		}
		if sc.inKey {
			if len(sc.key) < len("method") {
				sc.key = append(sc.key, c)
			} else {
				sc.keyLong = true
			}
		}
		return
	}
	switch c {
	case '"':
		sc.inString = true
		if sc.depth == 1 && sc.expectKey {
			sc.inKey, sc.key, sc.keyLong = true, sc.key[:0], false
		}
	case '{', '[':
		sc.depth++
		if sc.depth == 1 {
			sc.expectKey = c == '{'
		}
	case '}', ']':
		if sc.depth == 1 {
			sc.endValue()
		}
		sc.depth--
	case ':':
		if sc.depth == 1 && sc.expectKey {
			sc.expectKey = false
			key := string(sc.key)
			if !sc.keyLong && key == "method" {
				sc.hasMethod = true
			}
			if !sc.keyLong && key == "id" {
				sc.capturing, sc.id, sc.idLong = true, sc.id[:0], false
			}
		}
	case ',':
		if sc.depth == 1 {
			sc.endValue()
			sc.expectKey = true
		}
	}
}

// endValue ends the value of a top-level member; the byte that ended it
// was captured last and is dropped.
func (sc *idScanner) endValue() {
	if !sc.capturing {
		return
	}
	sc.capturing = false
	sc.gotID = true
	if len(sc.id) > 0 {
		sc.id = sc.id[:len(sc.id)-1]
	}
}

// result returns the id (nil when absent, null or not a valid id) and
// whether the object is a request or notification.
func (sc *idScanner) result() (json.RawMessage, bool) {
	if !sc.gotID || sc.idLong {
		return nil, sc.hasMethod
	}
	id := bytes.TrimSpace(sc.id)
	if !validID(id) {
		return nil, sc.hasMethod
	}
	return json.RawMessage(bytes.Clone(id)), sc.hasMethod
}

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
