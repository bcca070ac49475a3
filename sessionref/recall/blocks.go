package recall

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/klauspost/compress/s2"
)

// The text of every session lies on disk, never in memory as a whole: its
// messages, in conversation order, are cut into blocks of about
// blockTarget bytes at message boundaries (a message is never split, so
// every hit lies inside one block) and each block is compressed with S2
// and appended to the data file. A search reads back only the blocks of
// the sessions the postings leave, in order, until every term is found
// (blockcache.go keeps the most recently read ones decoded).
//
// Measured on dshgen text (40 sessions, 4.6 MB, 2 busy cores): S2 "better"
// keeps 37.8% of the bytes at 16 KB blocks and decodes one in 42 µs; zstd
// keeps 32.3% but takes 111 µs; 64 KB S2 blocks keep 34.3% but take
// 136 µs. A 16 KB block holds every word of a query in nearly every
// session, so the check of a session usually decodes one block.
const blockTarget = 16 << 10

// dataMagic starts a data file, followed by its 8-byte id, which the
// stored index names (persist.go).
const dataMagic = "dsh-refls recall text\n"

// dataHeaderLen is the size of a data file's header.
const dataHeaderLen = len(dataMagic) + 8

// recordHeaderLen is the size of a block record's header: the length of
// the compressed block and the CRC-32C of it, each 4 bytes little endian.
const recordHeaderLen = 8

// maxBlockBytes bounds a compressed block; a message larger than that
// (projected messages are bounded well below it) cannot be stored.
const maxBlockBytes = 1 << 30

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// errBlock wraps every reason a block cannot be read back.
var errBlock = errors.New("recall text block unreadable")

// blockRef is where one block of a session lies in the data file.
type blockRef struct {
	off int64  // of the record header
	n   uint32 // compressed bytes after the header
}

// dataFile is an append-only file of compressed blocks. Reads (ReadAt) may
// come from any goroutine; appends come from the one holding syncMu.
type dataFile struct {
	f    *os.File
	path string
	id   uint64
	// temp is set when the file is private to the index and removed
	// when it is closed (an index not stored anywhere).
	temp bool

	mu   sync.Mutex // guards size, the writes and unsynced
	size int64
	// unsynced counts the bytes written since the last background sync
	// began (syncEvery); syncing is set while one runs, and close waits
	// for it.
	unsynced int64
	syncing  atomic.Bool
	synced   sync.WaitGroup
}

// syncEvery is how many bytes a stored index's text file takes before it
// is synced to disk in the background, while the writes go on. A first
// build at 10,000 sessions writes 1.3 GB; what the system had not yet
// written back was left to the first save's sync: 0.8 s of writing, in
// which the searches right after the build took up to 24 ms (load 8).
const syncEvery = 64 << 20

// createData makes a new data file: beside stored (the stored index's
// path) when it is set, else a private temporary file. It is created
// exclusively with mode 0600.
func createData(stored string) (*dataFile, error) {
	dir, pattern, temp := filepath.Dir(stored), filepath.Base(strings.TrimSuffix(stored, filepath.Ext(stored)))+".*.dat", false
	if stored == "" {
		dir, pattern, temp = os.TempDir(), "dsh-refls-recall-*.dat", true
	} else if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("creating the recall index directory: %w", err)
	}
	f, err := os.CreateTemp(dir, pattern) // O_EXCL, mode 0600
	if err != nil {
		return nil, fmt.Errorf("creating the recall text file: %w", err)
	}
	var idb [8]byte
	if _, err := randRead(idb[:]); err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, err
	}
	d := &dataFile{f: f, path: f.Name(), id: binary.LittleEndian.Uint64(idb[:]), temp: temp}
	hdr := append([]byte(dataMagic), idb[:]...)
	if _, err := f.WriteAt(hdr, 0); err != nil {
		d.close()
		return nil, fmt.Errorf("writing the recall text file: %w", err)
	}
	d.size = int64(len(hdr))
	if temp {
		// Nothing but this index reads it; where the system allows, the
		// name goes at once and the file with the last descriptor.
		if os.Remove(f.Name()) == nil {
			d.temp = false
		}
	}
	return d, nil
}

