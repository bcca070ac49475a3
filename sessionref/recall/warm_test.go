package recall

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/s2"

	"github.com/dsh-refls/dsh-refls/internal/dshgen"
)

// TestFirstBlocksOfTheNewestSessionsAreWarm: after a first build, the
// first block of each of the newest sessions is in the block cache, up to
// a quarter of it, and their later blocks are not, so that the quarter
// holds the first blocks of many sessions (here blocks of 32 KB with their
// folding: more than 48) rather than every block of a few; sessions past
// warmSessions are cold.
func TestFirstBlocksOfTheNewestSessionsAreWarm(t *testing.T) {
	n := warmSessions + 4
	var sessions []*dshgen.Session
	for i := range n {
		s := dshgen.NewSession(fmt.Sprintf("s-%03d", i)).CreatedAt(int64(1000 + i))
		for k := range 3 { // three blocks
			s.UserText(fmt.Sprintf("word%dx%d ", i, k) + strings.Repeat("filler text ", blockTarget/12+1))
		}
		sessions = append(sessions, s)
	}
	st := newStore(t, sessions...)
	// One worker: the sessions are read strictly newest first.
	rc := New(Options{Parallelism: 1})
	defer rc.Close()
	if err := rc.Sync(context.Background(), st.title.Snapshot()); err != nil {
		t.Fatal(err)
	}
	order := rc.cur.Load().order
	if len(order) != n {
		t.Fatalf("%d sessions indexed, want %d", len(order), n)
	}
	warm := 0
	for rank, d := range order { // newest first
		refs, err := d.refs()
		if err != nil || len(refs) != 3 {
			t.Fatalf("session %s: %d blocks (%v), want 3", d.id, len(refs), err)
		}
		first := rc.cache.get(cacheKey{file: d.data.id, off: refs[0].off}) != nil
		later := rc.cache.get(cacheKey{file: d.data.id, off: refs[1].off}) != nil ||
			rc.cache.get(cacheKey{file: d.data.id, off: refs[2].off}) != nil
		if later {
			t.Errorf("session %s (newest %d): a later block is warm", d.id, rank)
		}
		switch {
		case first && (rank >= warmSessions || rank != warm):
			t.Errorf("session %s (newest %d): first block warm after %d warm sessions", d.id, rank, warm)
		case first:
			warm++
		}
	}
	if warm < 48 {
		t.Errorf("the first blocks of %d sessions are warm, want the newest 48 at least", warm)
	}
	if c := rc.cache.size(); c > DefaultCacheBytes/4 {
		t.Errorf("warm blocks take %d bytes, more than a quarter of the cache", c)
	}
}

// TestStoredTextIsSyncedInTheBackground: an index that is stored starts a
// sync of its text file once syncEvery bytes were written since the last,
// and closing the file waits for it.
func TestStoredTextIsSyncedInTheBackground(t *testing.T) {
	d, err := createData(filepath.Join(t.TempDir(), "recall-x.idx"))
	if err != nil {
		t.Fatal(err)
	}
	d.wrote(syncEvery - 1)
	if d.syncing.Load() {
		t.Fatal("a sync started before syncEvery bytes were written")
	}
	d.wrote(1)
	d.mu.Lock()
	left := d.unsynced
	d.mu.Unlock()
	if left != 0 {
		t.Errorf("after a sync started, %d bytes count as unsynced, want 0", left)
	}
	if err := d.close(); err != nil {
		t.Fatal(err)
	}
	if d.syncing.Load() {
		t.Error("close returned while the background sync ran")
	}
}

