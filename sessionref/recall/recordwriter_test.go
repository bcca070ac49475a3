package recall

import (
	"bytes"
	"slices"
	"strings"
	"testing"
)

// TestAppendRecordOfIsAppendRecordOfTheEncoding: streaming a block's
// messages into a record writes the bytes that encoding the block whole
// and compressing it write, whatever falls on a piece's edge: varints,
// roles and texts cut across pieces, a text of several pieces, a block
// of exactly one piece, and a reused piece buffer.
func TestAppendRecordOfIsAppendRecordOfTheEncoding(t *testing.T) {
	long := strings.Repeat("0123456789abcdefghij", 3*chunkMax/20+7)
	blocks := map[string][]rawMessage{
		"one short message": {{role: "user", seq: 1, text: "hello"}},
		"an empty text":     {{role: "assistant", seq: -5, text: ""}},
		"a text of several pieces, between short ones": {
			{role: "user", seq: 1, text: "before"}, {role: "assistant", seq: 1 << 40, text: long}, {role: "user", seq: 3, text: "after"}},
		"texts that end on a piece's edge": edgeMessages(),
	}
	var piece []byte
	for name, msgs := range blocks {
		t.Run(name, func(t *testing.T) {
			filter := []byte{0x5a, 0xa5}
			want, wantN := appendRecord([]byte("prefix"), encodeBlock(nil, msgs), filter)
			got, p, gotN := appendRecordOf([]byte("prefix"), piece, msgs, filter)
			piece = p
			if gotN != wantN || !bytes.Equal(got, want) {
				t.Errorf("streamed record: %d bytes, body %d; encoded whole: %d bytes, body %d", len(got), gotN, len(want), wantN)
			}
			if cap(piece) > 2*chunkMax {
				t.Errorf("the piece buffer grew to %d bytes", cap(piece))
			}
			gotFilter, chunks, err := splitRecord(got[len("prefix")+recordHeaderLen:])
			if err != nil || !bytes.Equal(gotFilter, filter) {
				t.Fatalf("the record's filter reads back as %x (%v), want %x", gotFilter, err, filter)
			}
			raw, err := decodeChunks(chunks)
			if err != nil || !bytes.Equal(raw, encodeBlock(nil, msgs)) {
				t.Errorf("the streamed record reads back to %d bytes (%v), not the encoded block", len(raw), err)
			}
		})
	}
}

// decodeChunks is decodeChunksInto a new array.
func decodeChunks(b []byte) ([]byte, error) { return decodeChunksInto(nil, b) }

// readBlock reads and decodes the block at ref of d, as a search does,
// into memory of its own.
func readBlock(d *dataFile, ref blockRef, f *folder) (*textBlock, error) {
	rec, err := d.record(ref)
	if err != nil {
		return nil, err
	}
	var sc blockScratch
	return sc.decode(rec, ref, f)
}

// appendRecord appends the record of raw, an encoded block, with the
// pair filter filter, as the build wrote it before appendRecordOf: the reference the streamed record is
// compared with, and what tests and benchmarks that hold encoded blocks
// use.
func appendRecord(recs, raw, filter []byte) (out []byte, n uint32) {
	at := len(recs)
	recs = appendFilterSection(slices.Grow(recs, recordHeaderLen)[:at+recordHeaderLen], filter)
	for off := 0; off < len(raw); off += chunkMax {
		recs = appendChunk(recs, raw[off:min(len(raw), off+chunkMax)])
	}
	return closeRecord(recs, at)
}

// edgeMessages are three messages: the first's encoding fills exactly one
// piece, the second's nearly the next.
func edgeMessages() []rawMessage {
	// role "r" (1 + 1 bytes), seq 7 (1 byte), a text length of 2 bytes.
	first := rawMessage{role: "r", seq: 7, text: strings.Repeat("x", chunkMax-5)}
	second := rawMessage{role: "user", seq: 300, text: strings.Repeat("y", chunkMax-8)}
	return []rawMessage{first, second, {role: "assistant", seq: 9, text: "z"}}
}