// openData opens the data file at path, which must be a regular file (a
// link is refused), carry id and hold at least size bytes.
func openData(path string, id uint64, size int64) (*dataFile, error) {
	f, err := openReadWrite(path)
	if err != nil {
		return nil, err
	}
	hdr := make([]byte, dataHeaderLen)
	info, err := f.Stat()
	switch {
	case err != nil:
	case info.Size() < size || size < int64(dataHeaderLen):
		err = fmt.Errorf("holds %d bytes, %d expected", info.Size(), size)
	default:
		if _, err = f.ReadAt(hdr, 0); err == nil && (string(hdr[:len(dataMagic)]) != dataMagic || binary.LittleEndian.Uint64(hdr[len(dataMagic):]) != id) {
			err = errors.New("not the text file the index was saved with")
		}
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("recall text file %s: %w", path, err)
	}
	return &dataFile{f: f, path: path, id: id, size: info.Size()}, nil
}

// append writes one compressed block at the end of the file.
func (d *dataFile) append(block []byte) (blockRef, error) {
	if len(block) > maxBlockBytes {
		return blockRef{}, fmt.Errorf("a text block of %d bytes exceeds %d", len(block), maxBlockBytes)
	}
	rec := make([]byte, recordHeaderLen, recordHeaderLen+len(block))
	binary.LittleEndian.PutUint32(rec, uint32(len(block)))
	binary.LittleEndian.PutUint32(rec[4:], crc32.Checksum(block, castagnoli))
	rec = append(rec, block...)
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, err := d.f.WriteAt(rec, d.size); err != nil {
		return blockRef{}, fmt.Errorf("writing the recall text file: %w", err)
	}
	ref := blockRef{off: d.size, n: uint32(len(block))}
	d.size += int64(len(rec))
	return ref, nil
}

// appendRecords writes records laid out by appendRecordOf at the end of
// the file, in one write, and returns the offset of the first.
func (d *dataFile) appendRecords(recs []byte) (int64, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, err := d.f.WriteAt(recs, d.size); err != nil {
		return 0, fmt.Errorf("writing the recall text file: %w", err)
	}
	off := d.size
	d.size += int64(len(recs))
	return off, nil
}

// wrote counts n bytes written by an index that is stored and, past
// syncEvery since the last, starts a sync of the file in the background
// unless one is running.
func (d *dataFile) wrote(n int) {
	d.mu.Lock()
	d.unsynced += int64(n)
	due := d.unsynced >= syncEvery
	d.mu.Unlock()
	if !due || !d.syncing.CompareAndSwap(false, true) {
		return
	}
	d.mu.Lock()
	d.unsynced = 0
	d.mu.Unlock()
	d.synced.Add(1)
	go func() {
		defer d.synced.Done()
		defer d.syncing.Store(false)
		_ = d.f.Sync() // the save's own sync reports failures
	}()
}

// Size is the length of the file as written.
func (d *dataFile) Size() int64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.size
}

// record reads the record at ref, header included, checking its length
// and checksum.
func (d *dataFile) record(ref blockRef) ([]byte, error) { return d.recordInto(nil, ref) }

// recordInto is record into the array of dst.
func (d *dataFile) recordInto(dst []byte, ref blockRef) ([]byte, error) {
	rec := slices.Grow(dst[:0], recordHeaderLen+int(ref.n))[:recordHeaderLen+int(ref.n)]
	if _, err := d.f.ReadAt(rec, ref.off); err != nil {
		return nil, fmt.Errorf("%w: reading %d bytes at %d: %v", errBlock, len(rec), ref.off, err)
	}
	if binary.LittleEndian.Uint32(rec) != ref.n || binary.LittleEndian.Uint32(rec[4:]) != crc32.Checksum(rec[recordHeaderLen:], castagnoli) {
		return nil, fmt.Errorf("%w: the block at %d is damaged", errBlock, ref.off)
	}
	return rec, nil
}

// blockScratch is what a search reads blocks into before it knows
// whether they hold a hit: a block that holds none (one a pair filter let
// through by chance, or one of a session that turns out not to match)
// then costs no allocation, and only the blocks with a hit are copied
// into the cache (textBlock.clone). Allocating every block read made the
// collector's work land on the searches: a collection every 25 or so
// searches of a phrase of common words, the slowest of them twice the
// others (issue 31's benchmark, 10,000 sessions). A search has one, and
// leaves it to the next (Index.takeScratch).
type blockScratch struct {
	rec, raw, folded []byte
	b                textBlock
	refs             []blockRef // the block list of the session being read
	f                *folder    // the search's foldings, and excerptOf's space
}

