package dshlog

import (
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/klauspost/compress/zstd"
)

// zstd frame layout constants (RFC 8878 §3.1).
const (
	zstdMagic          = 0xFD2FB528
	zstdSkippableMask  = 0xFFFFFFF0
	zstdSkippableMagic = 0x184D2A50
	zstdBlockHeaderLen = 3
	zstdChecksumLen    = 4
	zstdBlockTypeRaw   = 0
	zstdBlockTypeRLE   = 1
	zstdBlockTypeComp  = 2
)

// errFrameIncomplete reports that the bytes end inside a frame: a torn tail,
// or an append still being written.
var errFrameIncomplete = errors.New("incomplete zstd frame")

// FrameDecoder decompresses single zstd frames, verifying their content
// checksums. It is safe for concurrent use.
type FrameDecoder struct {
	// Concurrency is how many frames may be decoded at once; 0 means GOMAXPROCS.
	Concurrency int
	once        sync.Once
	dec         *zstd.Decoder
	err         error
	// streams recycles the single-threaded stream decoders of stream.
	streams sync.Pool
}

func (f *FrameDecoder) decode(frame []byte, dst []byte) ([]byte, error) {
	f.once.Do(func() {
		f.dec, f.err = zstd.NewReader(nil,
			zstd.WithDecoderConcurrency(f.Concurrency),
			zstd.WithDecoderMaxMemory(maxDecodedFrame),
			zstd.IgnoreChecksum(false))
	})
	if f.err != nil {
		return nil, fmt.Errorf("creating zstd decoder: %w", f.err)
	}
	return f.dec.DecodeAll(frame, dst)
}

// stream decodes one frame (or a frame's decodable prefix) from src into
// w, block by block, verifying the content checksum at its end. Memory is
// bounded by the decoder's window (maxWindowBytes), never by the frame. It
// returns how many compressed bytes it read; an error from w comes back
// as returned by w.
func (f *FrameDecoder) stream(src io.Reader, w io.Writer) (int64, error) {
	dec, _ := f.streams.Get().(*zstd.Decoder)
	if dec == nil {
		var err error
		dec, err = zstd.NewReader(nil,
			zstd.WithDecoderConcurrency(1),
			zstd.WithDecoderLowmem(true),
			zstd.WithDecoderMaxWindow(maxWindowBytes),
			zstd.IgnoreChecksum(false))
		if err != nil {
			return 0, fmt.Errorf("creating zstd stream decoder: %w", err)
		}
	}
	counted := &countingReader{r: src}
	if err := dec.Reset(counted); err != nil {
		dec.Close()
		return counted.n, err
	}
	_, err := io.Copy(errorWriter{w: w}, dec)
	if err == nil {
		f.streams.Put(dec)
	} else {
		dec.Close()
	}
	return counted.n, err
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// maxDecodedFrame bounds the memory one frame may decompress to. dsh writes a
// frame per turn; 1 GiB leaves room for very long turns while refusing
// decompression bombs.
const maxDecodedFrame = 1 << 30
