package sessionref

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// fullDecodeScan is what a full JSON decode of one event line says the
// title index must keep: the seq of the last event the line stands for
// (-1 when none) and, for a session/title event, the title. The line is
// read by decodeEnvelopeReference (a map of the members, keys matched
// exactly as dsh's JSON.parse(line).type reads them, integers as
// JavaScript's safe integers; FuzzDecodeEnvelope holds decodeEnvelope to
// it); the title scanner's fast paths must agree. encoding/json's
// struct decoding, used here before, also took "tYpe" for "type" and
// 2^53 + n for a seq: the fuzzer found both.
func fullDecodeScan(line []byte) (seq int64, title string, hasTitle bool) {
	seq = -1
	var e envelope
	if decodeEnvelopeReference(line, &e) != nil || e.Type == "" {
		return -1, "", false // an unparsable line changes nothing
	}
	if s, ok := e.lastSeq(); ok {
		seq = s
	}
	if e.Type == typeTitle {
		var d map[string]json.RawMessage
		var t string
		if json.Unmarshal(e.Data, &d) == nil && json.Unmarshal(d["title"], &t) == nil && string(d["title"]) != "null" {
			title, hasTitle = t, true
		}
	}
	return seq, title, hasTitle
}

func FuzzTitleScanner(f *testing.F) {
	for _, seed := range []string{
		titleEvent(6, "A title"),
		titleEvent(7, `quote " and \ backslash <tag>`),
		userMsg(3, "hello"),
		turnEnd(12),
		`{"type":"text-chunks","seq0":17,"time0":1,"data":{"turn":1,"step":1,"index":1,"dt":[3,0],"texts":["Hel","lo"," world"]}}`,
		`{"type":"tool-call-chunks","seq0":5,"time0":1,"data":{"id":"c","name":"read","dt":[1],"args":["{\"pa","th\":1}"]}}`,
		`{"type":"text-chunks","seq0":9,"data":{"texts":[]}}`,
		`{"seq":4,"type":"session/title","data":{"title":"key order"}}`,
		`{"type":"session\/title","seq":4,"data":{"title":"escaped type"}}`,
		`{"type":"session/title","seq":4,"data":{"title":5}}`,
		`{"type":"x","seq":-3}`,
		`{"type":"x","seq":1.5}`,
		`{"type":"x","seq":99999999999999999999}`,
		`not json`,
		``,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		entry := Entry{LastSeq: -1}
		s := titleScanner{entry: &entry}
		s.line(line)
		s.finish(line)
		seq, title, hasTitle := fullDecodeScan(line)
		if entry.LastSeq != seq {
			t.Errorf("line %q: scanner seq %d, full decode %d", line, entry.LastSeq, seq)
		}
		if entry.HasTitle != hasTitle || entry.Title != title {
			t.Errorf("line %q: scanner title %q (%v), full decode %q (%v)", line, entry.Title, entry.HasTitle, title, hasTitle)
		}
	})
}

func FuzzReadSessionLog(f *testing.F) {
	f.Add([]byte(rawLines([]string{v0Header, userMsg(0, "q"), assistantMsg(1, "a"), turnEnd(2)})))
	f.Add([]byte(rawLines([]string{v0Header, userMsg(0, "q"), `{"type":`, turnEnd(2)})))
	f.Add([]byte(rawLines([]string{v0Header, userMsg(0, "q"), eventLine(typeUserMessage, 1, map[string]any{"content": "x"}, opReplace(0, 0))})))
	f.Add([]byte(rawLines([]string{v0Header, eventLine(typeUserMessage, 1, map[string]any{}, opReplace(5, 0))})))
	f.Add([]byte(rawLines([]string{headerLine(headerSpec{ID: "s", Version: 4})})))
	zs, _ := zstdLog(v0Header, [][]string{{userMsg(0, "q")}})
	f.Add(zs)
	f.Add([]byte(v0Header))
	// One directory per fuzzing process: the fuzz function runs one input
	// at a time, so each input overwrites the same two files.
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, enc := range bothEncodings {
			path := filepath.Join(dir, logName(0, enc))
			if err := os.WriteFile(path, data, 0o600); err != nil {
				t.Fatal(err)
			}
			log, err := readSessionLog(context.Background(), path, enc, &frameDecoder{concurrency: 1})
			var ce *CorruptError
			var nv *newerVersionError
			var re *refusalError
			switch {
			case err == nil:
				if log.lastSeq < -1 && !strings.Contains(string(data), "-") {
					t.Errorf("%s: last seq %d", enc, log.lastSeq)
				}
				project(log.surface.items)
			case errors.As(err, &ce), errors.As(err, &nv), errors.As(err, &re):
			default:
				t.Errorf("%s: error %v (%T) is neither ok nor *CorruptError, a newer version or a v4 refusal", enc, err, err)
			}
		}
	})
}

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
		"line":         []byte(v0Header + "\n"),
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
