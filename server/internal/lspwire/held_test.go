package lspwire

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"runtime"
	"strings"
	"testing"

	"go.lsp.dev/jsonrpc2"

	"github.com/dsh-refls/dsh-refls/internal/lsptest"
)

// bigResult is a JSON string result of n bytes.
func bigResult(n int) []byte {
	return []byte(`"` + strings.Repeat("x", n-2) + `"`)
}

// chunkedWrite writes result to w in pieces of at most n bytes, as an
// encoder streaming its answer does.
func chunkedWrite(result []byte, n int) func(io.Writer) error {
	return func(w io.Writer) error {
		for len(result) > 0 {
			k := min(n, len(result))
			if _, err := w.Write(result[:k]); err != nil {
				return err
			}
			result = result[k:]
		}
		return nil
	}
}

// TestHeldAnswersThroughJSONRPC drives a real jsonrpc2 connection over a
// pipe: whatever type jsonrpc2 hands the Stream an answer as, a held
// answer reaches the client as its result, encoded or streamed, the
// lent array comes back to AnswerBuffers, nothing stays held, and the
// write buffer never grows to the answer.
func TestHeldAnswersThroughJSONRPC(t *testing.T) {
	serverSide, clientSide := net.Pipe()
	var answers AnswerBuffers
	stream := New(serverSide, Hooks{Written: answers.GiveBack})
	encoded := bigResult(4 * keepWriteBuffer)
	streamed := bigResult(3*keepWriteBuffer + 17)
	var smallSlot int
	conn := jsonrpc2.NewConn(stream)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	conn.Go(ctx, func(_ context.Context, req *jsonrpc2.Request) (any, error) {
		switch req.Method() {
		case "encoded":
			return jsonrpc2.RawMessage(stream.Hold(Encoded(encoded))), nil
		case "streamed":
			return jsonrpc2.RawMessage(stream.Hold(Streamed(len(streamed), chunkedWrite(streamed, 1000)))), nil
		case "small":
			dst, slot := answers.Get(64)
			smallSlot = slot
			raw := append(dst, `{"ok":true}`...)
			answers.Settle(slot, raw)
			return jsonrpc2.RawMessage(stream.Hold(Encoded(raw))), nil
		}
		return map[string]int{"plain": 1}, nil
	})
	defer func() {
		_ = conn.Close()
		_ = clientSide.Close()
	}()
	c := lsptest.NewConn(clientSide, bufio.NewReader(clientSide))
	for _, call := range []struct {
		method string
		want   []byte
	}{
		{"encoded", encoded},
		{"streamed", streamed},
		{"small", []byte(`{"ok":true}`)},
		{"plain", []byte(`{"plain":1}`)},
	} {
		got, err := c.Call(call.method, nil)
		if err != nil {
			t.Fatalf("%s: %v", call.method, err)
		}
		if !bytes.Equal(got, call.want) {
			t.Errorf("%s: result %.60q… (%d bytes), want %.60q… (%d bytes)", call.method, got, len(got), call.want, len(call.want))
		}
		if n := stream.inner.held.count(); n != 0 {
			t.Errorf("%s: %d answers still held after the answer", call.method, n)
		}
	}
	if again, slot := answers.Get(64); slot != smallSlot {
		t.Errorf("the small answer's slot %d was not given back (got slot %d)", smallSlot, slot)
	} else {
		answers.Settle(slot, again[:0])
	}
	stream.inner.mu.Lock()
	kept := cap(stream.inner.buf)
	stream.inner.mu.Unlock()
	if kept > keepWriteBuffer {
		t.Errorf("the write buffer kept %d bytes after the large answers, more than %d", kept, keepWriteBuffer)
	}
}

