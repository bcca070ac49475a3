package titles

import (
	"github.com/dsh-refls/dsh-refls/sessionref/dshlog"
	"github.com/dsh-refls/dsh-refls/sessionref/dshlog/layout"

	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"sort"
	"strings"
)

// The cache body after cacheMagic is a flat binary encoding: the format and
// root, the number of sessions, the table of their cwds (its size, then
// each cwd once: a session names its cwd by number), then the sessions in
// blocks of at most cacheBlockSessions. A block's header holds its session
// count, how many of them are listed, the size of its search texts and its
// byte length, so LoadCache finds every block, and where each block's
// sessions, columns and texts go, without decoding one, and decodes them on
// all cores. A block's body is:
//   - each session's fields in the order of encodeSession;
//   - each session's search filters (byte set and pair set, 96 bytes of
//     little-endian words), so a restart does not compute them again;
//   - each session's search text followed by a NUL byte, as the columns
//     hold them, so a restart reads them straight into the columns' text.
//
// Integers are varints, strings and maps are preceded by their lengths. It
// replaced gob, whose decoding was an eighth of a 100,000-session restart;
// any change to the fields bumps cacheFormat.

// cacheBlockSessions is how many sessions one block of the cache holds:
// 25 blocks at 100,000 sessions, enough to keep every core busy.
const cacheBlockSessions = 4096

// errCacheTruncated reports a cache body that ends inside a value or
// announces more than it holds.
var errCacheTruncated = errors.New("truncated or inconsistent cache body")

// cacheWriter appends the flat encoding to a buffered writer.
type cacheWriter struct {
	w   byteWriter
	buf [binary.MaxVarintLen64]byte
	err error
}

// byteWriter is what the encoding is written to: the file's buffer, or a
// block's.
type byteWriter interface {
	Write(p []byte) (int, error)
	WriteString(s string) (int, error)
}

func (c *cacheWriter) int(v int64) {
	if c.err == nil {
		_, c.err = c.w.Write(c.buf[:binary.PutVarint(c.buf[:], v)])
	}
}

func (c *cacheWriter) bool(v bool) {
	b := int64(0)
	if v {
		b = 1
	}
	c.int(b)
}

func (c *cacheWriter) string(s string) {
	c.int(int64(len(s)))
	if c.err == nil {
		_, c.err = c.w.WriteString(s)
	}
}

func (c *cacheWriter) bytes(b []byte) {
	if c.err == nil {
		_, c.err = c.w.Write(b)
	}
}

// cacheSource is what the encoding writes: the format, the root and the
// sessions, each session's record filled in only as its block is written,
// so that a save never holds every record at once (a cacheFile's whole
// list of records was a 56 MB transient at 100,000 sessions).
type cacheSource interface {
	// header returns the format, the root and the number of sessions.
	header() (format int, root string, sessions int)
	// cwd returns the cwd of session i.
	cwd(i int) string
	// session fills s with the record of session i.
	session(i int, s *cachedSession)
}

func (cf *cacheFile) header() (int, string, int)      { return cf.Format, cf.Root, len(cf.Sessions) }
func (cf *cacheFile) cwd(i int) string                { return cf.Sessions[i].Entry.Cwd }
func (cf *cacheFile) session(i int, s *cachedSession) { *s = cf.Sessions[i] }

// encodeCache writes src's body.
func encodeCache(w *bufio.Writer, src cacheSource) error {
	return encodeCacheBlocks(w, src, cacheBlockSessions)
}

