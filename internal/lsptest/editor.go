package lsptest

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"time"
)

// DefaultTimeout bounds a call or a wait whose context has no deadline, so
// a test that forgot one still ends.
const DefaultTimeout = 10 * time.Second

// callIDBase is where Call's numeric ids start, far above the small ids
// tests choose for the requests they Send themselves, so the two never meet.
const callIDBase = 1 << 40

// Config is what the editor announces and how it answers the server.
type Config struct {
	// Capabilities are the client capabilities sent in initialize, as
	// JSON-encodable data (nil sends {}).
	Capabilities any
	// InitializationOptions are sent in initialize as they are.
	InitializationOptions any
	// RootURI is the workspace root sent in initialize ("" sends none).
	RootURI string
	// Settings answer workspace/configuration: an item with section S gets
	// Settings[S] (or null), an item without a section gets all of them.
	Settings map[string]any
	// Handlers answer server-to-client requests, replacing the defaults
	// (see Editor.handle). A handler returning an error answers with it.
	Handlers map[string]Handler
	// LanguageID of opened documents; "" is "markdown".
	LanguageID string
}

// Handler answers one server-to-client request.
type Handler func(params json.RawMessage) (any, error)

// Editor is a fake LSP client connected to one server. Its methods are safe
// to call from several goroutines.
type Editor struct {
	cfg Config
	w   io.Writer
	c   io.Closer

	// writeMu guards w: one frame is written at a time.
	writeMu sync.Mutex

	// mu guards the fields below it.
	mu       sync.Mutex
	log      []Message               // the frames the server wrote from index base on, in order
	base     int                     // index of log[0]: frames before it were forgotten
	changed  chan struct{}           // closed and replaced when log grows or reading ends
	pending  map[string]chan Message // response waiters by compacted id
	nextID   int64                   // last id used by Call, from callIDBase
	docs     map[string]*document    // open documents by URI
	encoding Encoding                // negotiated in Initialize
	served   map[string]int          // server-to-client requests answered, by method
	handlers map[string]Handler      // from Config.Handlers and SetHandler
	settings map[string]any          // from Config.Settings and SetSettings

	// paused, when not nil, holds the reader before its next frame until
	// it is closed (PauseReading, ResumeReading).
	paused chan struct{}

	readDone chan struct{} // closed when the reader stops
	readErr  error         // why it stopped; set before readDone is closed
}

// New starts an editor on the server's output r and input w. closer, which
// may be nil, ends the connection on Close (for a process, its stdin).
func New(r io.Reader, w io.Writer, closer io.Closer, cfg Config) *Editor {
	e := &Editor{
		cfg:      cfg,
		w:        w,
		c:        closer,
		changed:  make(chan struct{}),
		pending:  map[string]chan Message{},
		docs:     map[string]*document{},
		encoding: UTF16,
		served:   map[string]int{},
		nextID:   callIDBase,
		handlers: map[string]Handler{},
		settings: cfg.Settings,
		readDone: make(chan struct{}),
	}
	for m, h := range cfg.Handlers {
		e.handlers[m] = h
	}
	go e.read(r)
	return e
}

// Connect starts an editor on one bidirectional stream, such as a net.Pipe
// end.
func Connect(rwc io.ReadWriteCloser, cfg Config) *Editor { return New(rwc, rwc, rwc, cfg) }

// read parses the server's output until its end or the first framing
// violation, then drains the rest so the server never blocks writing.
func (e *Editor) read(r io.Reader) {
	br := bufio.NewReader(r)
	var err error
	for {
		e.mu.Lock()
		gate := e.paused
		e.mu.Unlock()
		if gate != nil {
			<-gate
		}
		var body json.RawMessage
		body, err = readFrameBody(br)
		if err != nil {
			break
		}
		m, ok := parseMessage(body)
		if !ok {
			err = notJSON(body)
			break
		}
		e.received(m)
	}
	if errors.Is(err, ErrNoFrame) {
		err = nil
	}
	e.mu.Lock()
	e.readErr = err
	e.wakeLocked()
	e.mu.Unlock()
	close(e.readDone)
	if err != nil {
		_, _ = io.Copy(io.Discard, r)
	}
}

