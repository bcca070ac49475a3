package lspwire

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"go.lsp.dev/jsonrpc2"

	"github.com/dsh-refls/dsh-refls/internal/lsptest"
)

// frameFuzzTimeout bounds one fuzz input: the reader must never wait on
// input it already has.
const frameFuzzTimeout = 5 * time.Second

// memRWC is a connection whose input is fixed bytes and whose output is
// kept.
type memRWC struct {
	r io.Reader
	w bytes.Buffer
}

func (m *memRWC) Read(p []byte) (int, error)  { return m.r.Read(p) }
func (m *memRWC) Write(p []byte) (int, error) { return m.w.Write(p) }
func (m *memRWC) Close() error                { return nil }

// readAllFrames reads frames from s until an error, answering every call it
// reads (as the connection would), and returns the frames (copied) and the
// final error. It fails the test if reading does not end in time.
func readAllFrames(t *testing.T, s *Stream) ([][]byte, error) {
	t.Helper()
	type result struct {
		frames [][]byte
		err    error
	}
	done := make(chan result, 1)
	go func() {
		var out [][]byte
		for {
			frame, n, err := s.ReadFrame(context.Background())
			if err != nil {
				done <- result{out, err}
				return
			}
			if n <= 0 {
				done <- result{out, fmt.Errorf("frame of %d bytes reported", n)}
				return
			}
			out = append(out, bytes.Clone(frame))
			forEachMessage(frame, func(m []byte, kind jsonrpc2.MessageViewKind) {
				if kind == jsonrpc2.MessageViewCall {
					v, _ := jsonrpc2.ScanMessageView(m)
					resp := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":true}`, v.IDRaw)
					if _, err := s.WriteFrame(context.Background(), []byte(resp)); err != nil {
						t.Errorf("writing response: %v", err)
					}
				}
			})
		}
	}()
	select {
	case r := <-done:
		return r.frames, r.err
	case <-time.After(frameFuzzTimeout):
		s.Abort()
		t.Fatalf("reading frames did not end within %s", frameFuzzTimeout)
		return nil, nil
	}
}

// writtenMessage is what the fuzz targets read of a message the stream
// wrote.
type writtenMessage struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// decodeOutput parses everything the stream wrote as strict frames of JSON.
func decodeOutput(t *testing.T, out []byte) []writtenMessage {
	t.Helper()
	r := bufio.NewReader(bytes.NewReader(out))
	var msgs []writtenMessage
	for {
		body, err := lsptest.ReadFrame(r)
		if errors.Is(err, lsptest.ErrNoFrame) {
			return msgs
		}
		if err != nil {
			t.Fatalf("the stream wrote something other than frames: %v\n%q", err, out)
		}
		var m writtenMessage
		if err := json.Unmarshal(body, &m); err != nil {
			t.Fatalf("written frame %q: %v", body, err)
		}
		msgs = append(msgs, m)
	}
}

// frameOf frames body with header variant v: what LSP clients send, plus
// the liberties the base protocol allows (field order, case, extra
// fields, bare LF line ends, spaces around the value).
func frameOf(body []byte, v uint8) []byte {
	n := len(body)
	var h string
	switch v % 6 {
	case 0:
		h = fmt.Sprintf("Content-Length: %d\r\n\r\n", n)
	case 1:
		h = fmt.Sprintf("content-length:%d\r\n\r\n", n)
	case 2:
		h = fmt.Sprintf("Content-Length: %d\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n", n)
	case 3:
		h = fmt.Sprintf("Content-Type: application/vscode-jsonrpc\r\nCONTENT-LENGTH:   %d  \r\n\r\n", n)
	case 4:
		h = fmt.Sprintf("Content-Length: %d\n\n", n)
	default:
		h = fmt.Sprintf("Content-Length: %d\r\nContent-Length: %d\r\n\r\n", n, n)
	}
	return append([]byte(h), body...)
}