// maxKeptScratch bounds the scratch space a search leaves to the next:
// one that a long block grew past it is left to the collector. A phrase
// of common words at 10,000 sessions grows it to about 180 KB, which
// every search allocated anew: 234 KB per search of `"session poll"`.
const maxKeptScratch = 1 << 20

// maxKeptFoldings bounds the foldings of runes a search leaves to the next
// (folder.cache): text in many scripts would grow it without end.
const maxKeptFoldings = 4096

// takeScratch returns the scratch space a finished search left, or a new
// one; keepScratch leaves it to the next search. Nothing a search returns
// points into it (excerpts and roles are copies; the cache keeps clones).
//
// One of them, the spare, is kept through collections of the heap; the
// others are in a sync.Pool, which the second collection after a Put
// empties. With the pool alone, a search after a minute without one
// (typing resumed; in issue 31's benchmark, the first timed round, after
// FTS5's) grew its scratch space anew in memory the runtime had given
// back: `"session poll"` at 10,000 sessions took 42.6 page faults
// instead of 2–4, and 0.15–0.2 ms more CPU at its median (in process,
// the heap given back with debug.FreeOSMemory between two searches).
func (ix *Index) takeScratch() *blockScratch {
	if sc := ix.spare.Swap(nil); sc != nil {
		return sc
	}
	if sc, ok := ix.scratches.Get().(*blockScratch); ok {
		return sc
	}
	return &blockScratch{f: newFolder()}
}

// keepScratch: see takeScratch.
func (ix *Index) keepScratch(sc *blockScratch) {
	if cap(sc.rec)+cap(sc.raw)+cap(sc.folded)+cap(sc.refs)*int(unsafe.Sizeof(blockRef{}))+
		4*cap(sc.f.u16s)+cap(sc.f.excerpt) > maxKeptScratch {
		return
	}
	if len(sc.f.cache) > maxKeptFoldings {
		clear(sc.f.cache)
	}
	if !ix.spare.CompareAndSwap(nil, sc) {
		ix.scratches.Put(sc)
	}
}

// decode decodes rec, the record at ref read with its header, into the
// scratch space, and returns the block, valid until the next decode.
func (sc *blockScratch) decode(rec []byte, ref blockRef, f *folder) (*textBlock, error) {
	filter, chunks, err := splitRecord(rec[recordHeaderLen:])
	if err != nil {
		return nil, fmt.Errorf("%w: the block at %d: %v", errBlock, ref.off, err)
	}
	if sc.raw, err = decodeChunksInto(sc.raw[:0], chunks); err != nil {
		return nil, fmt.Errorf("%w: the block at %d does not decode: %v", errBlock, ref.off, err)
	}
	if sc.folded, err = decodeBlockInto(&sc.b, sc.raw, sc.folded[:0], f); err != nil {
		return nil, fmt.Errorf("%w: the block at %d: %v", errBlock, ref.off, err)
	}
	sc.b.filter = filter
	return &sc.b, nil
}

// clone returns a copy of b that owns its memory: a block decoded into a
// blockScratch, as the cache keeps it.
func (b *textBlock) clone() *textBlock {
	raw := strings.Clone(b.raw)
	c := &textBlock{raw: raw, folded: strings.Clone(b.folded), filter: bytes.Clone(b.filter), msgs: make([]message, len(b.msgs))}
	for i, m := range b.msgs {
		m.role = raw[offsetIn(b.raw, m.role):][:len(m.role)]
		m.text = raw[offsetIn(b.raw, m.text):][:len(m.text)]
		c.msgs[i] = m
	}
	return c
}

// offsetIn is the offset of sub in s, of which it is a substring.
func offsetIn(s, sub string) int {
	if len(sub) == 0 {
		return 0
	}
	return int(uintptr(unsafe.Pointer(unsafe.StringData(sub))) - uintptr(unsafe.Pointer(unsafe.StringData(s))))
}