// TestRecordsHoldTheirBlockInPieces: a record holds an encoded block of
// any size as S2 pieces of at most chunkMax bytes that decode to it; a
// piece length running past the record, a piece that does not decode,
// or a filter length running past the record, is an error, not a panic.
func TestRecordsHoldTheirBlockInPieces(t *testing.T) {
	for _, n := range []int{1, 100, chunkMax - 1, chunkMax, chunkMax + 1, 3*chunkMax + 5} {
		raw := make([]byte, n)
		for i := range raw {
			raw[i] = byte("abcdefgh ijk"[i*7%12]) ^ byte(i/chunkMax)
		}
		rec, size := appendRecord([]byte("prefix"), raw, nil)
		whole := rec[len("prefix")+recordHeaderLen:]
		if int(size) != len(whole) || int(binary.LittleEndian.Uint32(rec[len("prefix"):])) != len(whole) {
			t.Fatalf("%d bytes: record of %d bytes says %d, returns %d", n, len(whole), binary.LittleEndian.Uint32(rec[len("prefix"):]), size)
		}
		filter, body, err := splitRecord(whole)
		if err != nil || len(filter) != 0 {
			t.Fatalf("%d bytes: the record's filter is %x (%v), want none", n, filter, err)
		}
		// The filter's length (0, one byte) claims the whole record.
		if _, _, err := splitRecord(append(binary.AppendUvarint(nil, uint64(len(whole))), whole[1:]...)); err == nil {
			t.Errorf("%d bytes: a filter length running past the record split", n)
		}
		pieces := 0
		for rest := body; len(rest) > 0; pieces++ {
			k := int(binary.LittleEndian.Uint16(rest))
			if m, err := s2.DecodedLen(rest[2 : 2+k]); err != nil || m > chunkMax {
				t.Fatalf("%d bytes: piece %d decodes to %d bytes (%v)", n, pieces, m, err)
			}
			rest = rest[2+k:]
		}
		if want := (n + chunkMax - 1) / chunkMax; pieces != want {
			t.Errorf("%d bytes in %d pieces, want %d", n, pieces, want)
		}
		got, err := decodeChunks(body)
		if err != nil || !bytes.Equal(got, raw) {
			t.Fatalf("%d bytes: decoded %d bytes (%v), not the block", n, len(got), err)
		}
		if _, err := decodeChunks(body[:len(body)-1]); err == nil {
			t.Errorf("%d bytes: a record cut short decoded", n)
		}
		bad := bytes.Clone(body)
		bad[2] ^= 0xff // the first piece's S2 header
		if _, err := decodeChunks(bad); err == nil {
			t.Errorf("%d bytes: a damaged piece decoded", n)
		}
	}
}

// filterInto reads a record's pair filter alone, whether it fits in the
// first filterPrefix bytes read or not, and checks the filter's own
// checksum: a damaged filter is an error, while damage past the filter is
// found by the full read (record) only.
func TestFilterIsReadAlone(t *testing.T) {
	d, err := createData("")
	if err != nil {
		t.Fatal(err)
	}
	defer d.close()
	msgs := []rawMessage{{role: "user", seq: 1, text: "a few words of text"}}
	for _, n := range []int{0, 8, 512, filterPrefix, 3 * filterPrefix} {
		filter := make([]byte, n)
		for i := range filter {
			filter[i] = byte(i*7 + n)
		}
		rec, size := appendRecord(nil, encodeBlock(nil, msgs), filter)
		ref, err := d.append(rec[recordHeaderLen:])
		if err != nil || ref.n != size {
			t.Fatalf("appending a record of %d bytes: %v (%d)", size, err, ref.n)
		}
		got, _, err := d.filterInto(nil, ref)
		if err != nil || !bytes.Equal(got, filter) {
			t.Fatalf("filter of %d bytes read back as %d bytes (%v)", n, len(got), err)
		}
		// Damage past the filter: the filter still reads, the record not.
		last := ref.off + recordHeaderLen + int64(ref.n) - 1
		if _, err := d.f.WriteAt([]byte{0xff}, last); err != nil {
			t.Fatal(err)
		}
		if _, _, err := d.filterInto(nil, ref); err != nil {
			t.Errorf("filter of %d bytes with the record's last byte damaged: %v", n, err)
		}
		if _, err := d.record(ref); !errors.Is(err, errBlock) {
			t.Errorf("a record damaged past its filter of %d bytes read: %v", n, err)
		}
		if n == 0 {
			continue
		}
		// Damage inside the filter.
		k := int64(len(binary.AppendUvarint(nil, uint64(n))))
		if _, err := d.f.WriteAt([]byte{^filter[n/2]}, ref.off+recordHeaderLen+k+int64(n/2)); err != nil {
			t.Fatal(err)
		}
		if _, _, err := d.filterInto(nil, ref); !errors.Is(err, errBlock) {
			t.Errorf("a damaged filter of %d bytes read: %v", n, err)
		}
	}
}