// encodeCacheBlocks writes src's body in blocks of at most perBlock
// sessions (tests write smaller blocks than encodeCache).
func encodeCacheBlocks(w *bufio.Writer, src cacheSource, perBlock int) error {
	c := &cacheWriter{w: w}
	format, root, n := src.header()
	c.int(int64(format))
	c.string(root)
	c.int(int64(n))
	numbers := map[string]int{}
	var table []string
	for i := range n {
		if cwd := src.cwd(i); !hasKey(numbers, cwd) {
			numbers[cwd] = len(table)
			table = append(table, cwd)
		}
	}
	var cwds, records, filters, texts bytes.Buffer
	cw, rw, fw := &cacheWriter{w: &cwds}, &cacheWriter{w: &records}, &cacheWriter{w: &filters}
	cw.int(int64(len(table)))
	for _, cwd := range table {
		cw.string(cwd)
	}
	c.int(int64(cwds.Len()))
	c.bytes(cwds.Bytes())
	var s cachedSession
	for lo := 0; lo < n && c.err == nil; lo += perBlock {
		hi := min(lo+perBlock, n)
		records.Reset()
		filters.Reset()
		texts.Reset()
		listed := 0
		for i := lo; i < hi; i++ {
			src.session(i, &s)
			if s.Skip == "" {
				listed++
			}
			cwd, ok := numbers[s.Entry.Cwd]
			if !ok { // src must give the cwd cwd(i) gave
				return fmt.Errorf("session %d: cwd %q not in the table", i, s.Entry.Cwd)
			}
			encodeSession(rw, &s, cwd)
			for _, v := range s.SearchByteSet {
				fw.uint64(v)
			}
			for _, v := range s.SearchPairSet {
				fw.uint64(v)
			}
			texts.WriteString(s.SearchAll)
			texts.WriteByte(0)
		}
		c.int(int64(hi - lo))
		c.int(int64(listed))
		c.int(int64(texts.Len()))
		c.int(int64(records.Len() + filters.Len() + texts.Len()))
		c.bytes(records.Bytes())
		c.bytes(filters.Bytes())
		c.bytes(texts.Bytes())
	}
	if c.err == nil {
		c.err = firstErr(cw.err, rw.err, fw.err)
	}
	return c.err
}

// hasKey reports whether m holds k.
func hasKey(m map[string]int, k string) bool {
	_, ok := m[k]
	return ok
}

// firstErr is the first of errs that is not nil.
func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// uint64 appends v as 8 little-endian bytes.
func (c *cacheWriter) uint64(v uint64) {
	if c.err == nil {
		_, c.err = c.w.Write(binary.LittleEndian.AppendUint64(c.buf[:0], v))
	}
}

// filterBytes is the size of one session's search filters in a block.
const filterBytes = 8 * (len(byteSet{}) + len(pairSet{}))

// encodeSession writes s's fields; cwd is the number of its cwd in the
// block's table.
func encodeSession(c *cacheWriter, s *cachedSession, cwd int) {
	c.string(s.ProjectName)
	c.string(s.DirName)
	c.string(s.LogName)
	c.int(s.DirModTime)
	e := &s.Entry
	c.string(e.ID)
	c.int(int64(cwd))
	c.bool(e.HasCwd)
	c.int(e.CreatedAt)
	c.string(e.ParentSession)
	c.string(e.Origin)
	c.int(int64(e.DelegationDepth))
	c.int(int64(e.FormatVersion))
	c.string(e.Title)
	c.bool(e.HasTitle)
	c.string(e.DescriptorLabel)
	c.string(e.CatalogLabel)
	keys := make([]string, 0, len(e.ChildLabels))
	for k := range e.ChildLabels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	c.int(int64(len(keys)))
	for _, k := range keys {
		c.string(k)
		c.string(e.ChildLabels[k])
	}
	c.int(int64(e.UnknownEvents))
	c.int(e.Offset)
	c.int(e.LastSeq)
	c.int(e.LastEventAt)
	c.string(e.Corrupt)
	c.string(e.WorkDir)
	c.int(int64(kindBits(e)))
	c.int(s.File.Size)
	c.int(s.File.ModTime)
	c.int(int64(s.File.Inode))
	c.int(int64(s.File.Device))
	c.string(s.Skip)
	c.string(s.IdentityErr)
	c.bool(s.Started)
	c.int(int64(s.TailLen))
	c.bytes(s.TailSum[:])
	c.int(int64(len(s.SearchAll)))
	c.int(int64(s.SearchIDLen))
	c.int(int64(s.SearchTitleLen))
	c.int(int64(s.SearchDispLen))
}

