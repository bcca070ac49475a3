package sessionref

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
)

// rawReadBuffer is the read buffer for raw logs: large enough that most
// lines are handed out without copying, small enough to keep many logs
// open in parallel.
const rawReadBuffer = 256 << 10

// rawReaders recycles read buffers: a cold build opens thousands of logs, and
// allocating (and zeroing) a fresh buffer for each cost more than reading
// small logs. A sync.Pool holds no state anyone can observe.
var rawReaders = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, rawReadBuffer) }}

// CorruptError reports a log whose complete content cannot be trusted: a
// checksum failure in a complete zstd frame, a malformed frame, or an
// unparsable line followed later by a turn/end (§1.2).
type CorruptError struct {
	Path   string
	Offset int64
	Reason string
}

// Error implements error.
func (e *CorruptError) Error() string {
	return fmt.Sprintf("corrupt log %s at offset %d: %s", e.Path, e.Offset, e.Reason)
}

// lineReader reads the complete lines of a log from a starting offset.
type lineReader struct {
	path     string
	encoding Encoding
	frames   *frameDecoder
}

// readResult says how far a read got.
type readResult struct {
	// Offset is where the next read starts: after the last complete line
	// (raw) or frame (zstd).
	Offset int64
	// BytesRead counts the bytes read from disk.
	BytesRead int64
}

// read calls fn for every complete line after offset, in order, without the
// trailing newline. A torn tail is left for a later read. fn must not keep
// the slice.
func (r lineReader) read(offset int64, fn func(line []byte) error) (readResult, error) {
	f, err := os.Open(r.path)
	if err != nil {
		return readResult{Offset: offset}, fmt.Errorf("opening log: %w", err)
	}
	defer f.Close()
	if offset > 0 {
		if _, err := f.Seek(offset, io.SeekStart); err != nil {
			return readResult{Offset: offset}, fmt.Errorf("seeking log to %d: %w", offset, err)
		}
	}
	if r.encoding == EncodingZstd {
		return r.readFrames(f, offset, fn)
	}
	return r.readRaw(f, offset, fn)
}

func (r lineReader) readRaw(f *os.File, offset int64, fn func([]byte) error) (readResult, error) {
	res := readResult{Offset: offset}
	br := rawReaders.Get().(*bufio.Reader)
	br.Reset(f)
	defer func() {
		br.Reset(nil)
		rawReaders.Put(br)
	}()
	var long []byte // accumulates a line longer than the buffer
	for {
		chunk, err := br.ReadSlice('\n')
		res.BytesRead += int64(len(chunk))
		switch {
		case err == nil:
			line := chunk
			if long != nil {
				long = append(long, chunk...)
				line = long
			}
			res.Offset += int64(len(line))
			if ferr := fn(line[:len(line)-1]); ferr != nil {
				return res, ferr
			}
			long = nil
		case errors.Is(err, bufio.ErrBufferFull):
			long = append(long, chunk...)
		case errors.Is(err, io.EOF):
			// Whatever is left is a torn tail: not yet written.
			return res, nil
		default:
			return res, fmt.Errorf("reading log: %w", err)
		}
	}
}

func (r lineReader) readFrames(f *os.File, offset int64, fn func([]byte) error) (readResult, error) {
	res := readResult{Offset: offset}
	data, err := io.ReadAll(f)
	res.BytesRead = int64(len(data))
	if err != nil {
		return res, fmt.Errorf("reading log: %w", err)
	}
	var decoded []byte
	for len(data) > 0 {
		n, skippable, err := nextFrame(data)
		if errors.Is(err, errFrameIncomplete) {
			return res, nil // torn tail: the frame is still being written
		}
		if err != nil {
			return res, &CorruptError{Path: r.path, Offset: res.Offset, Reason: err.Error()}
		}
		if !skippable {
			decoded, err = r.frames.decode(data[:n], decoded[:0])
			if err != nil {
				return res, &CorruptError{Path: r.path, Offset: res.Offset, Reason: "zstd frame: " + err.Error()}
			}
			if len(decoded) > 0 && decoded[len(decoded)-1] != '\n' {
				return res, &CorruptError{Path: r.path, Offset: res.Offset, Reason: "zstd frame does not end with a complete line"}
			}
			for rest := decoded; len(rest) > 0; {
				i := bytes.IndexByte(rest, '\n')
				if ferr := fn(rest[:i]); ferr != nil {
					return res, ferr
				}
				rest = rest[i+1:]
			}
		}
		data = data[n:]
		res.Offset += int64(n)
	}
	return res, nil
}
