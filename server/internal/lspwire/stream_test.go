package lspwire

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"

	"github.com/dsh-refls/dsh-refls/internal/lsptest"
)

// streamWaitTimeout bounds every wait of these tests for the stream.
const streamWaitTimeout = 5 * time.Second

// streamStillWaiting is how long a test watches a stream it expects to keep
// waiting: a stream that does not wait returns at once, so the window only
// has to outlast a goroutine switch.
const streamStillWaiting = 100 * time.Millisecond

// syncBuffer is a bytes.Buffer that the stream and a test may share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// callFrame is the frame of a call with a number id.
func callFrame(id int) []byte {
	return lsptest.Frame(fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"x"}`, id))
}

// answerFrame is the body of the answer to the call with a number id.
func answerFrame(id int) []byte {
	return fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"result":null}`, id)
}

// readResult is what one ReadFrame returned.
type readResult struct {
	frame []byte
	err   error
}

// readAsync runs ReadFrame in a goroutine and hands back its result.
func readAsync(s *Stream) <-chan readResult {
	done := make(chan readResult, 1)
	go func() {
		frame, _, err := s.ReadFrame(context.Background())
		done <- readResult{bytes.Clone(frame), err}
	}()
	return done
}

// awaitRead waits for the result of readAsync.
func awaitRead(t *testing.T, done <-chan readResult, what string) readResult {
	t.Helper()
	select {
	case r := <-done:
		return r
	case <-time.After(streamWaitTimeout):
		t.Fatalf("%s: ReadFrame did not return within %s", what, streamWaitTimeout)
		return readResult{}
	}
}

