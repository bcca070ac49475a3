package recall

import (
	"bufio"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/dsh-refls/dsh-refls/sessionref/dshlog"
	"github.com/dsh-refls/dsh-refls/sessionref/titles"
)

// The stored index is two files beside the title-index cache:
//
//   - recall-<hash>.idx: storeMagic, then little-endian binary — the
//     format, the root, the name, id and length of the text file, the
//     number of slots, one record per session (its entry key: the log's
//     length and a hash of the rest; slot, sizes and block references),
//     the postings (per gram a delta-coded slot list or a bitset), and a
//     CRC-32C of all that. It is small (no text) and
//     rewritten whole at every save, through a temporary file and a rename.
//   - recall-<hash>.<random>.dat: the compressed text blocks (blocks.go),
//     appended to as sessions are read; each block carries its own CRC.
//
// A stored index of another format or root, or that is truncated, damaged
// or names a text file that is missing, shorter or of another id, is not
// used: the index is rebuilt from the logs and the files replaced at the
// next save. Loading reads the .idx file only (no text), so a warm start
// is searchable at once. Both files hold conversation text or what it is
// made of, so they are written 0600 in a 0700 directory
// (docs/reliability.md) and opened without following links.
const (
	storeMagic = "dsh-refls recall index\n"
	// storeFormat 6: a text record holds its block in S2 pieces of at
	// most chunkMax bytes (blocks.go); a format-5 index is rebuilt once.
	// 7: a record's body starts with the block's pair filter (pairs.go)
	// and the filter's checksum; a format-6 index is rebuilt once.
	storeFormat = 7
	// maxStoreBytes bounds what a stored .idx file may hold.
	maxStoreBytes = 1 << 31
)

// ErrStoreUnusable wraps every reason a stored index is not used.
var ErrStoreUnusable = errors.New("stored recall index unusable")

func randRead(b []byte) (int, error) {
	n, err := rand.Read(b)
	if err != nil {
		return n, fmt.Errorf("choosing a recall text file id: %w", err)
	}
	return n, nil
}

// DefaultPath is where the recall index of root is stored: beside the
// title-index cache (titles.DefaultCachePath), as recall-<hash>.idx
// (its text in recall-<hash>.*.dat beside it).
func DefaultPath(root string) (string, error) {
	p, err := titles.DefaultCachePath(root)
	if err != nil {
		return "", err
	}
	base := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(p), "index-"), filepath.Ext(p))
	return filepath.Join(filepath.Dir(p), "recall-"+base+".idx"), nil
}

// storedFiles are the files of the index stored at path that exist: the
// .idx file, its text files and the single file of the first format.
func storedFiles(path string) []string {
	prefix := strings.TrimSuffix(path, filepath.Ext(path))
	out := []string{path}
	if prefix+".zst" != path {
		out = append(out, prefix+".zst")
	}
	if m, err := filepath.Glob(globEscape(prefix) + ".*.dat"); err == nil {
		out = append(out, m...)
	}
	return out
}

func globEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Remove deletes every file of the index stored at path (recallSearch
// off: nothing that was said in sessions stays on disk). Missing files are
// not an error.
func Remove(path string) error {
	var err error
	for _, p := range storedFiles(path) {
		if e := os.Remove(p); e != nil && !errors.Is(e, os.ErrNotExist) {
			err = errors.Join(err, e)
		}
	}
	return err
}

// Changes counts the syncs and loads that changed the indexed documents;
// a caller saves when it moved since its last save.
func (ix *Index) Changes() uint64 { return ix.changes.Load() }

// Save writes the index of root to path: its text file is synced (first
// moved beside path when it lies elsewhere, or rewritten without the
// blocks no session uses when they outweigh the rest), then the .idx file
// is replaced atomically. A failed save leaves the old files in place.
func (ix *Index) Save(path, root string) error {
	ix.saveMu.Lock()
	defer ix.saveMu.Unlock()
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("creating the recall index directory: %w", err)
	}
	tmp, err := os.CreateTemp(dir, ".recall-*.tmp") // O_EXCL, mode 0600
	if err != nil {
		return fmt.Errorf("creating the recall index file: %w", err)
	}
	defer os.Remove(tmp.Name()) // nothing left to remove after the rename
	data, err := ix.prepareSave(path, root, tmp)
	if err == nil {
		// Syncs go on meanwhile: they only append to data, past what the
		// .idx file names. Both are on disk before the rename.
		if err = data.f.Sync(); err != nil {
			err = fmt.Errorf("syncing the recall text file: %w", err)
		}
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("writing the recall index %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("replacing the recall index %s: %w", path, err)
	}
	for _, p := range storedFiles(path)[1:] {
		if p != data.path {
			os.Remove(p) // an older text file, or the first format's file
		}
	}
	return nil
}

// prepareSave moves or compacts the text file when needed, merges the
// overlay and writes the .idx file to idx, holding syncMu; it returns the
// text file the .idx file names.
func (ix *Index) prepareSave(path, root string, idx io.Writer) (*dataFile, error) {
	ix.syncMu.Lock()
	defer ix.syncMu.Unlock()
	dir := filepath.Dir(path)
	prefix := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path)) + "."
	live := int64(0)
	for _, d := range ix.docs {
		live += d.stored
	}
	if ix.data == nil || ix.data.temp || filepath.Dir(ix.data.path) != dir || !strings.HasPrefix(filepath.Base(ix.data.path), prefix) ||
		ix.garbage > max(64<<20, live) || ix.dataElsewhere() {
		if err := ix.compact(path); err != nil {
			return nil, err
		}
	}
	if len(ix.overlay) > 0 {
		ix.merge()
		ix.publish()
	}
	if err := ix.writeStore(idx, root); err != nil {
		return nil, err
	}
	return ix.data, nil
}

// dataElsewhere reports whether a current document lies in a file other
// than the one new blocks go to (after a Load over an earlier index).
func (ix *Index) dataElsewhere() bool {
	for _, d := range ix.docs {
		if d.data != ix.data {
			return true
		}
	}
	return false
}

// compact copies the blocks of every current document into a new text
// file beside path, which new blocks then go to, and publishes documents
// that refer to it. The old file is kept open for searches of older views
// until the next compaction.
func (ix *Index) compact(path string) error {
	nd, err := createData(path)
	if err != nil {
		return err
	}
	docs := make(map[string]*doc, len(ix.docs))
	for id, d := range ix.docs {
		c := *d
		c.data = nd
		refs, err := d.refs()
		moved := make([]blockRef, 0, len(refs))
		for _, ref := range refs {
			rec, rerr := d.data.record(ref)
			if err = rerr; err == nil {
				var r blockRef
				if r, err = nd.append(rec[recordHeaderLen:]); err == nil {
					moved = append(moved, r)
				}
			}
			if err != nil {
				break
			}
		}
		if err == nil {
			err = c.setRefs(moved)
		}
		if errors.Is(err, errBlock) {
			// Damaged text: the session is read again from its log.
			c.setRefs(nil)
			ix.markBroken(id, err)
			err = nil
		}
		if err != nil {
			nd.close()
			os.Remove(nd.path)
			return err
		}
		docs[id] = &c
	}
	for _, old := range ix.retired {
		old.close()
	}
	ix.retired = nil
	for _, d := range ix.docs {
		if d.data != nil && d.data != ix.data && !slices.Contains(ix.retired, d.data) {
			ix.retired = append(ix.retired, d.data)
		}
	}
	if ix.data != nil {
		ix.retired = append(ix.retired, ix.data)
	}
	ix.docs, ix.data, ix.garbage = docs, nd, 0
	ix.publish()
	return nil
}