// splitRecord splits the body of a record into its pair filter (empty:
// none) and its compressed pieces, checking the filter's checksum.
func splitRecord(body []byte) (filter, chunks []byte, err error) {
	n, k := binary.Uvarint(body)
	if k <= 0 || n > uint64(len(body)-k) || len(body)-k-int(n) < filterSumLen {
		return nil, nil, errors.New("its pair filter runs past the record")
	}
	filter, sum := body[k:k+int(n)], body[k+int(n):]
	if binary.LittleEndian.Uint32(sum) != crc32.Checksum(filter, castagnoli) {
		return nil, nil, errors.New("its pair filter is damaged")
	}
	return filter, sum[filterSumLen:], nil
}

// filterSumLen is the length of a pair filter's checksum, which lets a
// search read the filter alone (filterInto).
const filterSumLen = 4

// filterPrefix is how much of a record filterInto reads first: the
// filter of a block of 16 KB of text and more (filterWords: 8.5% of it)
// with the record's header, its length and its checksum.
const filterPrefix = 4 << 10

// filterInto reads the pair filter of the record at ref into the array of
// dst, and not the rest of the record, checking the filter's checksum: a
// search that the filter spares then reads a tenth of the record (a
// filtered block of 28 KB of text: 2 KB of 12). It returns the filter
// and the buffer it read into.
func (d *dataFile) filterInto(dst []byte, ref blockRef) (filter, buf []byte, err error) {
	total := recordHeaderLen + int(ref.n)
	buf = slices.Grow(dst[:0], min(total, filterPrefix))[:min(total, filterPrefix)]
	if _, err := d.f.ReadAt(buf, ref.off); err != nil {
		return nil, buf, fmt.Errorf("%w: reading %d bytes at %d: %v", errBlock, len(buf), ref.off, err)
	}
	if binary.LittleEndian.Uint32(buf) != ref.n {
		return nil, buf, fmt.Errorf("%w: the block at %d is damaged", errBlock, ref.off)
	}
	n, k := binary.Uvarint(buf[recordHeaderLen:])
	if k <= 0 || n > uint64(total) {
		return nil, buf, fmt.Errorf("%w: the block at %d: its pair filter runs past the record", errBlock, ref.off)
	}
	need := recordHeaderLen + k + int(n) + filterSumLen
	if need > total {
		return nil, buf, fmt.Errorf("%w: the block at %d: its pair filter runs past the record", errBlock, ref.off)
	}
	if have := len(buf); need > have {
		buf = slices.Grow(buf, need-have)[:need]
		if _, err := d.f.ReadAt(buf[have:], ref.off+int64(have)); err != nil {
			return nil, buf, fmt.Errorf("%w: reading %d bytes at %d: %v", errBlock, need-have, ref.off+int64(have), err)
		}
	}
	filter = buf[recordHeaderLen+k : recordHeaderLen+k+int(n)]
	if binary.LittleEndian.Uint32(buf[need-filterSumLen:]) != crc32.Checksum(filter, castagnoli) {
		return nil, buf, fmt.Errorf("%w: the block at %d: its pair filter is damaged", errBlock, ref.off)
	}
	return filter, buf, nil
}

func (d *dataFile) close() error {
	d.synced.Wait()
	err := d.f.Close()
	if d.temp {
		os.Remove(d.path)
	}
	return err
}

// textBlock is one decoded block: its messages and their folding.
type textBlock struct {
	// raw is the encoded block, which the messages' strings are part of.
	raw  string
	msgs []message
	// folded holds the folding of every message, each followed by NUL.
	folded string
	// filter is the block's pair filter (pairs.go), empty when it has
	// none.
	filter []byte
}

// size is the memory the block holds.
func (b *textBlock) size() int64 {
	n := int64(len(b.folded)+len(b.filter)) + 88
	for _, m := range b.msgs {
		n += int64(len(m.text)+len(m.role)) + 48
	}
	return n
}

// message is one projected message and where its folding lies in its
// block's folded text.
type message struct {
	role         string
	seq          int64
	text         string
	fStart, fEnd int
	// ascii is set when text is all ASCII (excerpt offsets map 1:1).
	ascii bool
}

