package lspwire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
)

// Answer is the result of a call that the Stream writes itself: bytes
// encoded whole, written where they lie, or a result encoded as it is
// written, of a size known beforehand.
//
// go.lsp.dev/jsonrpc2 v1.0.1 hands a Stream each answer as a value of an
// unexported type, whose result a Stream can only get by encoding the
// whole message into a buffer of its own: a 30 MB answer was copied
// there, on memory the process had never touched, and an answer's array
// never came back to AnswerBuffers. So a call's result travels through
// jsonrpc2 as a placeholder (Stream.Hold), and the Stream writes the
// answer in its place.
type Answer struct {
	encoded []byte
	size    int
	write   func(w io.Writer) error
}

// Encoded is an answer encoded whole into result, which the Stream writes
// without copying and then hands to Hooks.Written.
func Encoded(result []byte) Answer { return Answer{encoded: result, size: len(result)} }

// Streamed is an answer of exactly size bytes that write encodes into w
// as the frame is written: no array holds it whole. write must write
// exactly size bytes; the frame announces size, so fewer are made up with
// spaces (JSON's whitespace) and more are cut, with an error either way,
// and the frames after it stay whole. The writer's lock is held while
// write runs: other frames wait for it.
func Streamed(size int, write func(w io.Writer) error) Answer {
	return Answer{size: size, write: write}
}

// Size is how many bytes the answer's result takes.
func (a Answer) Size() int { return a.size }

// heldPrefix begins every placeholder: a JSON string whose first
// character is NUL, which no answer the server encodes begins with, then
// the number of the held answer and the closing quote.
const heldPrefix = `"\u0000lspwire answer `

// heldAnswers are the answers held by number until their placeholder is
// written; the zero value is ready to use.
type heldAnswers struct {
	mu   sync.Mutex
	next uint64
	held map[uint64]Answer
}

// hold keeps a and returns its placeholder.
func (h *heldAnswers) hold(a Answer) json.RawMessage {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.held == nil {
		h.held = make(map[uint64]Answer)
	}
	h.next++
	h.held[h.next] = a
	b := append([]byte(heldPrefix), strconv.FormatUint(h.next, 10)...)
	return append(b, '"')
}

// dropAll returns every answer held, no longer held.
func (h *heldAnswers) dropAll() []Answer {
	h.mu.Lock()
	defer h.mu.Unlock()
	var all []Answer
	for n, a := range h.held {
		all = append(all, a)
		delete(h.held, n)
	}
	return all
}

// count is how many answers are held.
func (h *heldAnswers) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.held)
}

// take finds the placeholder that ends the response msg, as jsonrpc2
// encodes a response ({"jsonrpc":"2.0","id":…,"result":<result>}), and
// returns the answer it holds, no longer held, with the length of the
// placeholder. A placeholder inside a string or an object cannot match:
// its quote would be escaped, or another brace would follow it.
func (h *heldAnswers) take(msg []byte) (a Answer, placeholder int, ok bool) {
	const resultKey = `,"result":`
	if !bytes.HasSuffix(msg, []byte(`"}`)) {
		return Answer{}, 0, false
	}
	digitsEnd := len(msg) - 2
	digitsStart := digitsEnd
	for digitsStart > 0 && msg[digitsStart-1] >= '0' && msg[digitsStart-1] <= '9' {
		digitsStart--
	}
	start := digitsStart - len(heldPrefix)
	if digitsStart == digitsEnd || start < len(resultKey) || string(msg[start:digitsStart]) != heldPrefix ||
		string(msg[start-len(resultKey):start]) != resultKey {
		return Answer{}, 0, false
	}
	n, err := strconv.ParseUint(string(msg[digitsStart:digitsEnd]), 10, 64)
	if err != nil {
		return Answer{}, 0, false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	a, ok = h.held[n]
	delete(h.held, n)
	return a, digitsEnd + 1 - start, ok
}

// errStreamedSize reports a streamed answer that did not write the size
// it announced.
var errStreamedSize = errors.New("streamed answer")

// WriteTo writes the answer's result to w: the encoded bytes, or what
// write encodes, held to exactly a.size bytes (see Streamed). The error
// of w comes first; a streamed answer of the wrong size is reported
// after w has its size.
func (a Answer) WriteTo(w io.Writer) (int64, error) {
	if a.write == nil {
		n, err := w.Write(a.encoded)
		return int64(n), err
	}
	cw := &sizedWriter{w: w, left: a.size}
	err := a.write(cw)
	if cw.err != nil {
		return cw.n, cw.err
	}
	short := cw.left
	if short > 0 {
		pad := bytes.Repeat([]byte(" "), min(short, 64<<10))
		for cw.left > 0 {
			m, werr := w.Write(pad[:min(cw.left, len(pad))])
			cw.n += int64(m)
			cw.left -= m
			if werr != nil {
				return cw.n, werr
			}
		}
	}
	switch {
	case cw.over > 0:
		return cw.n, fmt.Errorf("%w: %d bytes more than the %d it announced were cut", errStreamedSize, cw.over, a.size)
	case short > 0:
		return cw.n, fmt.Errorf("%w: %d bytes short of the %d it announced, made up with spaces (%v)", errStreamedSize, short, a.size, err)
	case err != nil:
		return cw.n, fmt.Errorf("%w: %v", errStreamedSize, err)
	}
	return cw.n, nil
}

// sizedWriter passes at most left bytes to w and counts the rest.
type sizedWriter struct {
	w    io.Writer
	left int
	n    int64
	over int
	err  error
}

func (s *sizedWriter) Write(p []byte) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	take := p
	if len(take) > s.left {
		take = take[:s.left]
		s.over += len(p) - s.left
	}
	if len(take) > 0 {
		m, err := s.w.Write(take)
		s.n += int64(m)
		s.left -= m
		if err != nil {
			s.err = err
			return m, err
		}
	}
	return len(p), nil
}

// resolve returns the frame of a batch of answers with each held answer
// written in place of its placeholder, and those answers, no longer held.
// Batches are rare (only clients send them), so this path copies.
func (h *heldAnswers) resolve(frame []byte) ([]byte, []Answer) {
	var members []json.RawMessage
	if json.Unmarshal(frame, &members) != nil {
		return frame, nil
	}
	var answers []Answer
	out := []byte{'['}
	for i, m := range members {
		if i > 0 {
			out = append(out, ',')
		}
		a, placeholder, ok := h.take(m)
		if !ok {
			out = append(out, m...)
			continue
		}
		answers = append(answers, a)
		out = append(out, m[:len(m)-placeholder-1]...)
		var result bytes.Buffer
		_, _ = a.WriteTo(&result) // a wrong size is made whole, as in a single answer
		out = append(out, result.Bytes()...)
		out = append(out, '}')
	}
	return append(out, ']'), answers
}