// TestHeldAnswerIsNotCopied: writing a held 8 MiB answer allocates a
// small fraction of it: the result is written where it lies.
func TestHeldAnswerIsNotCopied(t *testing.T) {
	result := bigResult(8 << 20)
	out := &nopCloser{}
	out.Grow(len(result) + 4<<10) // the output's own array, before the count
	f := newFrameWriter(out)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	placeholder := jsonrpc2.RawMessage(f.held.hold(Encoded(result)))
	if _, err := f.WriteMessage(context.Background(), jsonrpc2.NewResponse(jsonrpc2.NewNumberID(1), jsonrpc2.RawMessage(placeholder), nil), func([]byte) {}); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	if out.Len() < len(result) {
		t.Fatalf("%d bytes written, fewer than the result's %d", out.Len(), len(result))
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 1<<20 {
		t.Errorf("writing an 8 MiB held answer allocated %d bytes besides its output", alloc)
	}
}

// TestHeldAnswerFrames checks the frames of held answers byte for byte
// against jsonrpc2's encoding of the same answer, and what sent is told:
// the envelope, or with whole bodies (a trace) the whole body.
func TestHeldAnswerFrames(t *testing.T) {
	result := bigResult(2 * keepWriteBuffer)
	for _, whole := range []bool{false, true} {
		for _, a := range []Answer{Encoded(result), Streamed(len(result), chunkedWrite(result, 4096))} {
			var out nopCloser
			f := newFrameWriter(&out)
			f.wholeBodies = whole
			id := jsonrpc2.NewStringID("big")
			var sent []byte
			if _, err := f.WriteMessage(context.Background(), jsonrpc2.NewResponse(id, jsonrpc2.RawMessage(f.held.hold(a)), nil), func(b []byte) { sent = bytes.Clone(b) }); err != nil {
				t.Fatal(err)
			}
			want, err := jsonrpc2.EncodeMessage(jsonrpc2.NewResponse(id, result, nil))
			if err != nil {
				t.Fatal(err)
			}
			body, err := lsptest.ReadFrame(bufio.NewReader(&out.Buffer))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(body, want) {
				t.Errorf("whole %v, streamed %v: body %.80q…, want %.80q…", whole, a.write != nil, body, want)
			}
			wantSent := want
			if !whole {
				wantSent = []byte(`{"jsonrpc":"2.0","id":"big","result":`)
			}
			if !bytes.Equal(sent, wantSent) {
				t.Errorf("whole %v, streamed %v: sent %.80q…, want %.80q…", whole, a.write != nil, sent, wantSent)
			}
		}
	}
}

// TestStreamedAnswerOfTheWrongSize: a streamed answer that writes fewer
// bytes than it announced is made up with spaces, one that writes more is
// cut; either way the frame has the length its header says, the error
// names the difference, and the next frame reads whole.
func TestStreamedAnswerOfTheWrongSize(t *testing.T) {
	for _, tc := range []struct {
		name    string
		size    int
		written string
		want    string
		errText string
	}{
		{"short", 12, `["a"]`, `["a"]       `, "7 bytes short"},
		{"long", 3, `["a"]`, `["a`, "2 bytes more"},
		{"failed", 8, `["a"`, `["a"    `, "encoder broke"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out nopCloser
			f := newFrameWriter(&out)
			a := Streamed(tc.size, func(w io.Writer) error {
				if _, err := io.WriteString(w, tc.written); err != nil {
					return err
				}
				if tc.name == "failed" {
					return errors.New("encoder broke")
				}
				return nil
			})
			_, err := f.WriteMessage(context.Background(), jsonrpc2.NewResponse(jsonrpc2.NewNumberID(1), jsonrpc2.RawMessage(f.held.hold(a)), nil), func([]byte) {})
			if !errors.Is(err, errStreamedSize) || !strings.Contains(err.Error(), tc.errText) {
				t.Errorf("error %v, want errStreamedSize naming %q", err, tc.errText)
			}
			if _, err := f.WriteMessage(context.Background(), jsonrpc2.NewNotification("next", nil), func([]byte) {}); err != nil {
				t.Fatal(err)
			}
			r := bufio.NewReader(&out.Buffer)
			body, err := lsptest.ReadFrameBody(r)
			if err != nil {
				t.Fatal(err)
			}
			if want := `{"jsonrpc":"2.0","id":1,"result":` + tc.want + `}`; string(body) != want {
				t.Errorf("body %q, want %q", body, want)
			}
			if next, err := lsptest.ReadFrame(r); err != nil || !bytes.Contains(next, []byte(`"next"`)) {
				t.Errorf("the frame after it: %q, %v", next, err)
			}
		})
	}
}

