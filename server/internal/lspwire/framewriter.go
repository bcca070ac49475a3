package lspwire

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strconv"
	"sync"

	"go.lsp.dev/jsonrpc2"
)

// keepWriteBuffer is the largest frame whose header and body are composed
// in the reused write buffer; a larger body is written after its header
// without being copied, so the buffer never grows to the largest answer.
// (jsonrpc2's header stream keeps a buffer the size of the largest frame it
// ever wrote: 30 MB live for the rest of the process after one 30 MB
// answer.)
const keepWriteBuffer = 64 << 10

// headerRoom is the room WriteMessage keeps in front of a message it
// encodes into the buffer, for the header: "Content-Length: ", at most 20
// digits and the blank line.
const headerRoom = len("Content-Length: ") + 20 + len("\r\n\r\n")

// frameWriter writes LSP base-protocol frames to w, one at a time.
type frameWriter struct {
	w io.WriteCloser
	// mu serialises frames and guards buf.
	mu  sync.Mutex
	buf []byte
	// written, when set, is called after each frame (Hooks.FrameWritten).
	written func()
	// wholeBodies makes WriteMessage give sent every body whole (the
	// trace records it), so that a large answer is copied into the frame
	// like any other message.
	wholeBodies bool
}

func newFrameWriter(w io.WriteCloser) *frameWriter { return &frameWriter{w: w} }

// lock takes the writer for one frame, failing with ctx's error when ctx
// ends before or while it waits for mu. Once it has taken mu, unlock (with
// its written call) follows even when ctx ended meanwhile.
func (f *frameWriter) lock(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	f.mu.Lock()
	if err := ctx.Err(); err != nil {
		f.unlock()
		return err
	}
	return nil
}

// unlock ends a frame taken by lock: written is called, then mu released.
func (f *frameWriter) unlock() {
	if f.written != nil {
		f.written()
	}
	f.mu.Unlock()
}

// appendHeader appends the base-protocol header of a body of n bytes.
func appendHeader(dst []byte, n int) []byte {
	dst = append(dst, "Content-Length: "...)
	dst = strconv.AppendInt(dst, int64(n), 10)
	return append(dst, "\r\n\r\n"...)
}

// WriteFrame writes data as one frame. Frames never interleave: each is
// written whole under mu.
func (f *frameWriter) WriteFrame(ctx context.Context, data []byte) (int64, error) {
	if err := f.lock(ctx); err != nil {
		return 0, err
	}
	defer f.unlock()
	buf := appendHeader(f.buf[:0], len(data))
	if len(buf)+len(data) <= keepWriteBuffer {
		buf = append(buf, data...)
		f.buf = buf
		n, err := f.w.Write(buf)
		return int64(n), err
	}
	f.buf = buf
	n, err := f.w.Write(buf)
	if err != nil {
		return int64(n), err
	}
	m, err := f.w.Write(data)
	return int64(n + m), err
}

// WriteMessage encodes msg straight into the reused buffer, behind room
// for its header, and writes header and body in one write: the message is
// never copied. sent is called with the body under the lock, after the
// write, whether or not the write failed. A buffer grown past
// keepWriteBuffer by a large message is dropped once written.
func (f *frameWriter) WriteMessage(ctx context.Context, msg jsonrpc2.Message, sent func(body []byte)) (int64, error) {
	if err := f.lock(ctx); err != nil {
		return 0, err
	}
	defer f.unlock()
	if cap(f.buf) < headerRoom {
		f.buf = make([]byte, 0, 4<<10)
	}
	if r, ok := msg.(*jsonrpc2.Response); ok && r.Err() == nil && len(r.Result()) > keepWriteBuffer && !f.wholeBodies {
		return f.writeLargeAnswer(r, sent)
	}
	buf := jsonrpc2.AppendMessage(f.buf[:headerRoom], msg)
	body := buf[headerRoom:]
	var header [headerRoom]byte
	h := appendHeader(header[:0], len(body))
	start := headerRoom - len(h)
	copy(buf[start:], h)
	n, err := f.w.Write(buf[start:])
	sent(body)
	if cap(buf) <= keepWriteBuffer {
		f.buf = buf[:0]
	} else {
		f.buf = nil
	}
	return int64(n), err
}

// writeLargeAnswer writes an answer whose result is larger than
// keepWriteBuffer without copying the result: the header and the
// envelope up to the result, the result where it lies, then the closing
// brace. A 30 MB answer held twice at its write (the encoded result and
// its copy in the frame) made the peak of a 30 MB dsh/prepare (issue 31,
// item 5). sent is given the envelope only: the body is never whole in
// memory. The caller holds the lock.
func (f *frameWriter) writeLargeAnswer(r *jsonrpc2.Response, sent func(body []byte)) (int64, error) {
	// The envelope of a response whose result is "0" ends with `0}`.
	env := jsonrpc2.AppendResponse(f.buf[:headerRoom], r.ID(), jsonrpc2.RawMessage("0"), nil)
	if !bytes.HasSuffix(env, []byte("0}")) {
		return 0, fmt.Errorf("encoding the envelope of answer %v: unexpected end %q", r.ID(), env[max(headerRoom, len(env)-8):])
	}
	prefix := env[headerRoom : len(env)-2]
	result := r.Result()
	var header [headerRoom]byte
	h := appendHeader(header[:0], len(prefix)+len(result)+1)
	start := headerRoom - len(h)
	copy(env[start:], h)
	f.buf = env[:0]
	var n int64
	var err error
	for _, part := range [][]byte{env[start : len(env)-2], result, []byte("}")} {
		var m int
		m, err = f.w.Write(part)
		n += int64(m)
		if err != nil {
			break
		}
	}
	sent(prefix)
	return n, err
}

// Close closes w.
func (f *frameWriter) Close() error { return f.w.Close() }
