package server

import (
	"context"
	"io"
	"strconv"
	"sync"
)

// keepWriteBuffer is the largest frame whose header and body are composed
// in the reused write buffer; a larger body is written after its header
// without being copied, so the buffer never grows to the largest answer.
// (jsonrpc2's header stream keeps a buffer the size of the largest frame it
// ever wrote: 30 MB live for the rest of the process after one 30 MB
// answer.)
const keepWriteBuffer = 64 << 10

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

// Close closes w.
func (f *frameWriter) Close() error { return f.w.Close() }
