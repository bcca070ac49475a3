package dshgen

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/klauspost/compress/zstd"
)

// File modes dsh uses for the store.
const (
	dirMode  = 0o755
	fileMode = 0o644
)

// newEncoder returns a zstd encoder that writes standard frames with content
// checksums, as §1.2 requires.
func newEncoder() (*zstd.Encoder, error) {
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderCRC(true), zstd.WithEncoderConcurrency(1))
	if err != nil {
		return nil, fmt.Errorf("creating zstd encoder: %w", err)
	}
	return enc, nil
}

// batchBytes is the raw text of one batch: its lines, each ending in "\n".
func batchBytes(b batch) []byte {
	n := 0
	for _, l := range b.lines {
		n += len(l) + 1
	}
	out := make([]byte, 0, n)
	for _, l := range b.lines {
		out = append(out, l...)
		out = append(out, '\n')
	}
	return out
}

// headerBytes is line 1 with its newline.
func (s *Session) headerBytes() []byte {
	return append(s.headerLine(), '\n')
}

// check reports builder misuse and an unusable id.
func (s *Session) check() error {
	if s.err != nil {
		return s.err
	}
	if s.id == "" {
		return errNoHeaderID
	}
	return nil
}

// encodeBatches returns the on-disk bytes of the header (when withHeader)
// and the given batches: raw text, or one zstd frame per part.
func (s *Session) encodeBatches(enc Encoding, zenc *zstd.Encoder, withHeader bool, batches []batch) ([]byte, error) {
	var parts [][]byte
	if withHeader {
		parts = append(parts, s.headerBytes())
	}
	for _, b := range batches {
		if len(b.lines) > 0 {
			parts = append(parts, batchBytes(b))
		}
	}
	var out []byte
	if enc == Raw {
		for _, p := range parts {
			out = append(out, p...)
		}
		return out, nil
	}
	if zenc == nil {
		var err error
		if zenc, err = newEncoder(); err != nil {
			return nil, err
		}
		defer zenc.Close()
	}
	if s.migratedBody && withHeader && len(parts) > 1 {
		// The header frame, then every event through one streaming
		// compressor: one frame, content size not declared.
		out = zenc.EncodeAll(parts[0], out)
		var body bytes.Buffer
		w, err := zstd.NewWriter(&body, zstd.WithEncoderCRC(true), zstd.WithEncoderConcurrency(1))
		if err != nil {
			return nil, fmt.Errorf("creating zstd stream encoder: %w", err)
		}
		for _, p := range parts[1:] {
			if _, err := w.Write(p); err != nil {
				return nil, fmt.Errorf("compressing migrated body: %w", err)
			}
		}
		// Flushing before Close makes the encoder stream even a body that
		// fits one block, so the frame header declares no size, as Node's
		// streaming compressor writes it.
		if err := w.Flush(); err != nil {
			return nil, fmt.Errorf("compressing migrated body: %w", err)
		}
		if err := w.Close(); err != nil {
			return nil, fmt.Errorf("compressing migrated body: %w", err)
		}
		return append(out, body.Bytes()...), nil
	}
	if s.headerWithEvents && withHeader && len(parts) > 1 {
		// The header and the first batch in one frame (SPEC §1.2 wants
		// the header alone in frame 1).
		parts = append([][]byte{append(append([]byte{}, parts[0]...), parts[1]...)}, parts[2:]...)
	}
	for _, p := range parts {
		out = zenc.EncodeAll(p, out)
	}
	return out, nil
}

// Bytes returns the whole log file as it would be saved.
func (s *Session) Bytes(enc Encoding) ([]byte, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	return s.encodeBatches(enc, nil, true, s.batches)
}

// Dir is the session's directory under root (§1.1).
func (s *Session) Dir(root string) string {
	return SessionDir(root, s.id, s.cwd, s.hasCwd)
}

// Path is where Save writes the log under root.
func (s *Session) Path(root string, enc Encoding) string {
	return filepath.Join(s.Dir(root), LogFileName(s.generation, enc))
}

