package sessionref

import (
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
// root, the search texts' total size, the number of sessions, then the
// sessions in blocks of at most cacheBlockSessions. A block is its session
// count and byte length followed by each session's fields in the order of
// encodeSession, so LoadCache finds every block without decoding one and
// decodes them on all cores. Integers are varints, strings and maps are
// preceded by their lengths. It replaced gob, whose decoding was an eighth
// of a 100,000-session restart; any change to the fields bumps cacheFormat.

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

// encodeCache writes cf's body.
func encodeCache(w *bufio.Writer, cf *cacheFile) error {
	return encodeCacheBlocks(w, cf, cacheBlockSessions)
}

// encodeCacheBlocks writes cf's body in blocks of at most perBlock
// sessions (tests write smaller blocks than encodeCache).
func encodeCacheBlocks(w *bufio.Writer, cf *cacheFile, perBlock int) error {
	c := &cacheWriter{w: w}
	c.int(int64(cf.Format))
	c.string(cf.Root)
	c.int(int64(cf.SearchBytes))
	c.int(int64(len(cf.Sessions)))
	var block bytes.Buffer
	bc := &cacheWriter{w: &block}
	for lo := 0; lo < len(cf.Sessions) && c.err == nil; lo += perBlock {
		hi := min(lo+perBlock, len(cf.Sessions))
		block.Reset()
		for i := lo; i < hi; i++ {
			encodeSession(bc, &cf.Sessions[i])
		}
		c.int(int64(hi - lo))
		c.int(int64(block.Len()))
		c.bytes(block.Bytes())
	}
	return c.err
}

func encodeSession(c *cacheWriter, s *cachedSession) {
	c.string(s.ProjectName)
	c.string(s.DirName)
	c.string(s.LogName)
	c.int(s.DirModTime)
	e := &s.Entry
	c.string(e.ID)
	c.string(e.Cwd)
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
	c.int(s.File.Size)
	c.int(s.File.ModTime)
	c.int(int64(s.File.Inode))
	c.int(int64(s.File.Device))
	c.string(s.Skip)
	c.string(s.IdentityErr)
	c.bool(s.Started)
	c.int(int64(s.TailLen))
	c.bytes(s.TailSum[:])
	c.string(s.SearchAll)
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
	// cwds holds each cwd once for all its sessions, with its project
	// directory: one lookup per session finds both.
	cwds map[string]cachedCwd
	// logPath is the log of the session decoded last; its names are
	// substrings of it. search is that session's cached search text, still
	// part of the body; project is ProjectDir of its cwd.
	logPath string
	search  []byte
	project string
}

// cachedCwd is an interned cwd and ProjectDir of it.
type cachedCwd struct {
	cwd, project string
}

// newCacheLoad returns the decoding state for sessions under root.
func newCacheLoad(root string) *cacheLoad {
	return &cacheLoad{root: filepath.Clean(root), intern: map[string]string{}, cwds: map[string]cachedCwd{}}
}

// cwd returns b as a string, the same string for the same bytes, and sets
// ld.project to its project directory.
func (ld *cacheLoad) cwd(b []byte) string {
	c, ok := ld.cwds[string(b)] // no allocation to look up
	if !ok {
		s := string(b)
		c = cachedCwd{cwd: s, project: ProjectDir(s, true)}
		ld.cwds[s] = c
	}
	ld.project = c.project
	return c.cwd
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

// header reads the format, root, search text size and session count.
func (r *cacheReader) header() (format int, root string, searchBytes, sessions int) {
	format = r.small()
	root = r.string()
	searchBytes = r.countBeyond(1)
	sessions = r.countBeyond(minSessionBytes)
	return format, root, searchBytes, sessions
}

// blockHeader reads the next block's session count and size, which it
// checks the rest of the file can hold, and leaves the body unread.
func (r *cacheReader) blockHeader() (sessions, size int) {
	sessions = r.countBeyond(minSessionBytes)
	size = r.countBeyond(1)
	if r.err != nil {
		return 0, 0
	}
	if sessions == 0 || sessions > cacheBlockSessions || sessions > size/minSessionBytes {
		r.fail()
		return 0, 0
	}
	return sessions, size
}

// block reads the next block's session count and body, which it checks
// can hold that many sessions.
func (r *cacheReader) block() (sessions int, body []byte) {
	sessions = r.count(minSessionBytes)
	size := r.count(1)
	if r.err != nil {
		return 0, nil
	}
	if sessions == 0 || sessions > cacheBlockSessions || sessions > size/minSessionBytes {
		r.fail()
		return 0, nil
	}
	body = r.b[:size:size]
	r.b = r.b[size:]
	return sessions, body
}

// minSessionBytes is the fewest bytes one encoded session takes: a byte
// per varint field and empty string, and the 32-byte tail sum.
const minSessionBytes = 31 + 32

// session decodes one session into s, which it overwrites. With ld (as
// LoadCache decodes), the names become parts of the derived log path, the
// id shares the directory name's bytes when they are equal, cwds and
// origins are interned, and the search text is left in the body as
// ld.search instead of s.SearchAll: the same values in fewer strings.
func (r *cacheReader) session(s *cachedSession, ld *cacheLoad) {
	*s = cachedSession{}
	if ld == nil {
		s.ProjectName = r.string()
		s.DirName = r.string()
		s.LogName = r.string()
	} else {
		project, dir, log := r.raw(), r.raw(), r.raw()
		ld.names(s, project, dir, log)
	}
	s.DirModTime = r.int()
	e := &s.Entry
	if ld == nil {
		e.ID = r.string()
		e.Cwd = r.string()
	} else {
		if id := r.raw(); string(id) == s.DirName {
			e.ID = s.DirName
		} else {
			e.ID = string(id)
		}
		e.Cwd = ld.cwd(r.raw())
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
	s.File.Size = r.int()
	s.File.ModTime = r.int()
	s.File.Inode = uint64(r.int())
	s.File.Device = uint64(r.int())
	s.Skip = r.string()
	s.IdentityErr = r.string()
	s.Started = r.bool()
	s.TailLen = r.small()
	r.sum(s.TailSum[:])
	if ld == nil {
		s.SearchAll = r.string()
	} else {
		ld.search = r.raw()
	}
	s.SearchIDLen = r.small()
	s.SearchTitleLen = r.small()
	s.SearchDispLen = r.small()
}

// decodeCache decodes a whole cache body (tests and tools; LoadCache
// restores each session as it is decoded instead).
func decodeCache(body []byte) (*cacheFile, error) {
	r := &cacheReader{b: body}
	var cf cacheFile
	var n int
	cf.Format, cf.Root, cf.SearchBytes, n = r.header()
	for len(cf.Sessions) < n && r.err == nil {
		count, body := r.block()
		br := &cacheReader{b: body}
		for i := 0; i < count && br.err == nil; i++ {
			var s cachedSession
			br.session(&s, nil)
			cf.Sessions = append(cf.Sessions, s)
		}
		if br.err == nil && len(br.b) != 0 {
			br.err = fmt.Errorf("%d bytes after the last session of a block", len(br.b))
		}
		if r.err == nil {
			r.err = br.err
		}
	}
	if r.err == nil && len(cf.Sessions) != n {
		r.err = fmt.Errorf("%d sessions in the blocks, %d announced", len(cf.Sessions), n)
	}
	if r.err == nil && len(r.b) != 0 {
		r.err = fmt.Errorf("%d bytes after the last session", len(r.b))
	}
	return &cf, r.err
}
