package dshlog

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
)

// Limits of the zstd reader. Frames dsh writes per append batch are small
// and declare their size: they are decoded in one call. Anything else (the
// one large body frame of a migrated v4 log, SPEC §1.7; a frame without a
// declared size; a decompression bomb) is decoded as a stream through the
// line splitter, so memory stays bounded by the window and the line cap.
const (
	// keepFrameBytes is the largest compressed frame held in memory while
	// its structure is walked; larger frames are read a second time.
	keepFrameBytes = 1 << 20
	// decodeAllBytes is the largest declared content size decoded in one call.
	decodeAllBytes = 4 << 20
	// maxWindowBytes bounds the decoder's history window. dsh's frames use
	// windows of a few MiB; a frame asking for more is refused as corrupt.
	maxWindowBytes = 64 << 20
	// zstdMaxBlock is the largest block size RFC 8878 allows.
	zstdMaxBlock = 128 << 10
)

// frameInfo is one frame found while walking a zstd log.
type frameInfo struct {
	size      int64
	skippable bool
	// contentSize is the declared decompressed size, -1 when not declared.
	contentSize int64
	// kept holds the frame's bytes when it is small enough to keep.
	kept []byte
}

// frameWalker walks the structure of zstd frames in a stream, reading only
// frame and block headers, keeping the bytes of small frames.
type frameWalker struct {
	br   *bufio.Reader
	keep []byte
	// walked counts the bytes consumed.
	walked int64
}

// next reads one frame. io.EOF means the stream ended cleanly between
// frames; errFrameIncomplete that it ends inside a frame.
// When the frame is small enough, fi.kept holds its bytes (for an
// incomplete frame, the bytes present).
func (w *frameWalker) next() (fi frameInfo, err error) {
	fi = frameInfo{contentSize: -1}
	w.keep = w.keep[:0]
	keeping := true
	defer func() {
		if keeping && !fi.skippable && fi.size > 0 {
			fi.kept = w.keep
		}
	}()
	take := func(n int) error {
		if keeping && len(w.keep)+n <= keepFrameBytes {
			start := len(w.keep)
			w.keep = append(w.keep, make([]byte, n)...)
			got, err := io.ReadFull(w.br, w.keep[start:])
			w.walked += int64(got)
			fi.size += int64(got)
			if err != nil {
				return errFrameIncomplete
			}
			return nil
		}
		keeping = false
		got, err := w.br.Discard(n)
		w.walked += int64(got)
		fi.size += int64(got)
		if err != nil {
			return errFrameIncomplete
		}
		return nil
	}
	head, err := w.br.Peek(4)
	if len(head) == 0 && errors.Is(err, io.EOF) {
		return fi, io.EOF
	}
	if len(head) < 4 {
		return fi, errFrameIncomplete
	}
	magic := binary.LittleEndian.Uint32(head)
	if magic&zstdSkippableMask == zstdSkippableMagic {
		fi.skippable = true
		h, _ := w.br.Peek(8)
		if len(h) < 8 {
			return fi, errFrameIncomplete
		}
		n := int(binary.LittleEndian.Uint32(h[4:]))
		keeping = false
		if err := take(8 + n); err != nil {
			return fi, err
		}
		return fi, nil
	}
	if magic != zstdMagic {
		return fi, fmt.Errorf("bad zstd magic %#08x", magic)
	}
	h, _ := w.br.Peek(18) // the longest frame header
	if len(h) < 5 {
		return fi, errFrameIncomplete
	}
	hl, fcs, hasChecksum, err := frameHeader(h)
	if err != nil {
		return fi, err
	}
	if len(h) < hl {
		return fi, errFrameIncomplete
	}
	fi.contentSize = fcs
	if err := take(hl); err != nil {
		return fi, err
	}
	for {
		bh, _ := w.br.Peek(zstdBlockHeaderLen)
		if len(bh) < zstdBlockHeaderLen {
			return fi, errFrameIncomplete
		}
		v := uint32(bh[0]) | uint32(bh[1])<<8 | uint32(bh[2])<<16
		last := v&1 != 0
		size := int(v >> 3)
		body := size
		switch (v >> 1) & 3 {
		case zstdBlockTypeRaw, zstdBlockTypeComp:
		case zstdBlockTypeRLE:
			body = 1
		default:
			return fi, errors.New("zstd block of reserved type")
		}
		if size > zstdMaxBlock {
			return fi, fmt.Errorf("zstd block of %d bytes exceeds the %d-byte maximum", size, zstdMaxBlock)
		}
		if err := take(zstdBlockHeaderLen + body); err != nil {
			return fi, err
		}
		if last {
			break
		}
	}
	if hasChecksum {
		if err := take(zstdChecksumLen); err != nil {
			return fi, err
		}
	}
	return fi, nil
}

// frameHeader parses a zstd frame header (RFC 8878 §3.1.1.1): its length,
// the declared content size (-1 when absent) and the checksum flag.
func frameHeader(b []byte) (hl int, fcs int64, checksum bool, err error) {
	fhd := b[4]
	if fhd&0x08 != 0 {
		return 0, 0, false, errors.New("zstd frame header has the reserved bit set")
	}
	fcsFlag := fhd >> 6
	singleSegment := fhd&0x20 != 0
	checksum = fhd&0x04 != 0
	pos := 5
	if !singleSegment {
		pos++ // window descriptor
	}
	pos += [4]int{0, 1, 2, 4}[fhd&0x03]
	fcsLen := [4]int{0, 2, 4, 8}[fcsFlag]
	if fcsFlag == 0 && singleSegment {
		fcsLen = 1
	}
	fcs = -1
	if fcsLen > 0 && len(b) >= pos+fcsLen {
		f := b[pos : pos+fcsLen]
		switch fcsLen {
		case 1:
			fcs = int64(f[0])
		case 2:
			fcs = int64(binary.LittleEndian.Uint16(f)) + 256
		case 4:
			fcs = int64(binary.LittleEndian.Uint32(f))
		case 8:
			u := binary.LittleEndian.Uint64(f)
			fcs = math.MaxInt64
			if u < math.MaxInt64 {
				fcs = int64(u)
			}
		}
	}
	return pos + fcsLen, fcs, checksum, nil
}