// Save writes the log under root as dsh lays it out and returns its path.
func (s *Session) Save(root string, enc Encoding) (string, error) {
	path := s.Path(root, enc)
	return path, s.SaveAs(path, enc)
}

// SaveAs writes the log to path, creating its directories, replacing any
// file there. Later events can be added with Append.
func (s *Session) SaveAs(path string, enc Encoding) error {
	return s.saveAs(path, enc, nil)
}

// saveAs is SaveAs with an optional shared encoder.
func (s *Session) saveAs(path string, enc Encoding, zenc *zstd.Encoder) error {
	if err := s.check(); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), dirMode); err != nil {
		return fmt.Errorf("creating session directory: %w", err)
	}
	if enc == Raw {
		if err := s.writeRaw(path); err != nil {
			return err
		}
		s.markWritten()
		return nil
	}
	data, err := s.encodeBatches(enc, zenc, true, s.batches)
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, data, fileMode); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	s.markWritten()
	return nil
}

// rawWriteBuffer is the write buffer of raw saves: large enough that long
// logs go out in few system calls.
const rawWriteBuffer = 1 << 20

// writeRaw streams the raw log to path line by line, without first
// assembling it in memory.
func (s *Session) writeRaw(path string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, fileMode)
	if err != nil {
		return fmt.Errorf("creating %s: %w", path, err)
	}
	w := bufio.NewWriterSize(f, min(rawWriteBuffer, int(s.RawSize())))
	w.Write(s.headerBytes())
	for _, b := range s.batches {
		for _, l := range b.lines {
			w.Write(l)
			w.WriteByte('\n')
		}
	}
	// bufio.Writer keeps the first error; Flush reports it.
	if err := w.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("closing %s: %w", path, err)
	}
	return nil
}

// markWritten records that every batch so far is on disk.
func (s *Session) markWritten() {
	s.written = len(s.batches)
	s.looseOpen = false
	s.saved = true
}

// encodingOf is the encoding a log path names.
func encodingOf(path string) Encoding {
	if strings.HasSuffix(path, ".zstd") {
		return Zstd
	}
	return Raw
}

// pending returns the bytes of the batches added since the last save or
// append, and the length of the last raw line or zstd frame among them.
func (s *Session) pending(enc Encoding) (data []byte, lastPart int, err error) {
	if err := s.check(); err != nil {
		return nil, 0, err
	}
	if !s.saved {
		return nil, 0, fmt.Errorf("session %q: append before the log was saved", s.id)
	}
	if s.inTurn {
		return nil, 0, fmt.Errorf("session %q: append inside a turn", s.id)
	}
	batches := s.batches[s.written:]
	data, err = s.encodeBatches(enc, nil, false, batches)
	if err != nil {
		return nil, 0, err
	}
	if len(data) == 0 {
		return nil, 0, nil
	}
	if enc == Raw {
		last := batches[len(batches)-1]
		for i := len(batches) - 1; len(last.lines) == 0 && i > 0; i-- {
			last = batches[i-1]
		}
		return data, len(last.lines[len(last.lines)-1]) + 1, nil
	}
	frames, _, err := SplitFrames(data)
	if err != nil || len(frames) == 0 {
		return nil, 0, fmt.Errorf("splitting new frames: %v", err)
	}
	return data, len(frames[len(frames)-1]), nil
}

