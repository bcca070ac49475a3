package lspwire

import (
	"bytes"
	"context"
	"errors"
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
	// trace records it), a held answer's too.
	wholeBodies bool
	// held are the answers held for jsonrpc2 (Stream.Hold); answered, when
	// set, is given the result of each once written or dropped
	// (Hooks.Written).
	held     heldAnswers
	answered func(result []byte)
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
// never copied. An answer whose result is held (Stream.Hold) is written
// with its result in place of its placeholder: copied into the frame when
// small, else by writeHeld. sent is
// called with the body under the lock, after the write, whether or not
// the write failed. A buffer grown past keepWriteBuffer by a large
// message is dropped once written.
func (f *frameWriter) WriteMessage(ctx context.Context, msg jsonrpc2.Message, sent func(body []byte)) (int64, error) {
	if err := f.lock(ctx); err != nil {
		// An answer held for the message is dropped with it.
		if a, _, ok := f.held.take(jsonrpc2.AppendMessage(nil, msg)); ok {
			f.resultDone(a)
		}
		return 0, err
	}
	defer f.unlock()
	if cap(f.buf) < headerRoom {
		f.buf = make([]byte, 0, 4<<10)
	}
	buf := jsonrpc2.AppendMessage(f.buf[:headerRoom], msg)
	if a, placeholder, ok := f.held.take(buf[headerRoom:]); ok {
		if a.write != nil || len(buf)-placeholder+a.size > keepWriteBuffer {
			return f.writeHeld(buf, placeholder, a, sent)
		}
		// A small answer (a keystroke's) goes out in one write, as any
		// other message: its result is copied into the frame.
		defer f.resultDone(a)
		buf = append(append(buf[:len(buf)-placeholder-1], a.encoded...), '}')
	}
	body := buf[headerRoom:]
	var header [headerRoom]byte
	h := appendHeader(header[:0], len(body))
	start := headerRoom - len(h)
	copy(buf[start:], h)
	n, err := f.w.Write(buf[start:])
	sent(body)
	f.keep(buf)
	return int64(n), err
}

// keep keeps buf for the next frame unless a large message grew it.
func (f *frameWriter) keep(buf []byte) {
	if cap(buf) <= keepWriteBuffer {
		f.buf = buf[:0]
	} else {
		f.buf = nil
	}
}

// resultDone tells the Hooks.Written hook that a held answer was written
// or dropped, with its encoded result (nil for a streamed one).
func (f *frameWriter) resultDone(a Answer) {
	if f.answered != nil {
		f.answered(a.encoded)
	}
}

// writeHeld writes the answer whose message buf holds (behind headerRoom)
// with its result a in place of the placeholder that ends it (the last
// placeholder bytes before the closing brace): the header and the
// envelope up to the result, the result (where it lies, or as it is
// encoded), then the closing brace. A 30 MB answer held twice at its
// write (the encoded result and its copy in the frame) made the peak of a
// 30 MB dsh/prepare (issue 31, item 5). sent is given the envelope only,
// unless the bodies are wanted whole (a trace). The caller holds the
// lock.
func (f *frameWriter) writeHeld(buf []byte, placeholder int, a Answer, sent func(body []byte)) (int64, error) {
	defer f.resultDone(a)
	body := buf[headerRoom:]
	prefix := body[:len(body)-placeholder-1]
	var header [headerRoom]byte
	h := appendHeader(header[:0], len(prefix)+a.size+1)
	start := headerRoom - len(h)
	copy(buf[start:], h)
	m, err := f.w.Write(buf[start : headerRoom+len(prefix)])
	n := int64(m)
	var whole *bytes.Buffer
	if err == nil {
		w := io.Writer(f.w)
		if f.wholeBodies {
			whole = bytes.NewBuffer(make([]byte, 0, len(prefix)+a.size+1))
			whole.Write(prefix)
			w = io.MultiWriter(f.w, whole)
		}
		var k int64
		k, err = a.WriteTo(w)
		n += k
		if err == nil || errors.Is(err, errStreamedSize) {
			// The frame is whole even when a streamed result was not.
			m, werr := f.w.Write([]byte("}"))
			n += int64(m)
			if werr != nil {
				err = werr
			}
		}
	}
	if whole != nil {
		whole.WriteByte('}')
		sent(whole.Bytes())
	} else {
		sent(prefix)
	}
	f.keep(buf)
	return n, err
}

// Close closes w.
func (f *frameWriter) Close() error { return f.w.Close() }
