package lspwire

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"go.lsp.dev/jsonrpc2"
)

// frameReader reads LSP base-protocol frames (header fields, a blank line,
// Content-Length bytes of body) with every part bounded.
type frameReader struct {
	in     *bufio.Reader
	buf    []byte
	offset int64 // input bytes consumed, for error messages
}

func newFrameReader(r io.Reader) *frameReader {
	return &frameReader{in: bufio.NewReaderSize(r, maxHeaderLineBytes)}
}

// next reads one frame. It returns the body (valid until the next call)
// and the frame's size in bytes; a *rejectedFrame when a frame was read
// whole but its body is too large (the body is then skipped); io.EOF at a
// clean end between frames; and any other error when the framing is lost.
func (r *frameReader) next() ([]byte, int64, error) {
	start := r.offset
	length, err := r.readHeader()
	if err != nil {
		return nil, 0, err
	}
	if length > MaxMessageBytes {
		return nil, 0, r.skip(length, start)
	}
	var body []byte
	if length <= reuseBufferBytes {
		if cap(r.buf) < int(length) {
			r.buf = make([]byte, length, min(max(int(length), 2*cap(r.buf)), reuseBufferBytes))
		}
		body = r.buf[:length]
	} else {
		body = make([]byte, length)
	}
	n, err := io.ReadFull(r.in, body)
	r.offset += int64(n)
	if err != nil {
		return nil, 0, fmt.Errorf("frame at offset %d: body ends after %d of %d bytes: %w", start, n, length, unexpectedEOF(err))
	}
	return body, r.offset - start, nil
}

// readHeader reads one header block and returns its Content-Length.
func (r *frameReader) readHeader() (int64, error) {
	start := r.offset
	length := int64(-1)
	for lines := 0; ; lines++ {
		line, err := r.in.ReadSlice('\n')
		r.offset += int64(len(line))
		switch {
		case err == io.EOF && lines == 0 && len(line) == 0:
			return 0, io.EOF
		case errors.Is(err, bufio.ErrBufferFull):
			return 0, fmt.Errorf("header at offset %d: a line longer than %d bytes (%s…) is not an LSP header", start, maxHeaderLineBytes, quote(line))
		case err != nil:
			return 0, fmt.Errorf("header at offset %d: input ends inside the header: %w", start, unexpectedEOF(err))
		}
		if lines >= MaxHeaderLines {
			return 0, fmt.Errorf("header at offset %d: more than %d header lines", start, MaxHeaderLines)
		}
		field := bytes.TrimRight(line, "\r\n")
		if len(field) == 0 {
			break
		}
		name, value, ok := bytes.Cut(field, []byte(":"))
		if !ok {
			return 0, fmt.Errorf("header at offset %d: %s is not a header field", start, quote(field))
		}
		if !strings.EqualFold(string(bytes.TrimSpace(name)), "Content-Length") {
			continue
		}
		n, err := parseLength(bytes.TrimSpace(value))
		if err != nil {
			return 0, fmt.Errorf("header at offset %d: %w", start, err)
		}
		if length >= 0 && n != length {
			return 0, fmt.Errorf("header at offset %d: two Content-Length fields disagree (%d and %d)", start, length, n)
		}
		length = n
	}
	if length < 0 {
		return 0, fmt.Errorf("header at offset %d: no Content-Length field", start)
	}
	return length, nil
}

// maxLengthDigits bounds a Content-Length so it cannot overflow int64.
const maxLengthDigits = 18

// parseLength parses a Content-Length value: decimal digits only.
func parseLength(v []byte) (int64, error) {
	if len(v) == 0 || len(v) > maxLengthDigits {
		return 0, fmt.Errorf("invalid Content-Length %s", quote(v))
	}
	var n int64
	for _, c := range v {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("invalid Content-Length %s", quote(v))
		}
		n = n*10 + int64(c-'0')
	}
	return n, nil
}

// skip reads past a body over MaxMessageBytes without keeping it, and
// returns the answer to it: InvalidRequest under the request's id when the
// body is a request whose id could be found, silence for a notification,
// and a null id otherwise.
func (r *frameReader) skip(length, start int64) error {
	var sc idScanner
	n, err := io.CopyN(&sc, r.in, length)
	r.offset += n
	if err != nil {
		return fmt.Errorf("frame at offset %d: oversized body ends after %d of %d bytes: %w", start, n, length, unexpectedEOF(err))
	}
	id, isRequest := sc.result()
	msg := fmt.Sprintf("frame at offset %d: message of %d bytes exceeds the maximum of %d bytes and was skipped", start, length, MaxMessageBytes)
	return &rejectedFrame{code: jsonrpc2.InvalidRequest, id: id, msg: msg, silent: isRequest && id == nil}
}

// unexpectedEOF reports an end of input inside a frame as
// io.ErrUnexpectedEOF.
func unexpectedEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// quote renders bad input for an error message, shortened.
func quote(b []byte) string {
	if len(b) > maxQuotedBytes {
		return strconv.Quote(string(b[:maxQuotedBytes])) + "…"
	}
	return strconv.Quote(string(b))
}