// cacheReader decodes the flat encoding from a buffer; the first error
// sticks and every later value reads as zero.
type cacheReader struct {
	b []byte
	// beyond is how many bytes of the file follow b when b is only its
	// head: counts of sessions and block sizes may reach into them.
	beyond int64
	err    error
}

// rest is how many bytes of the file are left after what r has read.
func (r *cacheReader) rest() int64 { return int64(len(r.b)) + r.beyond }

// countBeyond reads a count that must be at most what the rest of the
// file can hold, at least min bytes per item.
func (r *cacheReader) countBeyond(min int) int {
	v := r.int()
	if v < 0 || v > r.rest()/int64(min) {
		r.fail()
		return 0
	}
	return int(v)
}

func (r *cacheReader) int() int64 {
	if r.err != nil {
		return 0
	}
	if len(r.b) > 0 && r.b[0] < 0x80 {
		// One byte, as most of a session's fields are (flags, lengths,
		// counts): binary.Varint's zigzag decoding of it, inline.
		u := int64(r.b[0])
		r.b = r.b[1:]
		return u>>1 ^ -(u & 1)
	}
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.err = errCacheTruncated
		return 0
	}
	r.b = r.b[n:]
	return v
}

// count reads a length that must be at most what the rest of the body can
// hold, at least min bytes per item.
func (r *cacheReader) count(min int) int {
	v := r.int()
	if v < 0 || v > int64(len(r.b)/min) {
		r.fail()
		return 0
	}
	return int(v)
}

// small reads an int that must fit an int32 (counts, lengths, versions).
func (r *cacheReader) small() int {
	v := r.int()
	if v < math.MinInt32 || v > math.MaxInt32 {
		r.fail()
		return 0
	}
	return int(v)
}

func (r *cacheReader) fail() {
	if r.err == nil {
		r.err = errCacheTruncated
	}
}

func (r *cacheReader) bool() bool {
	v := r.int()
	if v != 0 && v != 1 {
		r.fail()
	}
	return v == 1
}

func (r *cacheReader) string() string {
	return string(r.raw())
}

// raw reads a string's bytes without copying them: they stay part of the
// body.
func (r *cacheReader) raw() []byte {
	n := r.count(1)
	if r.err != nil || n == 0 {
		return nil
	}
	b := r.b[:n:n]
	r.b = r.b[n:]
	return b
}

// cacheLoad is what LoadCache keeps while it decodes sessions: the root
// the paths are derived from and the strings that many sessions share.
type cacheLoad struct {
	root string // cleaned
	// intern holds origins, each once for all its sessions.
	intern map[string]string
	// logPath is the log of the session decoded last; its names are
	// substrings of it. project is layout.ProjectDir of its cwd.
	logPath string
	project string
}

// cachedCwd is a cwd of a block's table and layout.ProjectDir of it.
type cachedCwd struct {
	cwd, project string
}

// newCacheLoad returns the decoding state for sessions under root.
func newCacheLoad(root string) *cacheLoad {
	return &cacheLoad{root: filepath.Clean(root), intern: map[string]string{}}
}

// cwdTable reads the cache's table of cwds; with
// projects, each cwd's project directory is computed once for all the
// sessions that name it.
func (r *cacheReader) cwdTable(projects bool) []cachedCwd {
	n := r.count(1)
	t := make([]cachedCwd, 0, n)
	for i := 0; i < n && r.err == nil; i++ {
		c := cachedCwd{cwd: r.string()}
		if projects {
			c.project = layout.ProjectDir(c.cwd, true)
		}
		t = append(t, c)
	}
	return t
}

// interned returns b as a string, the same string for the same bytes.
func (ld *cacheLoad) interned(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if s, ok := ld.intern[string(b)]; ok { // no allocation to look up
		return s
	}
	s := string(b)
	ld.intern[s] = s
	return s
}