// encodeBlock lays out messages for a block: for each, the length of its
// role, the role, its seq, the length of its text and the text (lengths
// and seq as varints).
func encodeBlock(dst []byte, msgs []rawMessage) []byte {
	for _, m := range msgs {
		dst = binary.AppendUvarint(dst, uint64(len(m.role)))
		dst = append(dst, m.role...)
		dst = binary.AppendVarint(dst, m.seq)
		dst = binary.AppendUvarint(dst, uint64(len(m.text)))
		dst = append(dst, m.text...)
	}
	return dst
}

// rawMessage is a message as a block stores it.
type rawMessage struct {
	role string
	seq  int64
	text string
}

// decodeBlock parses raw, an encoded block, and folds its messages. The
// block's strings are slices of raw, which the caller hands over: it must
// never change afterwards (a search decodes into a new buffer each time;
// a build clones its reused one). Copying raw and the folding into strings
// of their own were two of the allocations of every block read back.
func decodeBlock(raw []byte, f *folder) (*textBlock, error) {
	b := &textBlock{}
	if _, err := decodeBlockInto(b, raw, make([]byte, 0, len(raw)+len(raw)/16), f); err != nil {
		return nil, err
	}
	return b, nil
}

// decodeBlockInto is decodeBlock into b, reusing its messages' array, with
// the folding appended to buf, which it returns: raw and buf must not
// change while b is used.
func decodeBlockInto(b *textBlock, raw, buf []byte, f *folder) ([]byte, error) {
	s := unsafe.String(unsafe.SliceData(raw), len(raw))
	b.raw, b.msgs, b.filter = s, b.msgs[:0], nil
	for i := 0; i < len(s); {
		var m message
		n, k := binary.Uvarint(raw[i:])
		if k <= 0 || n > uint64(len(s)-i-k) {
			return buf, errors.New("bad role length")
		}
		i += k
		m.role = s[i : i+int(n)]
		i += int(n)
		seq, k := binary.Varint(raw[i:])
		if k <= 0 {
			return buf, errors.New("bad seq")
		}
		i += k
		m.seq = seq
		n, k = binary.Uvarint(raw[i:])
		if k <= 0 || n > uint64(len(s)-i-k) {
			return buf, errors.New("bad text length")
		}
		i += k
		m.text = s[i : i+int(n)]
		i += int(n)
		m.fStart = len(buf)
		buf, m.ascii = f.appendFolding(buf, m.text)
		m.fEnd = len(buf)
		buf = append(buf, 0)
		b.msgs = append(b.msgs, m)
	}
	b.folded = unsafe.String(unsafe.SliceData(buf), len(buf)) // buf is not written again
	return buf, nil
}

// chunkMax bounds the bytes of an encoded block compressed as one S2
// block: S2 encodes inputs below 16 KiB with a hash table of 16 KiB, which
// stays in the processor's first cache, and larger ones with one of 64 KiB.
// On dshgen text (one core, load 10, A/B in one run): 16,320-byte pieces
// took 3.1-3.4 CPU-s per GB and kept 41.1% of the bytes, 16,384-byte ones
// 3.7-3.9 and 44.0%. Blocks hold whole messages, often larger than that.
const chunkMax = 16<<10 - 64

// appendRecordOf encodes msgs as one block (encodeBlock's bytes) and
// appends its record (header, the block's pair filter and compressed
// bytes) to recs; n is the length of its body. The body starts with the
// filter (appendFilterSection), then holds the encoded block in pieces of at
// most chunkMax bytes, each compressed with S2 on its own and preceded by
// its compressed length (2 bytes, little endian); decodeChunks reads them
// back. The encoding goes through piece, a buffer of chunkMax bytes that
// it returns for the next call, and each full piece is compressed: a
// block of one 32 MiB message took 32 MiB more, encoded whole first,
// beside the text it was encoded from.
//
// S2's fast mode, not "better": on dshgen text (300 sessions, 92 MB of
// blocks, thread CPU) better keeps 36.4% at 6.0 CPU-s per GB, fast 42.3%
// at 3.2 CPU-s per GB. Compression was a fifth of a first build's CPU,
// and 42% is within the on-disk bound of half the text.
func appendRecordOf(recs, piece []byte, msgs []rawMessage, filter []byte) (out, pieceOut []byte, n uint32) {
	at := len(recs)
	recs = slices.Grow(recs, recordHeaderLen)[:at+recordHeaderLen]
	w := recordWriter{recs: appendFilterSection(recs, filter), piece: piece[:0]}
	var v [binary.MaxVarintLen64]byte
	for _, m := range msgs {
		writePieces(&w, binary.PutUvarint(v[:], uint64(len(m.role))), v[:])
		writePieces(&w, len(m.role), m.role)
		writePieces(&w, binary.PutVarint(v[:], m.seq), v[:])
		writePieces(&w, binary.PutUvarint(v[:], uint64(len(m.text))), v[:])
		writePieces(&w, len(m.text), m.text)
	}
	if len(w.piece) > 0 {
		w.recs = appendChunk(w.recs, w.piece)
	}
	out, n = closeRecord(w.recs, at)
	return out, w.piece[:0], n
}

