package lspwire

import (
	"bufio"
	"bytes"
	"context"
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
// one frame whose body is the message's encoding, keeps its buffer for
// small messages and drops it after one larger than keepWriteBuffer.
func TestWriteMessageFrames(t *testing.T) {
	var out nopCloser
	f := newFrameWriter(&out)
	small := jsonrpc2.NewResponse(jsonrpc2.NewNumberID(1), jsonrpc2.RawMessage(`["a"]`), nil)
	large := jsonrpc2.NewResponse(jsonrpc2.NewStringID("big"), jsonrpc2.RawMessage(`"`+strings.Repeat("x", 2*keepWriteBuffer)+`"`), nil)
	var sent [][]byte
	record := func(body []byte) { sent = append(sent, bytes.Clone(body)) }
	for i, m := range []jsonrpc2.Message{small, large, small} {
		if _, err := f.WriteMessage(context.Background(), m, record); err != nil {
			t.Fatal(err)
		}
		switch {
		case m == small && cap(f.buf) == 0:
			t.Errorf("message %d: the buffer was dropped after a small message", i)
		case m == large && f.buf != nil:
			t.Errorf("message %d: a buffer of %d bytes was kept after a large message", i, cap(f.buf))
		}
	}
	r := bufio.NewReader(&out.Buffer)
	for i, m := range []jsonrpc2.Message{small, large, small} {
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