// TestStreamKeepsServingAfterAWrongSize: Stream.Write logs a streamed
// answer of the wrong size and reports no error: its frame is whole, and
// the connection is not broken.
func TestStreamKeepsServingAfterAWrongSize(t *testing.T) {
	rwc := &memRWC{r: bytes.NewReader(nil)}
	failed := 0
	s := New(rwc, Hooks{WriteFailed: func() { failed++ }})
	a := Streamed(10, func(w io.Writer) error { _, err := io.WriteString(w, "1"); return err })
	if _, err := s.Write(context.Background(), jsonrpc2.NewResponse(jsonrpc2.NewNumberID(1), jsonrpc2.RawMessage(s.Hold(a)), nil)); err != nil || failed != 0 {
		t.Fatalf("Write = %v, WriteFailed called %d times; want no error and no call", err, failed)
	}
}

// TestHeldAnswerDroppedWithItsContext: an answer whose context ended
// before its write is not written, is no longer held, and its array is
// handed to Hooks.Written all the same.
func TestHeldAnswerDroppedWithItsContext(t *testing.T) {
	rwc := &memRWC{r: bytes.NewReader(nil)}
	var given [][]byte
	s := New(rwc, Hooks{Written: func(b []byte) { given = append(given, b) }})
	result := []byte(`{"late":true}`)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.Write(ctx, jsonrpc2.NewResponse(jsonrpc2.NewNumberID(8), jsonrpc2.RawMessage(s.Hold(Encoded(result))), nil)); !errors.Is(err, context.Canceled) {
		t.Fatalf("Write with an ended context = %v, want context.Canceled", err)
	}
	if rwc.w.Len() != 0 {
		t.Errorf("written %q after the context ended", rwc.w.Bytes())
	}
	if len(given) != 1 || !sameArray(given[0], result) {
		t.Errorf("Hooks.Written was given %q, want the dropped answer once", given)
	}
	if n := s.inner.held.count(); n != 0 {
		t.Errorf("%d answers still held", n)
	}
}