// names derives the log path from the root and the three names, in one
// string whose substrings the names become.
func (ld *cacheLoad) names(s *cachedSession, project, dir, log []byte) {
	const sep = string(filepath.Separator)
	var b strings.Builder
	b.Grow(len(ld.root) + len(project) + len(dir) + len(log) + 3)
	b.WriteString(ld.root)
	b.WriteString(sep)
	b.Write(project)
	b.WriteString(sep)
	b.Write(dir)
	b.WriteString(sep)
	b.Write(log)
	ld.logPath = b.String()
	at := len(ld.root) + 1
	s.ProjectName = ld.logPath[at : at+len(project)]
	at += len(project) + 1
	s.DirName = ld.logPath[at : at+len(dir)]
	at += len(dir) + 1
	s.LogName = ld.logPath[at:]
}

func (r *cacheReader) sum(dst []byte) {
	if r.err != nil {
		return
	}
	if len(r.b) < len(dst) {
		r.fail()
		return
	}
	copy(dst, r.b)
	r.b = r.b[len(dst):]
}

// header reads the format, root, session count and the size of the
// table of cwds that follows.
func (r *cacheReader) header() (format int, root string, sessions, cwdBytes int) {
	format = r.small()
	root = r.string()
	sessions = r.countBeyond(minSessionBytes)
	cwdBytes = r.countBeyond(1)
	return format, root, sessions, cwdBytes
}

// blockHead is what a block's header says: its session count, how many
// of those are listed, the size of its search texts and of its body.
type blockHead struct {
	sessions, listed, text, size int
}

// blockHeader reads the next block's header, which it checks the rest of
// the file can hold, and leaves the body unread.
func (r *cacheReader) blockHeader() blockHead {
	var h blockHead
	h.sessions = r.countBeyond(minSessionBytes)
	h.listed = r.countBeyond(1)
	h.text = r.countBeyond(1)
	h.size = r.countBeyond(1)
	if r.err != nil || !h.valid() {
		r.fail()
		return blockHead{}
	}
	return h
}

// valid reports whether a block of h.size bytes can hold what h says: at
// least one session, no more than a block holds, each session's fields,
// filters and text.
func (h *blockHead) valid() bool {
	return h.sessions > 0 && h.sessions <= cacheBlockSessions && h.listed <= h.sessions && h.text >= h.sessions &&
		h.sessions <= h.size/(minSessionBytes+filterBytes) && h.text <= h.size-h.sessions*(minSessionBytes+filterBytes)
}

// fieldsEnd is where a block's filters begin: its sessions' fields come
// before.
func (h *blockHead) fieldsEnd() int { return h.size - h.text - h.sessions*filterBytes }

// block reads the next block's header and body, which it checks holds
// what the header says (r holds the whole body: nothing lies beyond it).
func (r *cacheReader) block() (blockHead, []byte) {
	h := r.blockHeader()
	if r.err != nil || h.size > len(r.b) {
		r.fail()
		return blockHead{}, nil
	}
	body := r.b[:h.size:h.size]
	r.b = r.b[h.size:]
	return h, body
}

// minSessionBytes is the fewest bytes one encoded session's fields take: a
// byte per varint field and empty string, and the 32-byte tail sum.
const minSessionBytes = 32 + 32

