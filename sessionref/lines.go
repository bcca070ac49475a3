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
	Path string
	// Offset is the byte offset of a bad frame; Line the number of a bad
	// line (0 when the problem is not a line).
	Offset int64
	Line   int
	Reason string
}

// Error implements error.
func (e *CorruptError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("corrupt log %s at line %d: %s", e.Path, e.Line, e.Reason)
	}
	return fmt.Sprintf("corrupt log %s at offset %d: %s", e.Path, e.Offset, e.Reason)
}

// resumeTailLen is how many bytes before a resume offset are remembered:
// if they differ on the next read, the log was rewritten in place rather
// than appended to, and is read again from the start.
const resumeTailLen = 32

// errRewritten reports that the bytes before a resume offset changed.
var errRewritten = errors.New("log was rewritten before the offset reading would resume from")

// lineReader reads the complete lines of a log from a starting offset.
type lineReader struct {
	path     string
	encoding Encoding
	frames   *frameDecoder
	// skipCorruptFrames makes a zstd read go on after a frame that fails its
	// checksum, reporting the first failure at the end: the title index keeps
	// what later frames say, while preparation refuses the log.
	skipCorruptFrames bool
}

// readResult says how far a read got.
type readResult struct {
	// Offset is where the next read starts: after the last complete line
	// (raw) or frame (zstd).
	Offset int64
	// BytesRead counts the bytes read from disk.
	BytesRead int64
	// Tail holds the bytes just before Offset, to check on the next read.
	Tail []byte
	// LastLine is the newest complete line this read delivered (nil when it
	// delivered none), without its newline.
	LastLine []byte
}

// read calls fn for every complete line after offset, in order, without the
// trailing newline. A torn tail is left for a later read. fn must not keep
// the slice. tail, when not empty, must equal the bytes just before offset,
// else the read fails with errRewritten.
func (r lineReader) read(offset int64, tail []byte, fn func(line []byte) error) (readResult, error) {
	f, err := openRegular(r.path)
	if err != nil {
		return readResult{Offset: offset}, err
	}
	defer f.Close()
	if offset > 0 && len(tail) > 0 {
		got := make([]byte, len(tail))
		if _, err := f.ReadAt(got, offset-int64(len(tail))); err != nil || !bytes.Equal(got, tail) {
			return readResult{Offset: offset}, errRewritten
		}
	}
	if offset > 0 {
		if _, err := f.Seek(offset, io.SeekStart); err != nil {
			return readResult{Offset: offset}, fmt.Errorf("seeking log to %d: %w", offset, err)
		}
	}
	var res readResult
	if r.encoding == EncodingZstd {
		res, err = r.readFrames(f, offset, fn)
	} else {
		res, err = r.readRaw(f, offset, fn)
	}
	if r.encoding == EncodingRaw && res.Offset > offset {
		res.LastLine = lastLineBefore(f, offset, res.Offset)
	}
	if res.Offset > 0 {
		n := min(resumeTailLen, res.Offset)
		buf := make([]byte, n)
		if _, rerr := f.ReadAt(buf, res.Offset-n); rerr == nil {
			res.Tail = buf
		}
	}
	return res, err
}

// lastLineBefore reads back the complete line that ends (with its newline)
// at end, not looking before start. Reading it again costs one small read,
// where keeping a copy of every line in case it is the last cost a copy of
// the whole log.
func lastLineBefore(f *os.File, start, end int64) []byte {
	for chunk := int64(4096); ; chunk *= 4 {
		from := max(start, end-1-chunk)
		buf := make([]byte, end-1-from)
		if _, err := f.ReadAt(buf, from); err != nil {
			return nil
		}
		if i := bytes.LastIndexByte(buf, '\n'); i >= 0 {
			return buf[i+1:]
		}
		if from == start {
			return buf
		}
	}
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
	var firstCorrupt *CorruptError
	for len(data) > 0 {
		n, skippable, err := nextFrame(data)
		if errors.Is(err, errFrameIncomplete) {
			break // torn tail: the frame is still being written
		}
		if err != nil {
			return res, &CorruptError{Path: r.path, Offset: res.Offset, Reason: err.Error()}
		}
		if !skippable {
			decoded, err = r.frames.decode(data[:n], decoded[:0])
			var bad *CorruptError
			switch {
			case err != nil:
				bad = &CorruptError{Path: r.path, Offset: res.Offset, Reason: "zstd frame: " + err.Error()}
			case len(decoded) > 0 && decoded[len(decoded)-1] != '\n':
				bad = &CorruptError{Path: r.path, Offset: res.Offset, Reason: "zstd frame does not end with a complete line"}
			}
			if bad != nil {
				if !r.skipCorruptFrames {
					return res, bad
				}
				if firstCorrupt == nil {
					firstCorrupt = bad
				}
				decoded = decoded[:0]
			}
			for rest := decoded; len(rest) > 0; {
				i := bytes.IndexByte(rest, '\n')
				if ferr := fn(rest[:i]); ferr != nil {
					return res, ferr
				}
				if i == len(rest)-1 { // the frame's last line: the newest so far
					res.LastLine = append(res.LastLine[:0], rest[:i]...)
				}
				rest = rest[i+1:]
			}
		}
		data = data[n:]
		res.Offset += int64(n)
	}
	if firstCorrupt != nil {
		return res, firstCorrupt
	}
	return res, nil
}