// storeWriter writes the .idx file in pieces: the layout of the whole
// file in one array (growing by doubling) was a 20 MB transient at 100,000
// sessions, beside a heap at its largest after a first build.
type storeWriter struct {
	w   *bufio.Writer
	crc hash.Hash32
	b   []byte
	err error
}

// storePiece is how much of the layout storeWriter holds before it
// writes it.
const storePiece = 64 << 10

// flush writes what is laid out once it reaches at least min bytes.
func (sw *storeWriter) flush(min int) {
	if len(sw.b) < min || sw.err != nil {
		return
	}
	sw.crc.Write(sw.b)
	_, sw.err = sw.w.Write(sw.b)
	sw.b = sw.b[:0]
}

// writeStore writes the .idx file to w: storeMagic, the body, and the
// CRC-32C of the body. The overlay is empty.
func (ix *Index) writeStore(w io.Writer, root string) error {
	bw := bufio.NewWriterSize(w, storePiece)
	if _, err := bw.WriteString(storeMagic); err != nil {
		return err
	}
	sw := &storeWriter{w: bw, crc: crc32.New(castagnoli), b: make([]byte, 0, 2*storePiece)}
	b := sw.b
	b = binary.LittleEndian.AppendUint32(b, storeFormat)
	b = appendString(b, root)
	b = appendString(b, filepath.Base(ix.data.path))
	b = binary.LittleEndian.AppendUint64(b, ix.data.id)
	b = binary.LittleEndian.AppendUint64(b, uint64(ix.data.Size()))
	b = binary.AppendUvarint(b, uint64(ix.tokBase.n))
	b = binary.AppendUvarint(b, uint64(len(ix.docs)))
	for _, d := range ix.docs {
		b = appendString(b, d.id)
		b = binary.AppendVarint(b, d.createdAt)
		b = binary.AppendVarint(b, d.key.offset)
		b = binary.LittleEndian.AppendUint64(b, d.key.sum)
		b = binary.AppendUvarint(b, uint64(d.slot))
		long := byte(0)
		if d.long {
			long = 1
		}
		b = append(b, long)
		b = binary.AppendUvarint(b, uint64(d.textBytes))
		b = binary.AppendUvarint(b, uint64(d.foldedBytes))
		b = binary.AppendUvarint(b, uint64(d.first))
		b = binary.AppendUvarint(b, uint64(d.stored))
		b = appendString(b, d.lens)
		sw.b = b
		sw.flush(storePiece)
		b = sw.b
	}
	b = binary.AppendUvarint(b, uint64(len(ix.dict.tokens)))
	for _, t := range ix.dict.tokens {
		b = appendString(b, t)
		sw.b = b
		sw.flush(storePiece)
		b = sw.b
	}
	sw.b = b
	sw.writePostings(ix.tokBase)
	sw.writePostings(ix.gramBase)
	sw.flush(0)
	if sw.err != nil {
		return sw.err
	}
	if _, err := bw.Write(binary.LittleEndian.AppendUint32(nil, sw.crc.Sum32())); err != nil {
		return err
	}
	return bw.Flush()
}

// writePostings lays out the keys of p in order, each with a bitset or a
// delta-coded slot list.
func (sw *storeWriter) writePostings(p *postings) {
	keys := make([]uint32, 0, p.size())
	p.each(func(x uint32, _ plist) { keys = append(keys, x) })
	slices.Sort(keys)
	b := binary.AppendUvarint(sw.b, uint64(len(keys)))
	for _, x := range keys {
		pl, _ := p.get(x)
		b = binary.AppendUvarint(b, uint64(x))
		if pl.bits != nil {
			b = append(b, 1)
			b = binary.AppendUvarint(b, uint64(len(pl.bits)))
			for _, w := range pl.bits {
				b = binary.LittleEndian.AppendUint64(b, w)
			}
		} else {
			b = append(b, 0)
			b = binary.AppendUvarint(b, uint64(len(pl.list)))
			prev := uint32(0)
			for _, s := range pl.list {
				b = binary.AppendUvarint(b, uint64(s-prev))
				prev = s
			}
		}
		sw.b = b
		sw.flush(storePiece)
		b = sw.b
	}
	sw.b = b
}