// session decodes one session's fields into s and its entry into e (which
// it overwrites; &s.Entry but when LoadCache decodes straight into the
// snapshot's slice), and returns the length of its search text, which the
// block's texts hold, and the number of its cwd in cwds, the cache's
// table. With ld (as LoadCache decodes), the names become parts of the derived log path, the id shares
// the directory name's bytes when they are equal, origins are interned,
// and ld.project is set to the cwd's project directory: the same values in
// fewer strings.
func (r *cacheReader) session(s *cachedSession, e *dshlog.Entry, cwds []cachedCwd, ld *cacheLoad) (searchLen, cwd int) {
	*s = cachedSession{}
	*e = dshlog.Entry{}
	if ld == nil {
		s.ProjectName = r.string()
		s.DirName = r.string()
		s.LogName = r.string()
	} else {
		project, dir, log := r.raw(), r.raw(), r.raw()
		ld.names(s, project, dir, log)
	}
	s.DirModTime = r.int()
	if ld == nil {
		e.ID = r.string()
	} else if id := r.raw(); string(id) == s.DirName {
		e.ID = s.DirName
	} else {
		e.ID = string(id)
	}
	if c := r.int(); c >= 0 && c < int64(len(cwds)) {
		cwd = int(c)
		e.Cwd = cwds[c].cwd
		if ld != nil {
			ld.project = cwds[c].project
		}
	} else {
		r.fail()
	}
	e.HasCwd = r.bool()
	e.CreatedAt = r.int()
	e.ParentSession = r.string()
	if ld == nil {
		e.Origin = r.string()
	} else {
		e.Origin = ld.interned(r.raw())
	}
	e.DelegationDepth = r.small()
	e.FormatVersion = r.small()
	e.Title = r.string()
	e.HasTitle = r.bool()
	e.DescriptorLabel = r.string()
	e.CatalogLabel = r.string()
	if n := r.count(2); n > 0 {
		e.ChildLabels = make(map[string]string, n)
		for i := 0; i < n && r.err == nil; i++ {
			k := r.string()
			e.ChildLabels[k] = r.string()
		}
	}
	e.UnknownEvents = r.small()
	e.Offset = r.int()
	e.LastSeq = r.int()
	e.LastEventAt = r.int()
	e.Corrupt = r.string()
	e.WorkDir = r.string()
	if !setKindBits(e, r.int()) {
		r.fail()
	}
	s.File.Size = r.int()
	s.File.ModTime = r.int()
	s.File.Inode = uint64(r.int())
	s.File.Device = uint64(r.int())
	s.Skip = r.string()
	s.IdentityErr = r.string()
	s.Started = r.bool()
	s.TailLen = r.small()
	r.sum(s.TailSum[:])
	searchLen = r.small()
	s.SearchIDLen = r.small()
	s.SearchTitleLen = r.small()
	s.SearchDispLen = r.small()
	if searchLen < 0 {
		r.fail()
	}
	return searchLen, cwd
}

// The fields of Kind (kind.go) in one varint of the cache: the prompt in
// the low two bits, then Seeded and Described.
const (
	kindBitsPrompt   = 3
	kindBitSeeded    = 1 << 2
	kindBitDescribed = 1 << 3
)

// kindBits packs e's Prompt, Seeded and Described.
func kindBits(e *dshlog.Entry) int {
	b := int(e.Prompt)
	if e.Seeded {
		b |= kindBitSeeded
	}
	if e.Described {
		b |= kindBitDescribed
	}
	return b
}

// setKindBits unpacks kindBits into e; false when b holds bits or a prompt
// no writer gives.
func setKindBits(e *dshlog.Entry, b int64) bool {
	if b < 0 || b > kindBitsPrompt|kindBitSeeded|kindBitDescribed || dshlog.Prompt(b&kindBitsPrompt) > dshlog.PromptWebhook {
		return false
	}
	e.Prompt = dshlog.Prompt(b & kindBitsPrompt)
	e.Seeded, e.Described = b&kindBitSeeded != 0, b&kindBitDescribed != 0
	return true
}

// filters decodes one session's search filters from b, filterBytes long.
func filters(b []byte) (byteSet, pairSet) {
	var bs byteSet
	var ps pairSet
	for i := range bs {
		bs[i] = binary.LittleEndian.Uint64(b[8*i:])
	}
	b = b[8*len(bs):]
	for i := range ps {
		ps[i] = binary.LittleEndian.Uint64(b[8*i:])
	}
	return bs, ps
}