// appendBytes appends data to the file at path.
func appendBytes(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return fmt.Errorf("opening %s for append: %w", path, err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("appending to %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("closing %s: %w", path, err)
	}
	return nil
}

// Append appends the events added since the last Save or Append to the log
// at path, as dsh does: raw bytes for a raw log, one new frame per batch for
// a zstd log (the encoding follows the path's suffix).
func (s *Session) Append(path string) error {
	data, _, err := s.pending(encodingOf(path))
	if err != nil {
		return err
	}
	if len(data) > 0 {
		if err := appendBytes(path, data); err != nil {
			return err
		}
	}
	s.markWritten()
	return nil
}

// AppendTorn appends the new events in two writes, like a writer caught
// mid-append: it writes all but the second half of the last line (raw) or
// the last frame (zstd) now, leaving a torn tail, and returns finish, which
// writes the rest. A reader must treat the torn tail as not yet written
// (§1.2) and pick the events up once finish has run.
func (s *Session) AppendTorn(path string) (finish func() error, err error) {
	data, lastPart, err := s.pending(encodingOf(path))
	if err != nil {
		return nil, err
	}
	if len(data) == 0 {
		return nil, fmt.Errorf("session %q: nothing to append", s.id)
	}
	cut := len(data) - (lastPart+1)/2
	if err := appendBytes(path, data[:cut]); err != nil {
		return nil, err
	}
	s.markWritten()
	rest := data[cut:]
	return func() error { return appendBytes(path, rest) }, nil
}

// zstd frames -------------------------------------------------------------

// Frame format constants of RFC 8878.
const (
	zstdMagic          = 0xFD2FB528
	skippableMagicMask = 0xFFFFFFF0
	skippableMagic     = 0x184D2A50
	blockHeaderSize    = 3
	checksumSize       = 4
	blockTypeRLE       = 1
	blockTypeReserved  = 3
)

// errTruncatedFrame marks data that ends inside a frame.
var errTruncatedFrame = errors.New("data ends inside a frame")

// SplitFrames cuts a zstd stream into its frames without decompressing.
// An incomplete last frame is returned as rest (a torn tail, not an error);
// malformed data is an error.
func SplitFrames(data []byte) (frames [][]byte, rest []byte, err error) {
	off := 0
	for off < len(data) {
		n, err := frameLen(data[off:])
		if errors.Is(err, errTruncatedFrame) {
			return frames, data[off:], nil
		}
		if err != nil {
			return frames, data[off:], fmt.Errorf("frame at byte %d: %w", off, err)
		}
		frames = append(frames, data[off:off+n])
		off += n
	}
	return frames, nil, nil
}

// frameLen is the length of the frame (or skippable frame) at the start of b.
func frameLen(b []byte) (int, error) {
	if len(b) < 4 {
		return 0, errTruncatedFrame
	}
	magic := binary.LittleEndian.Uint32(b)
	if magic&skippableMagicMask == skippableMagic {
		if len(b) < 8 {
			return 0, errTruncatedFrame
		}
		n := 8 + int(binary.LittleEndian.Uint32(b[4:]))
		if len(b) < n {
			return 0, errTruncatedFrame
		}
		return n, nil
	}
	if magic != zstdMagic {
		return 0, fmt.Errorf("bad magic %#x", magic)
	}
	if len(b) < 5 {
		return 0, errTruncatedFrame
	}
	fhd := b[4]
	fcsFlag := fhd >> 6
	single := fhd>>5&1 == 1
	hasChecksum := fhd>>2&1 == 1
	off := 5
	if !single {
		off++
	}
	off += [4]int{0, 1, 2, 4}[fhd&3]
	switch fcsFlag {
	case 0:
		if single {
			off++
		}
	case 1:
		off += 2
	case 2:
		off += 4
	case 3:
		off += 8
	}
	for {
		if len(b) < off+blockHeaderSize {
			return 0, errTruncatedFrame
		}
		h := uint32(b[off]) | uint32(b[off+1])<<8 | uint32(b[off+2])<<16
		off += blockHeaderSize
		last := h&1 == 1
		typ := h >> 1 & 3
		size := int(h >> 3)
		switch typ {
		case blockTypeRLE:
			size = 1
		case blockTypeReserved:
			return 0, fmt.Errorf("reserved block type at byte %d", off-blockHeaderSize)
		}
		off += size
		if len(b) < off {
			return 0, errTruncatedFrame
		}
		if last {
			break
		}
	}
	if hasChecksum {
		off += checksumSize
		if len(b) < off {
			return 0, errTruncatedFrame
		}
	}
	return off, nil
}

// FrameHasChecksum reports whether a frame declares a content checksum.
func FrameHasChecksum(frame []byte) bool {
	return len(frame) > 4 && frame[4]>>2&1 == 1
}