func appendString(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

// Load replaces the index with the one stored at path for root and
// publishes it, so searches are answered before the first Sync, which then
// projects again only the sessions whose logs changed. Only the .idx file
// is read; the text stays in its file. An unusable store (foreign, of
// another format or root, corrupt, its text file missing or shorter) is an
// error wrapping ErrStoreUnusable and leaves the index as it was.
func (ix *Index) Load(path, root string) error {
	f, err := dshlog.OpenRegular(path, "recall index")
	if err != nil {
		return err
	}
	raw, err := readAllSized(f)
	f.Close()
	if err != nil {
		return fmt.Errorf("reading the recall index %s: %w", path, err)
	}
	st, err := decodeStore(raw, root)
	if err == nil && (filepath.Base(st.dataName) != st.dataName || st.dataName == "." || st.dataName == "..") {
		err = fmt.Errorf("names the text file %q", st.dataName)
	}
	var data *dataFile
	if err == nil {
		data, err = openData(filepath.Join(filepath.Dir(path), st.dataName), st.dataID, st.dataSize)
	}
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrStoreUnusable, path, err)
	}
	ix.syncMu.Lock()
	defer ix.syncMu.Unlock()
	live := int64(0)
	for _, d := range st.docs {
		d.data = data
		live += d.stored
	}
	if ix.data != nil {
		ix.retired = append(ix.retired, ix.data)
	}
	ix.docs, ix.data, ix.garbage = st.docs, data, data.Size()-int64(dataHeaderLen)-live
	ix.dict, ix.tokBase, ix.gramBase = st.dict, st.tokens, st.grams
	ix.overlay, ix.nextSlot = map[int32]overlayDoc{}, int32(st.tokens.n)
	ix.failed, ix.cursors, ix.projected = map[string]entryKey{}, nil, 0
	ix.fresh, ix.resort = nil, true
	ix.changes.Add(1)
	ix.unchecked.Store(true)
	ix.publish()
	return nil
}

// readAllSized reads f whole (at most maxStoreBytes+1 bytes) into one
// buffer of its size, without the doublings of io.ReadAll.
func readAllSized(f *os.File) ([]byte, error) {
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	buf := make([]byte, 0, min(info.Size(), maxStoreBytes)+1)
	for {
		n, err := f.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
		if len(buf) == cap(buf) {
			if len(buf) > maxStoreBytes {
				return buf, nil // refused by the decoder
			}
			buf = append(buf, 0)[:len(buf)] // the file grew meanwhile
		}
	}
}

// decoded is a decoded .idx file.
type decoded struct {
	dataName string
	dataID   uint64
	dataSize int64
	docs     map[string]*doc
	dict     *dictionary
	tokens   *postings
	grams    *postings
}

// reader decodes the .idx body; the first error sticks.
type reader struct {
	b []byte
	// s is b as a string, so that strings read are slices of it, not
	// one allocation each.
	s   string
	err error
}

func (r *reader) fail(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf(format, args...)
	}
}

func (r *reader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.fail("truncated or bad number")
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) varint() int64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.fail("truncated or bad number")
		return 0
	}
	r.b = r.b[n:]
	return v
}

// count reads a count of items of at least each bytes.
func (r *reader) count(each int) int {
	n := r.uvarint()
	if n > uint64(len(r.b)/each) {
		r.fail("announces %d items in %d bytes", n, len(r.b))
		return 0
	}
	return int(n)
}

