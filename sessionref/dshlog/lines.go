package dshlog

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/dsh-refls/dsh-refls/sessionref/dshlog/layout"
)

// readBufferSize is the read buffer for logs: large enough that most lines
// are handed out without copying, small enough to keep many logs open in
// parallel.
const readBufferSize = 256 << 10

// readBuffers recycles read buffers: a cold build opens thousands of logs,
// and allocating (and zeroing) a fresh buffer for each cost more than
// reading small logs. A sync.Pool holds no state anyone can observe.
var readBuffers = sync.Pool{New: func() any { b := make([]byte, readBufferSize); return &b }}

// frameReaders recycles the buffered readers zstd logs are walked with.
var frameReaders = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, readBufferSize) }}

// MaxLineBytes caps one log line (SPEC §1.2 lets a reader skip an
// over-long line with a reason): a longer line is skipped without being
// held, so reading a log never needs more memory than this, whatever a
// zstd frame decompresses to or however long a run without a newline is.
// dsh writes a 64 MB message as one line of a little more than 64 MiB.
const MaxLineBytes = 96 << 20

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

// ResumeTailLen is how many bytes before a resume offset are remembered:
// if they differ on the next read, the log was rewritten in place rather
// than appended to, and is read again from the start.
const ResumeTailLen = 32

// ErrRewritten reports that the bytes before a resume offset changed.
var ErrRewritten = errors.New("log was rewritten before the offset reading would resume from")

// LineReader reads the complete lines of a log from a starting offset.
type LineReader struct {
	Path     string
	Encoding layout.Encoding
	Frames   *FrameDecoder
	// SkipCorruptFrames makes a zstd read go on after a frame that fails its
	// checksum, reporting the first failure at the end: the title index keeps
	// what later frames say, while preparation refuses the log.
	SkipCorruptFrames bool
	// OnTorn, when set, is called before the lines of the decodable prefix
	// of a torn last zstd frame are delivered (SPEC §1.7: they count).
	OnTorn func()
	// OnOverlong, when set, is told the length of each line longer than the
	// line cap; the line itself is skipped.
	OnOverlong func(n int64) error
	// OnOwnedLine, when set, receives the long lines that lie in a buffer
	// of their own, to keep and write over; the read's LastLine is then
	// not kept.
	OnOwnedLine func(line []byte) error
	// MaxLine overrides MaxLineBytes (tests); 0 means MaxLineBytes.
	MaxLine int64
}

func (r LineReader) lineCap() int64 {
	if r.MaxLine > 0 {
		return r.MaxLine
	}
	return MaxLineBytes
}

// ReadResult says how far a read got.
type ReadResult struct {
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

// Read calls fn for every complete line after offset, in order, without the
// trailing newline. A torn tail is left for a later read. fn must not keep
// the slice. tail, when not empty, must equal the bytes just before offset,
// else the read fails with ErrRewritten.
func (r LineReader) Read(offset int64, tail []byte, fn func(line []byte) error) (ReadResult, error) {
	return r.readChecked(offset, len(tail), func(got []byte) bool { return bytes.Equal(got, tail) }, fn)
}

// ReadResumed is Read for a caller that kept only the length n and the
// SHA-256 of the bytes before offset, not the bytes: the title index keeps
// 32 bytes of hash per session instead of a slice and its array.
func (r LineReader) ReadResumed(offset int64, n int, sum *[sha256.Size]byte, fn func(line []byte) error) (ReadResult, error) {
	return r.readChecked(offset, n, func(got []byte) bool { return sha256.Sum256(got) == *sum }, fn)
}

// readChecked is Read with the n bytes before offset checked by same.
func (r LineReader) readChecked(offset int64, n int, same func(got []byte) bool, fn func(line []byte) error) (ReadResult, error) {
	f, err := OpenRegular(r.Path, "log")
	if err != nil {
		return ReadResult{Offset: offset}, err
	}
	defer f.Close()
	if offset > 0 && n > 0 {
		var arr [ResumeTailLen]byte
		got := arr[:min(n, len(arr))]
		if n > len(arr) {
			got = make([]byte, n)
		}
		if _, err := f.ReadAt(got, offset-int64(n)); err != nil || !same(got) {
			return ReadResult{Offset: offset}, ErrRewritten
		}
	}
	if offset > 0 {
		if _, err := f.Seek(offset, io.SeekStart); err != nil {
			return ReadResult{Offset: offset}, fmt.Errorf("seeking log to %d: %w", offset, err)
		}
	}
	sp := &lineSplitter{fn: fn, overlong: r.OnOverlong, owned: r.OnOwnedLine, max: r.lineCap(), more: -1}
	var res ReadResult
	if r.Encoding == layout.EncodingZstd {
		res, err = r.readFrames(f, offset, sp)
	} else {
		res, err = r.readRaw(f, offset, sp)
	}
	res.LastLine = sp.last
	sp.releaseLarge()
	if res.Offset > 0 {
		n := min(ResumeTailLen, res.Offset)
		buf := make([]byte, n)
		if _, rerr := f.ReadAt(buf, res.Offset-n); rerr == nil {
			res.Tail = buf
		}
	}
	return res, err
}

func (r LineReader) readRaw(f *os.File, offset int64, sp *lineSplitter) (ReadResult, error) {
	res := ReadResult{Offset: offset}
	bufp := readBuffers.Get().(*[]byte)
	defer readBuffers.Put(bufp)
	buf := *bufp
	// The file's size says how much can follow a read, so a long line is
	// held in one buffer of its final size (lineSplitter.more). A log that
	// grows meanwhile only makes that buffer grow.
	size := int64(-1)
	if info, err := f.Stat(); err == nil {
		size = info.Size()
	}
	for {
		n, err := f.Read(buf)
		if n > 0 {
			res.BytesRead += int64(n)
			if size >= 0 {
				sp.more = max(0, size-offset-res.BytesRead)
			}
			if _, werr := sp.Write(buf[:n]); werr != nil {
				res.Offset = offset + sp.complete
				return res, werr
			}
		}
		if errors.Is(err, io.EOF) {
			// Whatever is left after the last newline is a torn tail: not yet written.
			res.Offset = offset + sp.complete
			return res, nil
		}
		if err != nil {
			res.Offset = offset + sp.complete
			return res, fmt.Errorf("reading log: %w", err)
		}
	}
}
