package lsptest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// maxFrameBytes bounds one frame the reader accepts, so a broken server
// cannot make a test allocate without limit. It is above the server's own
// 64 MiB request limit, because answers can be larger than requests.
const maxFrameBytes = 256 << 20

// Frame returns body framed with its Content-Length header, as it is.
func Frame(body []byte) []byte {
	return fmt.Appendf(nil, "Content-Length: %d\r\n\r\n%s", len(body), body)
}

// FrameMessage encodes msg as a JSON-RPC 2.0 message (setting "jsonrpc")
// and frames it.
func FrameMessage(msg map[string]any) ([]byte, error) {
	m := make(map[string]any, len(msg)+1)
	for k, v := range msg {
		m[k] = v
	}
	m["jsonrpc"] = "2.0"
	// Without HTML escaping, as editors write JSON: "<" stays "<", so what
	// the server echoes back compares equal to what the test sent.
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(m); err != nil {
		return nil, fmt.Errorf("encoding message: %w", err)
	}
	return Frame(bytes.TrimSuffix(buf.Bytes(), []byte("\n"))), nil
}

// ErrNoFrame is returned by ReadFrame at a clean end of input: between
// frames, before any byte of the next one.
var ErrNoFrame = io.EOF

// ReadFrame reads one frame strictly: header lines ending in CRLF, a
// Content-Length field, an empty line, then exactly that many bytes, which
// must be valid JSON. At a clean end of input it returns io.EOF; any other
// violation is an error saying what was wrong.
func ReadFrame(r *bufio.Reader) (json.RawMessage, error) {
	body, err := readFrameBody(r)
	if err != nil {
		return nil, err
	}
	if !json.Valid(body) {
		return nil, notJSON(body)
	}
	return body, nil
}

// ReadFrameBody is ReadFrame without the check that the body is JSON, for
// a caller that decodes the body itself (a benchmark stops its clock when
// the last byte is in and decodes afterwards).
func ReadFrameBody(r *bufio.Reader) (json.RawMessage, error) { return readFrameBody(r) }

func notJSON(body []byte) error { return fmt.Errorf("body is not JSON: %.200q", body) }

// readFrameBody is ReadFrame without the check that the body is JSON, for
// a caller that decodes it anyway (and so checks it in the same pass).
func readFrameBody(r *bufio.Reader) (json.RawMessage, error) {
	if _, err := r.Peek(1); err == io.EOF {
		return nil, ErrNoFrame
	}
	length := -1
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF // inside a frame, not between two
			}
			return nil, fmt.Errorf("header: %w (read %q)", err, line)
		}
		if !strings.HasSuffix(line, "\r\n") {
			return nil, fmt.Errorf("header line %q does not end in CRLF", line)
		}
		line = strings.TrimSuffix(line, "\r\n")
		if line == "" {
			break
		}
		name, value, ok := strings.Cut(line, ":")
		if !ok {
			return nil, fmt.Errorf("not a header: %q", line)
		}
		if strings.EqualFold(strings.TrimSpace(name), "Content-Length") {
			n, err := strconv.Atoi(strings.TrimSpace(value))
			if err != nil || n < 0 {
				return nil, fmt.Errorf("bad Content-Length %q", value)
			}
			if length >= 0 && n != length {
				return nil, fmt.Errorf("two Content-Length fields disagree: %d and %d", length, n)
			}
			length = n
		}
	}
	if length < 0 {
		return nil, errors.New("frame without Content-Length")
	}
	if length > maxFrameBytes {
		return nil, fmt.Errorf("frame of %d bytes is over the reader's limit of %d", length, maxFrameBytes)
	}
	body := make([]byte, length)
	if _, err := io.ReadFull(r, body); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, fmt.Errorf("body of %d bytes: %w", length, err)
	}
	return body, nil
}