// fullStream is a stream holding maxPendingCalls unanswered calls, with
// one more call waiting in its input.
func fullStream(t *testing.T) (*Stream, *memRWC) {
	t.Helper()
	var in bytes.Buffer
	for i := range maxPendingCalls + 1 {
		in.Write(callFrame(i))
	}
	rwc := &memRWC{r: &in}
	s := New(rwc, Hooks{})
	for i := range maxPendingCalls {
		if _, _, err := s.ReadFrame(context.Background()); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	return s, rwc
}

// TestStreamStopsReadingAtThePendingBound: with maxPendingCalls calls
// unanswered the stream reads no further until one is answered, and the
// wait ends with the reader's context.
func TestStreamStopsReadingAtThePendingBound(t *testing.T) {
	s, _ := fullStream(t)
	ctx, cancel := context.WithTimeout(context.Background(), streamStillWaiting)
	defer cancel()
	if frame, _, err := s.ReadFrame(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("with %d calls unanswered ReadFrame returned %q, %v; want the context's end", maxPendingCalls, frame, err)
	}
	done := readAsync(s)
	if _, err := s.WriteFrame(context.Background(), answerFrame(0)); err != nil {
		t.Fatal(err)
	}
	r := awaitRead(t, done, "after one answer")
	if r.err != nil || !bytes.Equal(lsptest.Frame(r.frame), callFrame(maxPendingCalls)) {
		t.Fatalf("after one answer ReadFrame returned %q, %v; want call %d", r.frame, r.err, maxPendingCalls)
	}
}

// TestStreamAbortEndsTheWaitForRoom: a reader waiting for room returns
// net.ErrClosed once the server stops waiting for answers.
func TestStreamAbortEndsTheWaitForRoom(t *testing.T) {
	s, _ := fullStream(t)
	done := readAsync(s)
	s.Abort()
	s.Abort() // a second abort changes nothing
	if r := awaitRead(t, done, "after abort"); !errors.Is(r.err, net.ErrClosed) {
		t.Fatalf("after abort ReadFrame returned %q, %v; want net.ErrClosed", r.frame, r.err)
	}
}

// TestStreamReportsTheEndAfterTheAnswers: at the end of input the stream
// reports the end only once every call read has been answered (jsonrpc2
// writes nothing after its reader failed), or once the server stops
// waiting.
func TestStreamReportsTheEndAfterTheAnswers(t *testing.T) {
	for _, end := range []string{"answer", "abort"} {
		t.Run(end, func(t *testing.T) {
			rwc := &memRWC{r: bytes.NewReader(callFrame(1))}
			s := New(rwc, Hooks{})
			if _, _, err := s.ReadFrame(context.Background()); err != nil {
				t.Fatal(err)
			}
			done := readAsync(s)
			select {
			case r := <-done:
				t.Fatalf("with a call unanswered ReadFrame returned %q, %v; want it to wait", r.frame, r.err)
			case <-time.After(streamStillWaiting):
			}
			if end == "answer" {
				if _, err := s.Write(context.Background(), jsonrpc2.NewResponse(jsonrpc2.NewNumberID(1), nil, nil)); err != nil {
					t.Fatal(err)
				}
			} else {
				s.Abort()
			}
			if r := awaitRead(t, done, "after the "+end); !errors.Is(r.err, io.EOF) {
				t.Fatalf("after the %s ReadFrame returned %q, %v; want io.EOF", end, r.frame, r.err)
			}
		})
	}
}

// TestStreamAnswerCountStaysAtZero: an answer to no counted call (jsonrpc2
// answering a malformed batch member) does not let a later call go
// uncounted.
func TestStreamAnswerCountStaysAtZero(t *testing.T) {
	rwc := &memRWC{r: bytes.NewReader(callFrame(1))}
	s := New(rwc, Hooks{})
	if _, err := s.WriteFrame(context.Background(), answerFrame(9)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.ReadFrame(context.Background()); err != nil {
		t.Fatal(err)
	}
	s.pendingMu.Lock()
	n := s.pending
	s.pendingMu.Unlock()
	if n != 1 {
		t.Fatalf("%d calls pending after a stray answer and one call, want 1", n)
	}
}

// TestStreamLogsWhyReadingEnded: an end inside a frame is a warning, input
// that is not LSP framing an error, and a clean end or an end after abort
// is not logged.
func TestStreamLogsWhyReadingEnded(t *testing.T) {
	for _, tt := range []struct {
		name, input string
		abort       bool
		want        string // "" for no log
	}{
		{"clean end", "", false, ""},
		{"end inside a frame", "Content-Length: 10\r\n\r\n{}", false, `level=WARN msg="input ended inside a frame`},
		{"not framing", "hello\r\n\r\n", false, `level=ERROR msg="input is not LSP framing`},
		{"not framing after abort", "hello\r\n\r\n", true, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var log syncBuffer
			ctx := protocol.WithLogger(context.Background(), slog.New(slog.NewTextHandler(&log, nil)))
			s := New(&memRWC{r: strings.NewReader(tt.input)}, Hooks{})
			if tt.abort {
				s.Abort()
			}
			if _, _, err := s.ReadFrame(ctx); err == nil {
				t.Fatal("ReadFrame succeeded")
			}
			got := log.String()
			if tt.want == "" && got != "" || !strings.Contains(got, tt.want) {
				t.Fatalf("logged %q, want %q", got, tt.want)
			}
		})
	}
}

// TestFrameReaderEndsOnLostFraming: input whose framing is lost ends the
// reading with the reason; an end of input inside a frame is
// io.ErrUnexpectedEOF.
func TestFrameReaderEndsOnLostFraming(t *testing.T) {
	for _, tt := range []struct {
		name, input, want string
		unexpectedEOF     bool
	}{
		{"long header line", strings.Repeat("x", maxHeaderLineBytes+1), `a line longer than 4096 bytes ("` + strings.Repeat("x", maxQuotedBytes) + `"…`, false},
		{"too many header lines", strings.Repeat("X-Pad: 1\r\n", MaxHeaderLines+1) + "\r\n", "more than 32 header lines", false},
		{"not a field", "hello\r\n\r\n", `"hello" is not a header field`, false},
		{"no length", "Content-Type: x\r\n\r\n", "no Content-Length field", false},
		{"negative length", "Content-Length: -1\r\n\r\n", `invalid Content-Length "-1"`, false},
		{"empty length", "Content-Length:\r\n\r\n", `invalid Content-Length ""`, false},
		{"length past int64", "Content-Length: 1234567890123456789\r\n\r\n", "invalid Content-Length", false},
		{"lengths disagree", "Content-Length: 2\r\nContent-Length: 3\r\n\r\n", "two Content-Length fields disagree (2 and 3)", false},
		{"end inside the header", "Content-Length: 2\r\n", "input ends inside the header", true},
		{"end inside the body", "Content-Length: 5\r\n\r\n{}", "body ends after 2 of 5 bytes", true},
		{"end inside an oversized body", fmt.Sprintf("Content-Length: %d\r\n\r\n{}", MaxMessageBytes+1), "oversized body ends after 2 of 67108865 bytes", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := newFrameReader(strings.NewReader(tt.input))
			_, _, err := r.next()
			var rej *rejectedFrame
			if err == nil || errors.As(err, &rej) || errors.Is(err, io.EOF) {
				t.Fatalf("next() = %v, want lost framing", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("next() = %q, want it to say %q", err, tt.want)
			}
			if got := errors.Is(err, io.ErrUnexpectedEOF); got != tt.unexpectedEOF {
				t.Errorf("next() = %v: io.ErrUnexpectedEOF %v, want %v", err, got, tt.unexpectedEOF)
			}
		})
	}
}

// TestCheckMessageAnswersUnderTheID: a frame that is JSON but not a
// message is answered under its id when it is a request with a valid id,
// with -32700 when it is not JSON and -32600 otherwise.
func TestCheckMessageAnswersUnderTheID(t *testing.T) {
	for _, tt := range []struct {
		body string
		code jsonrpc2.Code
		id   string // "" for none
	}{
		{`{"jsonrpc":"1.0","id":"a","method":"x"}`, jsonrpc2.InvalidRequest, `"a"`},
		{`{"id":7,"method":"x"}`, jsonrpc2.InvalidRequest, `7`},
		{`{"jsonrpc":"2.0","id":-1,"method":7}`, jsonrpc2.InvalidRequest, `-1`},
		{`{"jsonrpc":"2.0","id":{"a":1},"method":"x"}`, jsonrpc2.InvalidRequest, ""},
		{`{"jsonrpc":"2.0","id":true,"method":"x","result":1}`, jsonrpc2.InvalidRequest, ""},
		{`{"jsonrpc":"1.0","id":1,"method":null}`, jsonrpc2.InvalidRequest, ""},
		{`{"jsonrpc":"1.0","id":1,"result":1}`, jsonrpc2.InvalidRequest, ""},
		{`42`, jsonrpc2.InvalidRequest, ""},
		{`{"jsonrpc":"2.0","id":1,`, jsonrpc2.ParseError, ""},
		{`[{"jsonrpc":"2.0",`, jsonrpc2.ParseError, ""},
	} {
		rej := checkMessage([]byte(tt.body), 0)
		if rej == nil {
			t.Errorf("%s: taken as a message", tt.body)
			continue
		}
		if rej.code != tt.code || string(rej.id) != tt.id {
			t.Errorf("%s: answered %d under id %q, want %d under %q", tt.body, rej.code, rej.id, tt.code, tt.id)
		}
	}
	// jsonrpc2 answers an empty batch itself.
	for _, body := range []string{`{"jsonrpc":"2.0","id":1,"method":"x"}`, `[{"jsonrpc":"2.0","method":"x"}]`, `[]`} {
		if rej := checkMessage([]byte(body), 0); rej != nil {
			t.Errorf("%s: rejected (%s)", body, rej.msg)
		}
	}
}

// TestIDScannerFindsTheTopLevelID writes objects to the scanner a few
// bytes at a time: it keeps the top-level "id" only, whatever the nesting
// and strings before it hold, and tells requests from other objects.
func TestIDScannerFindsTheTopLevelID(t *testing.T) {
	long := strings.Repeat("9", maxScannedIDBytes+1)
	for _, tt := range []struct {
		body, id string // id "" for none
		request  bool
	}{
		{`{"jsonrpc":"2.0","method":"x","params":{"id":5,"s":"\"id\":9 \\"},"id":"abc"}`, `"abc"`, true},
		{`{"id" : 12 ,"method":"x"}`, `12`, true},
		{`{"params":["id",{"id":3}],"method":"x","id":-4}`, `-4`, true},
		{`{"methodical":"x","id":1}`, `1`, false},
		{`{"jsonrpc":"2.0","method":"x"}`, "", true},
		{`{"method":"x","id":null}`, "", true},
		{`{"method":"x","id":{"a":1}}`, "", true},
		{`{"method":"x","id":` + long + `}`, "", true},
		{`{"result":1,"id":"r"}`, `"r"`, false},
		{`["id",1]`, "", false},
	} {
		var sc idScanner
		for b := []byte(tt.body); len(b) > 0; {
			n := min(3, len(b))
			if _, err := sc.Write(b[:n]); err != nil {
				t.Fatal(err)
			}
			b = b[n:]
		}
		id, request := sc.result()
		if string(id) != tt.id || request != tt.request {
			t.Errorf("%s: id %q request %v, want %q %v", tt.body, id, request, tt.id, tt.request)
		}
	}
}

// TestStreamInputIdle: inputIdle tells whether more input is buffered
// after the frame just read.
func TestStreamInputIdle(t *testing.T) {
	s := New(&memRWC{r: bytes.NewReader(append(callFrame(1), callFrame(2)...))}, Hooks{})
	for i, want := range []bool{false, true} {
		if _, _, err := s.ReadFrame(context.Background()); err != nil {
			t.Fatal(err)
		}
		if got := s.InputIdle(); got != want {
			t.Errorf("after frame %d inputIdle() = %v, want %v", i+1, got, want)
		}
	}
}

// failingRWC is a connection whose writes fail.
type failingRWC struct{ closed bool }

func (*failingRWC) Read([]byte) (int, error)  { return 0, io.EOF }
func (*failingRWC) Write([]byte) (int, error) { return 0, io.ErrClosedPipe }
func (f *failingRWC) Close() error            { f.closed = true; return nil }

// TestStreamReportsBrokenOutput: a frame that cannot be written calls
// Hooks.WriteFailed; one not written because its context ended does not.
func TestStreamReportsBrokenOutput(t *testing.T) {
	rwc := &failingRWC{}
	failed := 0
	s := New(rwc, Hooks{WriteFailed: func() { failed++ }})
	msg := jsonrpc2.NewNotification("x", nil)
	if _, err := s.Write(context.Background(), msg); err == nil {
		t.Fatal("Write to a broken output succeeded")
	}
	if _, err := s.WriteFrame(context.Background(), answerFrame(1)); err == nil {
		t.Fatal("WriteFrame to a broken output succeeded")
	}
	if failed != 2 {
		t.Fatalf("writeFailed called %d times for 2 failed writes", failed)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err1 := s.Write(ctx, msg)
	_, err2 := s.WriteFrame(ctx, answerFrame(1))
	if !errors.Is(err1, context.Canceled) || !errors.Is(err2, context.Canceled) || failed != 2 {
		t.Fatalf("writes with an ended context: %v, %v, writeFailed %d times; want context.Canceled twice and no call", err1, err2, failed)
	}
	if err := s.Close(); err != nil || !rwc.closed {
		t.Fatalf("Close() = %v, connection closed %v", err, rwc.closed)
	}
}

// TestFrameWriterCallsWrittenAfterEachFrame: the frame writer's written
// hook runs once for every frame, whichever way it was written.
func TestFrameWriterCallsWrittenAfterEachFrame(t *testing.T) {
	var out nopCloser
	f := newFrameWriter(&out)
	calls := 0
	f.written = func() { calls++ }
	if _, err := f.WriteFrame(context.Background(), answerFrame(1)); err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteFrame(context.Background(), bytes.Repeat([]byte(" "), keepWriteBuffer)); err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteMessage(context.Background(), jsonrpc2.NewNotification("x", nil), func([]byte) {}); err != nil {
		t.Fatal(err)
	}
	if calls != 3 {
		t.Fatalf("written called %d times for 3 frames", calls)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestStreamTrace checks the JSON-lines trace (§4.3): every message read
// and written, batch members one by one, rejected frames and their
// answers, each with its direction and kind, and input that is not JSON
// as a JSON string.
func TestStreamTrace(t *testing.T) {
	var in bytes.Buffer
	in.Write(callFrame(1))
	in.Write(lsptest.Frame([]byte(`{"jsonrpc":"2.0","method":"n"}`)))
	in.Write(lsptest.Frame([]byte(`[{"jsonrpc":"2.0","id":2,"method":"x"},{"jsonrpc":"2.0","method":"n"}]`)))
	in.Write(lsptest.Frame([]byte(`{"jsonrpc":"2.0","id":3,`)))
	var trace syncBuffer
	s := New(&memRWC{r: &in}, Hooks{Trace: &trace})
	for range 3 {
		if _, _, err := s.ReadFrame(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Write(context.Background(), jsonrpc2.NewResponse(jsonrpc2.NewNumberID(1), jsonrpc2.RawMessage(`1`), nil)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Write(context.Background(), jsonrpc2.NewCall(jsonrpc2.NewNumberID(4), "c", nil)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.WriteFrame(context.Background(), []byte(`[{"jsonrpc":"2.0","id":2,"result":2}]`)); err != nil {
		t.Fatal(err)
	}
	s.Abort() // the input's end is then not waited for
	if _, _, err := s.ReadFrame(context.Background()); !errors.Is(err, io.EOF) {
		t.Fatalf("ReadFrame after the bad frame = %v, want io.EOF", err)
	}
	want := []string{
		"receive-request", "receive-notification", "receive-request", "receive-notification",
		"send-response", "send-request", "send-response",
		"receive-response", "send-response", // the frame that is not JSON, and its error answer
	}
	lines := strings.Split(strings.TrimSuffix(trace.String(), "\n"), "\n")
	if len(lines) != len(want) {
		t.Fatalf("%d trace lines, want %d:\n%s", len(lines), len(want), trace.String())
	}
	for i, line := range lines {
		var l traceLine
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			t.Fatalf("line %d %q: %v", i, line, err)
		}
		if !l.IsLSPMessage || l.Type != want[i] || l.Timestamp <= 0 {
			t.Errorf("line %d %s: want type %s", i, line, want[i])
		}
		if i == 7 {
			var s string
			if json.Unmarshal(l.Message, &s) != nil || s != `{"jsonrpc":"2.0","id":3,` {
				t.Errorf("line %d: the bad frame is traced as %s, want it as a JSON string", i, l.Message)
			}
		}
	}
	if s := New(&memRWC{r: &in}, Hooks{}); s.trace != nil {
		t.Error("a stream without Hooks.Trace traces")
	}
}