func (r *reader) fixed(n int) []byte {
	if r.err != nil {
		return make([]byte, n)
	}
	if len(r.b) < n {
		r.fail("truncated")
		return make([]byte, n)
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v
}

func (r *reader) str() string {
	n := r.count(1)
	if r.err != nil {
		return ""
	}
	at := len(r.s) - len(r.b)
	r.b = r.b[n:]
	return r.s[at : at+n]
}

// keepStrings copies the strings st keeps (ids, block lists, tokens) into
// one string of their own: as slices of the file's body they kept all of
// it (paths, postings: several MB at 100,000 sessions) alive.
func (st *decoded) keepStrings() {
	docs := make([]*doc, 0, len(st.docs))
	n := 0
	for _, d := range st.docs {
		docs = append(docs, d)
		n += len(d.id) + len(d.lens)
	}
	for _, t := range st.dict.tokens {
		n += len(t)
	}
	var b strings.Builder
	b.Grow(n)
	for _, d := range docs {
		b.WriteString(d.id)
		b.WriteString(d.lens)
	}
	for _, t := range st.dict.tokens {
		b.WriteString(t)
	}
	all, at := b.String(), 0
	cut := func(s string) string {
		at += len(s)
		return all[at-len(s) : at]
	}
	byID := make(map[string]*doc, len(docs))
	for _, d := range docs {
		d.id = cut(d.id)
		d.lens = cut(d.lens)
		byID[d.id] = d
	}
	for i, t := range st.dict.tokens {
		st.dict.tokens[i] = cut(t) // the same bytes: the ids still find it
	}
	st.docs = byID
}

func decodeStore(raw []byte, root string) (*decoded, error) {
	if len(raw) > maxStoreBytes {
		return nil, fmt.Errorf("larger than %d bytes", maxStoreBytes)
	}
	if len(raw) < len(storeMagic) || string(raw[:len(storeMagic)]) != storeMagic { // no copy of raw
		return nil, errors.New("not a dsh-refls recall index")
	}
	body := raw[len(storeMagic):]
	if len(body) < 8 {
		return nil, errors.New("truncated")
	}
	if format := binary.LittleEndian.Uint32(body); format != storeFormat {
		return nil, fmt.Errorf("format %d, want %d", format, storeFormat)
	}
	sum := body[len(body)-4:]
	body = body[:len(body)-4]
	if binary.LittleEndian.Uint32(sum) != crc32.Checksum(body, castagnoli) {
		return nil, errors.New("checksum mismatch (truncated or damaged)")
	}
	r := &reader{b: body[4:], s: string(body[4:])}
	st := &decoded{}
	if got := r.str(); r.err == nil && got != root {
		return nil, fmt.Errorf("indexes %s, not %s", got, root)
	}
	st.dataName = r.str()
	st.dataID = binary.LittleEndian.Uint64(r.fixed(8))
	st.dataSize = int64(binary.LittleEndian.Uint64(r.fixed(8)))
	nSlots := r.uvarint()
	if nSlots > 1<<31 {
		r.fail("announces %d slots", nSlots)
	}
	nDocs := r.count(8)
	st.docs = make(map[string]*doc, nDocs)
	seenSlot := make(map[uint64]bool, nDocs)
	for i := 0; i < nDocs && r.err == nil; i++ {
		d := &doc{id: r.str(), createdAt: r.varint()}
		d.key.offset = r.varint()
		d.key.sum = binary.LittleEndian.Uint64(r.fixed(8))
		slot := r.uvarint()
		d.long = r.fixed(1)[0] == 1
		d.textBytes, d.foldedBytes = size32(int64(r.uvarint())), size32(int64(r.uvarint()))
		first, stored := r.uvarint(), r.uvarint()
		d.first, d.stored, d.lens = int64(first), int64(stored), r.str()
		if stored > 0 && (first < uint64(dataHeaderLen) || first+stored > uint64(st.dataSize) || uint64(len(d.lens)) > stored) {
			r.fail("session %q has blocks outside its text file", d.id)
		}
		switch {
		case r.err != nil:
		case d.id == "" || st.docs[d.id] != nil:
			r.fail("session %d has an empty or repeated id %q", i+1, d.id)
		case slot >= nSlots || seenSlot[slot]:
			r.fail("session %q has slot %d of %d", d.id, slot, nSlots)
		}
		seenSlot[slot] = true
		d.slot = int32(slot)
		st.docs[d.id] = d
	}
	st.dict = newDictionary()
	nTokens := r.count(1)
	for i := 0; i < nTokens && r.err == nil; i++ {
		t := r.str()
		if _, dup := st.dict.ids.find(st.dict.tokens, t); dup || len(t) > maxTokenBytes {
			r.fail("token %d repeated or too long", i)
			break
		}
		st.dict.tokens = append(st.dict.tokens, t)
		st.dict.ids.add(st.dict.tokens, uint32(i))
	}
	st.tokens = r.postings(int(nSlots), uint64(nTokens), true)
	st.grams = r.postings(int(nSlots), 1<<24, false)
	if r.err == nil && len(r.b) != 0 {
		r.fail("%d bytes after the postings", len(r.b))
	}
	if r.err != nil {
		return nil, r.err
	}
	st.keepStrings()
	return st, nil
}

// postings reads what appendPostings wrote, over nSlots slots, with keys
// below maxKey, by key (dense: token ids) or by map.
func (r *reader) postings(nSlots int, maxKey uint64, dense bool) *postings {
	b := &postings{n: nSlots, m: map[uint32]plist{}}
	if dense {
		// maxKey is the dictionary's length, which the store held.
		b = &postings{n: nSlots}
		b.initDense(int(maxKey), true)
	}
	prev := int64(-1)
	// closeTo closes the keys of dense postings below k: their lists end
	// where slots ends now.
	closeTo := func(k int64) {
		for ; prev+1 < k; prev++ {
			b.offs[prev+2] = uint32(len(b.slots))
		}
	}
	words := (nSlots + 63) / 64
	n := r.count(3)
	for i := 0; i < n && r.err == nil; i++ {
		x := r.uvarint()
		kind := r.fixed(1)[0]
		if dense && x < maxKey {
			// The keys were written in increasing order.
			if int64(x) <= prev {
				r.fail("key %#x out of order", x)
				break
			}
			closeTo(int64(x))
		}
		var pl plist
		switch {
		case x >= maxKey:
			r.fail("posting key %#x", x)
		case kind == 1:
			n := r.count(8)
			if n > words {
				r.fail("a bitset of %d words over %d slots", n, nSlots)
			}
			pl.bits = make([]uint64, n)
			for k := range pl.bits {
				pl.bits[k] = binary.LittleEndian.Uint64(r.fixed(8))
			}
			b.bytes += int64(n * 8)
		case kind == 0:
			n := r.count(1)
			if dense {
				// Straight into the one array of lists, after the keys
				// before it.
				at := len(b.slots)
				b.slots = slices.Grow(b.slots, n)[:at+n]
				pl.list = b.slots[at:]
			} else {
				pl.list = make([]uint32, n)
			}
			s := uint64(0)
			for k := range pl.list {
				delta := r.uvarint()
				if k > 0 && delta == 0 {
					r.fail("a slot list out of order")
				}
				s += delta
				if s >= uint64(nSlots) {
					r.fail("slot %d of %d", s, nSlots)
				}
				pl.list[k] = uint32(s)
			}
			b.bytes += int64(n * 4)
		default:
			r.fail("posting kind %d", kind)
		}
		if dense {
			if r.err != nil {
				break
			}
			if pl.bits != nil {
				b.setBits(uint32(x), pl.bits)
			}
			b.offs[x+1] = uint32(len(b.slots))
			prev = int64(x)
			continue
		}
		if _, dup := b.m[uint32(x)]; dup {
			r.fail("key %#x twice", x)
		}
		b.m[uint32(x)] = pl
	}
	if dense && r.err == nil {
		closeTo(int64(maxKey))
	}
	return b
}
