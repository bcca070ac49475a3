package lspwire

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"go.lsp.dev/jsonrpc2"

	"github.com/dsh-refls/dsh-refls/internal/lsptest"
)

// TestEnvelopeTellsResponses pins what Stream.Write relies on to
// count answers without scanning them: jsonrpc2 begins every response it
// encodes with responseEnvelope, and no call or notification.
func TestEnvelopeTellsResponses(t *testing.T) {
	ids := []jsonrpc2.ID{jsonrpc2.NewNumberID(0), jsonrpc2.NewNumberID(-7), jsonrpc2.NewStringID("a\"b"), {}}
	var msgs []jsonrpc2.Message
	for _, id := range ids {
		msgs = append(msgs,
			jsonrpc2.NewResponse(id, jsonrpc2.RawMessage(`{"id":1,"method":"x"}`), nil),
			jsonrpc2.NewResponse(id, nil, nil),
			jsonrpc2.NewResponse(id, nil, jsonrpc2.NewError(jsonrpc2.InvalidParams, "bad")))
		if id.IsValid() {
			msgs = append(msgs, jsonrpc2.NewCall(id, "window/workDoneProgress/create", jsonrpc2.RawMessage(`{"id":2}`)))
		}
	}
	msgs = append(msgs, jsonrpc2.NewNotification("$/progress", jsonrpc2.RawMessage(`{"id":3,"result":1}`)),
		jsonrpc2.NewNotification("exit", nil))
	responses := 0
	for _, m := range msgs {
		body := jsonrpc2.AppendMessage(nil, m)
		v, err := jsonrpc2.ScanMessageView(body)
		if err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		want := isResponse(v.Kind)
		if want {
			responses++
		}
		if got := isEncodedResponse(body); got != want {
			t.Errorf("isEncodedResponse(%s) = %v, want %v", body, got, want)
		}
	}
	if responses == 0 || responses == len(msgs) {
		t.Fatalf("%d of %d messages are responses: the test needs both kinds", responses, len(msgs))
	}
}

// nopCloser is a bytes.Buffer that a frameWriter can close.
type nopCloser struct{ bytes.Buffer }

func (nopCloser) Close() error { return nil }

// TestWriteMessageFrames checks that WriteMessage writes each message as
// one frame whose body is the message's encoding, and gives sent the body;
// that it keeps its buffer for small messages and holds none the size of
// a larger one.
func TestWriteMessageFrames(t *testing.T) {
	var out nopCloser
	f := newFrameWriter(&out)
	small := jsonrpc2.NewResponse(jsonrpc2.NewNumberID(1), jsonrpc2.RawMessage(`["a"]`), nil)
	large := jsonrpc2.NewResponse(jsonrpc2.NewStringID("big"), jsonrpc2.RawMessage(`"`+strings.Repeat("x", 2*keepWriteBuffer)+`"`), nil)
	note := jsonrpc2.NewNotification("big/note", jsonrpc2.RawMessage(`"`+strings.Repeat("y", 2*keepWriteBuffer)+`"`))
	msgs := []jsonrpc2.Message{small, large, small, note}
	var sent [][]byte
	record := func(body []byte) { sent = append(sent, bytes.Clone(body)) }
	for i, m := range msgs {
		if _, err := f.WriteMessage(context.Background(), m, record); err != nil {
			t.Fatal(err)
		}
		switch {
		case m == small && cap(f.buf) == 0:
			t.Errorf("message %d: the buffer was dropped after a small message", i)
		case m != small && cap(f.buf) > keepWriteBuffer:
			t.Errorf("message %d: a buffer of %d bytes was kept after a large message", i, cap(f.buf))
		}
	}
	r := bufio.NewReader(&out.Buffer)
	for i, m := range msgs {
		want, err := jsonrpc2.EncodeMessage(m)
		if err != nil {
			t.Fatal(err)
		}
		body, err := lsptest.ReadFrame(r)
		if err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		if !bytes.Equal(body, want) {
			t.Errorf("frame %d: body %.80q…, want %.80q…", i, body, want)
		}
		if !bytes.Equal(sent[i], want) {
			t.Errorf("frame %d: sent %.80q…, want %.80q…", i, sent[i], want)
		}
	}
	if out.Len() != 0 {
		t.Errorf("%d bytes after the frames", out.Len())
	}
}

// failAfter takes n bytes, then fails every write.
type failAfter struct{ n int }

func (w *failAfter) Write(p []byte) (int, error) {
	if len(p) <= w.n {
		w.n -= len(p)
		return len(p), nil
	}
	m := w.n
	w.n = 0
	return m, errors.New("pipe closed")
}
func (*failAfter) Close() error { return nil }

// TestHeldAnswerWriteFails checks that a held answer whose write fails
// after its envelope reports the error and the bytes written, stops
// writing, still tells sent, and hands its result to Hooks.Written.
func TestHeldAnswerWriteFails(t *testing.T) {
	w := &failAfter{n: 100}
	f := newFrameWriter(w)
	var given []byte
	f.answered = func(b []byte) { given = b }
	result := []byte(`"` + strings.Repeat("x", 2*keepWriteBuffer) + `"`)
	large := jsonrpc2.NewResponse(jsonrpc2.NewNumberID(3), jsonrpc2.RawMessage(f.held.hold(Encoded(result))), nil)
	told := false
	n, err := f.WriteMessage(context.Background(), large, func([]byte) { told = true })
	if !sameArray(given, result) {
		t.Error("the result of the failed write was not handed to Hooks.Written")
	}
	if err == nil || n != 100 || !told {
		t.Errorf("WriteMessage = %d, %v, sent told %v; want 100 bytes, the error, told", n, err, told)
	}
}
