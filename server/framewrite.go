package server

import (
	"context"
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
	// written, when set, is called after each frame (memory.go: a large
	// answer is garbage once written).
	written func()
}

func newFrameWriter(w io.WriteCloser) *frameWriter { return &frameWriter{w: w} }

// WriteFrame writes data as one frame. Frames never interleave: each is
// written whole under mu.
func (f *frameWriter) WriteFrame(ctx context.Context, data []byte) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.written != nil {
		defer f.written()
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	buf := append(f.buf[:0], "Content-Length: "...)
	buf = strconv.AppendInt(buf, int64(len(data)), 10)
	buf = append(buf, "\r\n\r\n"...)
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
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.written != nil {
		defer f.written()
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if cap(f.buf) < headerRoom {
		f.buf = make([]byte, 0, 4<<10)
	}
	buf := jsonrpc2.AppendMessage(f.buf[:headerRoom], msg)
	body := buf[headerRoom:]
	var header [headerRoom]byte
	h := append(header[:0], "Content-Length: "...)
	h = strconv.AppendInt(h, int64(len(body)), 10)
	h = append(h, "\r\n\r\n"...)
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

// Close closes w.
func (f *frameWriter) Close() error { return f.w.Close() }