// TestHeldAnswersInABatch: the answers to a batch, which jsonrpc2 writes
// as one frame, carry each held answer in place of its placeholder.
func TestHeldAnswersInABatch(t *testing.T) {
	rwc := &memRWC{r: bytes.NewReader(nil)}
	var given [][]byte
	s := New(rwc, Hooks{Written: func(b []byte) { given = append(given, b) }})
	encoded := []byte(`{"a":1}`)
	p1 := jsonrpc2.RawMessage(s.Hold(Encoded(encoded)))
	p2 := s.Hold(Streamed(5, chunkedWrite([]byte(`[1,2]`), 2)))
	frame := jsonrpc2.AppendBatch(nil, []jsonrpc2.Message{
		jsonrpc2.NewResponse(jsonrpc2.NewNumberID(1), jsonrpc2.RawMessage(p1), nil),
		jsonrpc2.NewResponse(jsonrpc2.NewNumberID(2), jsonrpc2.RawMessage(`"plain"`), nil),
		jsonrpc2.NewResponse(jsonrpc2.NewNumberID(3), jsonrpc2.RawMessage(p2), nil),
	})
	if _, err := s.WriteFrame(context.Background(), frame); err != nil {
		t.Fatal(err)
	}
	body, err := lsptest.ReadFrame(bufio.NewReader(&rwc.w))
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"jsonrpc":"2.0","id":1,"result":{"a":1}},{"jsonrpc":"2.0","id":2,"result":"plain"},{"jsonrpc":"2.0","id":3,"result":[1,2]}]`
	if string(body) != want {
		t.Errorf("batch %s, want %s", body, want)
	}
	if len(given) != 2 || !sameArray(given[0], encoded) || given[1] != nil {
		t.Errorf("Hooks.Written was given %q, want the encoded answer, then nil for the streamed one", given)
	}
	if n := s.inner.held.count(); n != 0 {
		t.Errorf("%d answers still held", n)
	}
}

// TestClosedStreamDropsItsHeldAnswers: closing the stream drops the
// answers still held, each reported to Hooks.Written once.
func TestClosedStreamDropsItsHeldAnswers(t *testing.T) {
	var given [][]byte
	s := New(&memRWC{r: bytes.NewReader(nil)}, Hooks{Written: func(b []byte) { given = append(given, b) }})
	encoded := []byte(`{"a":1}`)
	s.Hold(Encoded(encoded))
	s.Hold(Streamed(1, chunkedWrite([]byte("1"), 1)))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if len(given) != 2 || s.inner.held.count() != 0 {
		t.Fatalf("Hooks.Written told %d times, %d still held; want 2 and 0", len(given), s.inner.held.count())
	}
	if !sameArray(given[0], encoded) && !sameArray(given[1], encoded) {
		t.Errorf("Hooks.Written was given %q, without the encoded answer", given)
	}
}

// TestPlaceholderMatchesOnlyAsTheResult: a placeholder's text is taken
// only as the whole result of a response: not inside a string or an
// object, not when nothing holds its number, and not twice.
func TestPlaceholderMatchesOnlyAsTheResult(t *testing.T) {
	var h heldAnswers
	p := string(h.hold(Encoded([]byte("1"))))
	inner := strings.TrimPrefix(strings.TrimSuffix(p, `"`), `"`)
	for _, msg := range []string{
		`{"jsonrpc":"2.0","id":1,"result":{"result":` + p + `}}`,
		`{"jsonrpc":"2.0","id":1,"result":["` + `\"` + inner + `\"` + `"]}`,
		`{"jsonrpc":"2.0","id":1,"result":"x\",\"result\":\"` + inner[1:] + `"}`,
		`{"jsonrpc":"2.0","id":1,"result":` + strings.Replace(p, "1", "2", 1) + `}`,
		`{"jsonrpc":"2.0","method":"m","params":` + p + `}`,
	} {
		if _, _, ok := h.take([]byte(msg)); ok {
			t.Errorf("take(%s) found the held answer", msg)
		}
	}
	msg := []byte(`{"jsonrpc":"2.0","id":1,"result":` + p + `}`)
	a, n, ok := h.take(msg)
	if !ok || n != len(p) || string(a.encoded) != "1" {
		t.Fatalf("take(%s) = %q, %d, %v; want the held answer and %d", msg, a.encoded, n, ok, len(p))
	}
	if _, _, ok := h.take(msg); ok {
		t.Error("the same placeholder was taken twice")
	}
}

// countingCloser counts the writes it takes.
type countingCloser struct {
	nopCloser
	writes int
}

func (c *countingCloser) Write(p []byte) (int, error) {
	c.writes++
	return c.nopCloser.Write(p)
}

// TestSmallHeldAnswerIsOneWrite: a held answer that fits the write buffer
// (a keystroke's completion list) goes out in one write, its frame
// whole, and is reported done; a large one is written in three (the
// envelope, the result where it lies, the brace).
func TestSmallHeldAnswerIsOneWrite(t *testing.T) {
	for _, tc := range []struct {
		result []byte
		writes int
	}{
		{[]byte(`{"items":[1,2,3]}`), 1},
		{bigResult(keepWriteBuffer), 3},
	} {
		out := &countingCloser{}
		f := newFrameWriter(out)
		done := 0
		f.answered = func(b []byte) {
			if sameArray(b, tc.result) {
				done++
			}
		}
		var sent []byte
		id := jsonrpc2.NewNumberID(4)
		if _, err := f.WriteMessage(context.Background(), jsonrpc2.NewResponse(id, jsonrpc2.RawMessage(f.held.hold(Encoded(tc.result))), nil), func(b []byte) { sent = bytes.Clone(b) }); err != nil {
			t.Fatal(err)
		}
		want, err := jsonrpc2.EncodeMessage(jsonrpc2.NewResponse(id, tc.result, nil))
		if err != nil {
			t.Fatal(err)
		}
		body, err := lsptest.ReadFrame(bufio.NewReader(&out.Buffer))
		if err != nil || !bytes.Equal(body, want) {
			t.Fatalf("%d-byte answer: body %.60q… (%v), want %.60q…", len(tc.result), body, err, want)
		}
		if out.writes != tc.writes || done != 1 {
			t.Errorf("%d-byte answer: %d writes and reported done %d times; want %d and once", len(tc.result), out.writes, done, tc.writes)
		}
		if tc.writes == 1 && !bytes.Equal(sent, want) {
			t.Errorf("the small answer's sent body %q, want %q", sent, want)
		}
	}
}