// appendFilterSection appends the first part of a record's body: the
// length of its pair filter (a uvarint), the filter and its CRC-32C (4
// bytes, little endian).
func appendFilterSection(recs, filter []byte) []byte {
	recs = append(binary.AppendUvarint(recs, uint64(len(filter))), filter...)
	return binary.LittleEndian.AppendUint32(recs, crc32.Checksum(filter, castagnoli))
}

// recordWriter cuts what appendRecordOf encodes into pieces of chunkMax
// bytes and appends each, compressed, to recs.
type recordWriter struct {
	recs, piece []byte
}

// writePieces writes s[:n] through w.
func writePieces[S ~string | ~[]byte](w *recordWriter, n int, s S) {
	s = s[:n]
	for len(s) > 0 {
		k := min(chunkMax-len(w.piece), len(s))
		w.piece = append(w.piece, s[:k]...)
		s = s[k:]
		if len(w.piece) == chunkMax {
			w.recs = appendChunk(w.recs, w.piece)
			w.piece = w.piece[:0]
		}
	}
}

// appendChunk appends piece, at most chunkMax bytes, compressed and
// preceded by its compressed length, to recs. It grows recs by one
// piece's worst case at a time: reserving every piece's at once took as
// much again as a long block that compresses to a fraction.
func appendChunk(recs, piece []byte) []byte {
	recs = slices.Grow(recs, 2+s2.MaxEncodedLen(len(piece)))
	k := len(recs)
	recs = recs[:k+2+s2.MaxEncodedLen(len(piece))]
	enc := s2.Encode(recs[k+2:], piece)
	binary.LittleEndian.PutUint16(recs[k:], uint16(len(enc)))
	return recs[:k+2+len(enc)]
}

// closeRecord writes the header of the record that starts at recs[at:]:
// its body's length and checksum.
func closeRecord(recs []byte, at int) ([]byte, uint32) {
	body := recs[at+recordHeaderLen:]
	binary.LittleEndian.PutUint32(recs[at:], uint32(len(body)))
	binary.LittleEndian.PutUint32(recs[at+4:], crc32.Checksum(body, castagnoli))
	return recs, uint32(len(body))
}

// decodeChunksInto decodes the pieces of a record's compressed bytes
// (appendRecordOf) into one encoded block, in the array of dst.
func decodeChunksInto(dst, b []byte) ([]byte, error) {
	size := 0
	for rest := b; len(rest) > 0; {
		if len(rest) < 2 || int(binary.LittleEndian.Uint16(rest))+2 > len(rest) {
			return nil, errors.New("a piece runs past the record")
		}
		n := int(binary.LittleEndian.Uint16(rest))
		m, err := s2.DecodedLen(rest[2 : 2+n])
		if err != nil || m > chunkMax {
			return nil, fmt.Errorf("a piece of %d bytes does not decode (%v)", m, err)
		}
		size += m
		rest = rest[2+n:]
	}
	out := slices.Grow(dst[:0], size)
	for rest := b; len(rest) > 0; {
		n := int(binary.LittleEndian.Uint16(rest))
		d, err := s2.Decode(out[len(out):cap(out)], rest[2:2+n])
		if err != nil {
			return nil, err
		}
		out = out[:len(out)+len(d)]
		rest = rest[2+n:]
	}
	return out, nil
}