// FuzzFrameReader feeds arbitrary bytes to the server's frame reading: it
// must never panic or wait on input it has, must return only frames the
// connection can decode, and must write nothing but well-formed error
// responses.
func FuzzFrameReader(f *testing.F) {
	seeds := []string{
		"",
		"Content-Length: 2\r\n\r\n{}",
		"Content-Length: 52\r\n\r\n" + `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`,
		"Content-Length: 59\r\n\r\n" + `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`,
		"Content-Length: 5\r\n\r\nhello",
		"Content-Length: 0\r\n\r\n",
		"Content-Length: -1\r\n\r\n",
		"Content-Length: 99999999999999999999\r\n\r\n",
		"Content-Length: 67108865\r\n\r\n" + `{"jsonrpc":"2.0","id":7,"method":"x"}`,
		"Content-Type: x\r\n\r\n{}",
		"garbage without a newline",
		"GET / HTTP/1.1\r\nHost: x\r\n\r\n",
		"Content-Length: 2\r\nContent-Length: 3\r\n\r\n{}",
		"Content-Length: 4\r\n\r\n[{}]",
		"Content-Length: 2\r\n\r\n[]",
		"Content-Length: 44\r\n\r\n" + `{"jsonrpc":"1.0","id":"a","method":"x"}    `,
		"Content-Length: 3\n\n123Content-Length: 2\r\n\r\n{}",
		strings.Repeat("Content-Length: 1\r\n", 40) + "\r\n{",
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		rwc := &memRWC{r: bytes.NewReader(data)}
		s := New(rwc, Hooks{})
		frames, err := readAllFrames(t, s)
		if err == nil {
			t.Fatal("reading ended without an error")
		}
		for _, fr := range frames {
			if _, derr := jsonrpc2.ParseRequests(fr); bytes.HasPrefix(bytes.TrimSpace(fr), []byte("[")) && derr != nil {
				t.Fatalf("batch frame %q passed on but does not parse: %v", fr, derr)
			}
			if !bytes.HasPrefix(bytes.TrimSpace(fr), []byte("[")) {
				if _, derr := jsonrpc2.DecodeMessage(fr); derr != nil {
					t.Fatalf("frame %q passed on but does not decode: %v", fr, derr)
				}
			}
		}
		if err == io.EOF && s.reader.offset != int64(len(data)) {
			t.Fatalf("clean end of input after %d bytes of %d", s.reader.offset, len(data))
		}
		for _, m := range decodeOutput(t, rwc.w.Bytes()) {
			if m.Error == nil && m.Result == nil {
				t.Fatalf("the stream wrote %+v, neither an error nor an answer", m)
			}
		}
	})
}

// FuzzFrameRoundTrip frames well-formed messages around an arbitrary frame
// body: every well-formed frame is read back exactly, in order, whatever
// header variant carries it and whatever the arbitrary frame holds.
func FuzzFrameRoundTrip(f *testing.F) {
	f.Add("hello", []byte(`{"jsonrpc":"2.0","method":"x"}`), uint8(0), uint8(1))
	f.Add("😀 @[a](dsh-session:x)\r\n", []byte("not json"), uint8(2), uint8(3))
	f.Add("", []byte(""), uint8(4), uint8(5))
	f.Add("Content-Length: 3\r\n\r\n", []byte(`[1,2]`), uint8(5), uint8(0))
	f.Add("\x00\xff", []byte(`{"jsonrpc":"2.0","id":{},"method":"x"}`), uint8(1), uint8(4))
	f.Fuzz(func(t *testing.T, text string, odd []byte, v1, v2 uint8) {
		var in bytes.Buffer
		var want [][]byte
		// Encoding a map of strings cannot fail: invalid UTF-8 in text
		// becomes U+FFFD.
		params, _ := json.Marshal(map[string]string{"text": text})
		for i, v := range []uint8{v1, v2} {
			body := fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"textDocument/hover","params":%s}`, i+1, params)
			want = append(want, body)
			in.Write(frameOf(body, v))
			if i == 0 && len(odd) > 0 {
				in.Write(frameOf(odd, v2))
			}
		}
		rwc := &memRWC{r: bytes.NewReader(in.Bytes())}
		s := New(rwc, Hooks{})
		frames, err := readAllFrames(t, s)
		if !errors.Is(err, io.EOF) {
			t.Fatalf("reading ended with %v, want EOF", err)
		}
		oddPassed := false
		if len(frames) == len(want)+1 {
			if !bytes.Equal(frames[1], odd) {
				t.Fatalf("middle frame %q, want the odd frame %q", frames[1], odd)
			}
			frames = append(frames[:1], frames[2:]...)
			oddPassed = true
		}
		if len(frames) != len(want) {
			t.Fatalf("read %d frames, want %d (+1 odd): %q", len(frames), len(want), frames)
		}
		for i := range want {
			if !bytes.Equal(frames[i], want[i]) {
				t.Fatalf("frame %d = %q, want %q", i, frames[i], want[i])
			}
		}
		errorsWritten := 0
		for _, m := range decodeOutput(t, rwc.w.Bytes()) {
			if m.Error != nil {
				errorsWritten++
			}
		}
		if len(odd) > 0 && !oddPassed && errorsWritten != 1 {
			t.Fatalf("the odd frame %q was skipped with %d error answers, want 1", odd, errorsWritten)
		}
	})
}