// received logs m, hands responses to their callers and answers requests.
func (e *Editor) received(m Message) {
	m.Received = time.Now()
	e.mu.Lock()
	m.Index = e.base + len(e.log)
	e.log = append(e.log, m)
	responses := []Message{m}
	if m.Batch {
		responses = m.Members
	}
	for _, r := range responses {
		if !r.IsResponse() || len(r.ID) == 0 {
			continue
		}
		if ch, ok := e.pending[compact(r.ID)]; ok {
			delete(e.pending, compact(r.ID))
			ch <- r
		}
	}
	if m.IsCall() {
		e.served[m.Method]++
	}
	e.wakeLocked()
	e.mu.Unlock()
	if m.IsCall() {
		// Answer off the reader, so a handler can itself wait on messages.
		go e.answer(m)
	}
}

func (e *Editor) wakeLocked() {
	close(e.changed)
	e.changed = make(chan struct{})
}

// Call sends a request and decodes its result into result (nil discards
// it; *json.RawMessage keeps it as written). A server error is returned as
// *Error. When ctx ends first, the editor sends $/cancelRequest and returns
// ctx's error.
func (e *Editor) Call(ctx context.Context, method string, params, result any) error {
	ctx, cancel := withDefaultTimeout(ctx)
	defer cancel()
	e.mu.Lock()
	e.nextID++
	id := strconv.FormatInt(e.nextID, 10)
	ch := make(chan Message, 1)
	e.pending[id] = ch
	e.mu.Unlock()
	msg := map[string]any{"id": json.Number(id), "method": method}
	if params != nil {
		msg["params"] = params
	}
	if err := e.Send(msg); err != nil {
		e.forget(id)
		return fmt.Errorf("%s: %w", method, err)
	}
	select {
	case m := <-ch:
		return m.DecodeResult(result)
	case <-e.readDone:
		e.forget(id)
		select {
		case m := <-ch:
			return m.DecodeResult(result)
		default:
		}
		return fmt.Errorf("%s: the server's output ended before the answer (%v)", method, e.ReadErr())
	case <-ctx.Done():
		e.forget(id)
		_ = e.Notify(context.Background(), "$/cancelRequest", map[string]any{"id": json.Number(id)})
		return fmt.Errorf("%s: %w", method, ctx.Err())
	}
}

func (e *Editor) forget(id string) {
	e.mu.Lock()
	delete(e.pending, id)
	e.mu.Unlock()
}

// Notify sends a notification.
func (e *Editor) Notify(_ context.Context, method string, params any) error {
	msg := map[string]any{"method": method}
	if params != nil {
		msg["params"] = params
	}
	if err := e.Send(msg); err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	return nil
}

// Send frames and writes one message as it is given (setting "jsonrpc"),
// for requests whose id the test chooses; their answers are in Messages
// (see Await with Response).
func (e *Editor) Send(msg map[string]any) error {
	b, err := FrameMessage(msg)
	if err != nil {
		return err
	}
	return e.WriteRaw(b)
}

// WriteRaw writes b to the server as it is: the escape hatch for hostile
// frames, cut headers and other bytes no well-behaved client sends.
func (e *Editor) WriteRaw(b []byte) error {
	e.writeMu.Lock()
	defer e.writeMu.Unlock()
	if _, err := e.w.Write(b); err != nil {
		return fmt.Errorf("writing to the server: %w", err)
	}
	return nil
}

// PauseReading stops reading the server's output before the next frame
// (a frame already being read is finished), as a client that stops reading
// stdout does: the server's writes then block once the pipe is full.
// ResumeReading reads on. cmd/dsh-refls's backpressure test relies on it.
func (e *Editor) PauseReading() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.paused == nil {
		e.paused = make(chan struct{})
	}
}

// ResumeReading undoes PauseReading.
func (e *Editor) ResumeReading() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.paused != nil {
		close(e.paused)
		e.paused = nil
	}
}

// Close closes the editor's end of the connection (the server's input);
// the reader keeps reading the server's output to its end.
func (e *Editor) Close() error {
	if e.c == nil {
		return nil
	}
	return e.c.Close()
}

// Done is closed when the server's output ended or broke the framing.
func (e *Editor) Done() <-chan struct{} { return e.readDone }

// ReadErr is why the reader stopped: nil at a clean end of the server's
// output (or while it still reads), else the framing violation.
func (e *Editor) ReadErr() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.readErr
}

// Messages returns every frame the server wrote so far, in order.
func (e *Editor) Messages() []Message {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]Message(nil), e.log...)
}

// Served counts the server-to-client requests of method the editor
// answered (or is answering).
func (e *Editor) Served(method string) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.served[method]
}

func withDefaultTimeout(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, DefaultTimeout)
}
