package dshlog

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math/rand"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
)

func FuzzZstdFrameWalker(f *testing.F) {
	f.Add(zstdFrame([]string{`{"type":"session","version":0,"id":"s","createdAt":1}`}))
	f.Add(zstdFrame(nil))
	f.Add(zstdFrame([]string{strings.Repeat("a", 5000)}))
	skippable := binary.LittleEndian.AppendUint32(nil, zstdSkippableMagic+3)
	skippable = binary.LittleEndian.AppendUint32(skippable, 4)
	f.Add(append(skippable, 1, 2, 3, 4))
	f.Add([]byte{0x28, 0xB5, 0x2F, 0xFD, 0x24, 0x00, 0x01, 0x00, 0x00})
	f.Add([]byte{0x28, 0xB5, 0x2F, 0xFD, 0xC0, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x07, 0xFF, 0xFF})
	f.Add([]byte("garbage"))
	f.Fuzz(func(t *testing.T, b []byte) {
		n, err := walkFrame(b)
		if err != nil {
			return
		}
		if n <= 0 || n > len(b) {
			t.Fatalf("frame length %d of %d bytes", n, len(b))
		}
		// A frame is found from its own bytes alone, and any prefix of it
		// is an incomplete frame, never a different one.
		if m, err := walkFrame(b[:n]); err != nil || m != n {
			t.Errorf("frame alone: %d, %v; want %d", m, err, n)
		}
		for _, k := range []int{0, 1, n / 2, n - 1} {
			if k < n {
				if _, err := walkFrame(b[:k]); !errors.Is(err, errFrameIncomplete) && !(k == 0 && errors.Is(err, io.EOF)) {
					t.Errorf("prefix of %d of a %d-byte frame: %v, want incomplete", k, n, err)
				}
			}
		}
	})
}

// walkFrame is the length of the frame at the start of b as the reader's
// frame walker finds it (io.EOF for no bytes).
func walkFrame(b []byte) (int, error) {
	w := &frameWalker{br: bufio.NewReader(bytes.NewReader(b))}
	fi, err := w.next()
	return int(fi.size), err
}

func TestFrameWalkerMatchesEncoder(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	random := make([]byte, 300<<10) // incompressible: several raw blocks
	rng.Read(random)
	contents := map[string][]byte{
		"empty":        nil,
		"line":         []byte(`{"type":"session","version":0,"id":"s","createdAt":1}` + "\n"),
		"repetitive":   []byte(strings.Repeat("z", 200<<10)),
		"random":       random,
		"mixed blocks": append([]byte(strings.Repeat("text ", 40000)), random[:150<<10]...),
	}
	for _, opts := range [][]zstd.EOption{
		{zstd.WithEncoderCRC(true)},
		{zstd.WithEncoderCRC(false)},
		{zstd.WithEncoderCRC(true), zstd.WithSingleSegment(true)},
		{zstd.WithEncoderCRC(true), zstd.WithEncoderLevel(zstd.SpeedBestCompression)},
	} {
		enc, err := zstd.NewWriter(nil, opts...)
		if err != nil {
			t.Fatal(err)
		}
		for name, content := range contents {
			frame := enc.EncodeAll(content, nil)
			stream := append(append([]byte{}, frame...), frame...)
			w := &frameWalker{br: bufio.NewReader(bytes.NewReader(stream))}
			fi, err := w.next()
			if err != nil || fi.skippable || fi.size != int64(len(frame)) {
				t.Errorf("%s: the walker found %d bytes (skippable %v, %v); the frame is %d bytes", name, fi.size, fi.skippable, err, len(frame))
			}
		}
		enc.Close()
	}
}