// readFrames reads the complete lines of a zstd log from offset, which is
// a frame boundary. Lines may span frames. The decodable prefix of a torn
// last frame contributes its complete lines (SPEC §1.7; dsh 0.2
// session-persistence-jsonl generation.ts decompressZstdPrefix, and dsh
// 0.1.1 session-persistence-jsonl index.ts readZstdPrefix). res.Offset only
// moves to frame ends where no line is open.
func (r LineReader) readFrames(f *os.File, offset int64, sp *lineSplitter) (ReadResult, error) {
	res := ReadResult{Offset: offset}
	br := frameReaders.Get().(*bufio.Reader)
	br.Reset(f)
	defer func() {
		br.Reset(nil)
		frameReaders.Put(br)
	}()
	w := &frameWalker{br: br}
	pos := offset
	var firstCorrupt *CorruptError
	torn := false
	var tornBytes []byte
	for {
		fi, err := w.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if errors.Is(err, errFrameIncomplete) {
			torn, tornBytes = true, fi.kept
			break
		}
		if err != nil {
			res.BytesRead = w.walked
			return res, &CorruptError{Path: r.Path, Offset: pos, Reason: err.Error()}
		}
		if !fi.skippable {
			if derr := r.decodeFrame(f, pos, fi, sp); derr != nil {
				var werr *writeError
				if errors.As(derr, &werr) {
					res.BytesRead = w.walked
					return res, werr.err
				}
				bad := &CorruptError{Path: r.Path, Offset: pos, Reason: "zstd frame: " + derr.Error()}
				if !r.SkipCorruptFrames {
					res.BytesRead = w.walked
					return res, bad
				}
				if firstCorrupt == nil {
					firstCorrupt = bad
				}
				sp.drop()
			}
		}
		pos += fi.size
		if sp.atLineStart() {
			res.Offset = pos
		}
	}
	res.BytesRead = w.walked
	if !sp.atLineStart() && !r.SkipCorruptFrames {
		// Complete frames must end on a line (dsh: "complete frame contains
		// a torn JSONL record").
		return res, &CorruptError{Path: r.Path, Offset: res.Offset, Reason: "the complete zstd frames end inside a line"}
	}
	if torn {
		if r.OnTorn != nil {
			r.OnTorn()
		}
		sp.drop()
		var src io.Reader = bytes.NewReader(tornBytes)
		if tornBytes == nil { // too large to have been kept: read it again
			src = io.NewSectionReader(f, pos, math.MaxInt64-pos)
		}
		n, err := r.Frames.stream(src, sp)
		if tornBytes == nil {
			res.BytesRead += n
		}
		var werr *writeError
		if errors.As(err, &werr) {
			return res, werr.err
		}
		// Any other error is where the torn frame stops decoding.
		sp.drop()
	}
	if firstCorrupt != nil {
		return res, firstCorrupt
	}
	return res, nil
}

// writeError carries the line callback's error out of a decoder copy.
type writeError struct{ err error }

func (e *writeError) Error() string { return e.err.Error() }

// errorWriter wraps a writer so its errors can be told from the decoder's.
type errorWriter struct{ w io.Writer }

func (w errorWriter) Write(p []byte) (int, error) {
	n, err := w.w.Write(p)
	if err != nil {
		return n, &writeError{err: err}
	}
	return n, nil
}

// decodeFrame decodes one complete frame into the splitter.
func (r LineReader) decodeFrame(f *os.File, pos int64, fi frameInfo, sp *lineSplitter) error {
	if fi.kept != nil && fi.contentSize >= 0 && fi.contentSize <= decodeAllBytes {
		out, err := r.Frames.decode(fi.kept, nil)
		if err != nil {
			return err
		}
		if _, err := sp.Write(out); err != nil {
			return &writeError{err: err}
		}
		return nil
	}
	var src io.Reader
	if fi.kept != nil {
		src = bytes.NewReader(fi.kept)
	} else {
		src = io.NewSectionReader(f, pos, fi.size)
	}
	var w io.Writer = sp
	if fi.contentSize >= 0 {
		// The declared size says how much of the frame follows each write,
		// so a long line in it is held in one buffer (lineSplitter.more). A
		// false size costs no more than a true one: the buffer is capped at
		// the line cap, and the decoder refuses a frame that outgrows it.
		w = &frameRest{sp: sp, left: fi.contentSize}
		defer func() { sp.more = -1 }()
	}
	_, err := r.Frames.stream(src, w)
	return err
}

// frameRest tells the splitter how much of a frame of declared size is
// still to come after each write.
type frameRest struct {
	sp   *lineSplitter
	left int64
}

func (h *frameRest) Write(p []byte) (int, error) {
	h.left -= int64(len(p))
	h.sp.more = max(0, h.left)
	return h.sp.Write(p)
}
