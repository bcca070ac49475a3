package sessionref

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"
)

// cacheMagic opens every index cache file; cacheFormat changes whenever the
// cached structures do, so an old or foreign file is discarded, never
// trusted.
const (
	cacheMagic  = "dsh-refls title index\n"
	cacheFormat = 12 // 7: search texts folded with full Unicode case mapping; 8: search text parts as lengths; 9: Entry.LastEventAt; 10: flat binary body (cachecodec.go) instead of gob; 11: the search texts' total size in the header, sessions in snapshot order; 12: sessions in blocks of known size, decoded in parallel
)

// maxCacheBytes bounds the cache file LoadCache reads (about 40 MB hold
// 100,000 sessions); a larger file is refused as unusable.
const maxCacheBytes = 1 << 30

// cacheHeadBytes is how much of the cache file LoadCache reads first: its
// header (the root's path among it) fits; the blocks are read where they
// lie.
const cacheHeadBytes = 64 << 10

// staleTempAge is how old a leftover temporary cache file (of a save that
// was killed) must be before a save removes it: younger ones may belong to
// a save still running in another process on the same root.
const staleTempAge = 10 * time.Minute

// cacheTempPattern names the temporary file a save writes before renaming it.
const cacheTempPattern = ".index-*.tmp"

// cachedSession is one tracked session as the cache stores it. It holds no
// path: the log's path is derived from the root and the two directory names
// on load, each checked to be one plain name, and a listed entry's id and
// cwd must encode to those names. It holds no message body either: the bytes
// before the resume offset are kept only as their SHA-256 (SPEC §1.5).
type cachedSession struct {
	ProjectName string
	DirName     string
	LogName     string
	DirModTime  int64
	Entry       Entry
	File        fileIdentity
	Skip        string
	IdentityErr string
	Started     bool
	TailLen     int
	TailSum     [sha256.Size]byte
	// SearchAll is the entry's lowercased search text, so a restart does not
	// lowercase every title again; the id, title and display title are
	// parts of it of the given lengths (see newSearchText), taken as
	// substrings on load so each session's search text is one string.
	SearchAll                                  string
	SearchIDLen, SearchTitleLen, SearchDispLen int
}

// cacheFile is the whole cache.
type cacheFile struct {
	Format int
	Root   string
	// SearchBytes is the size of the sessions' search texts together, so
	// LoadCache sizes their one string at once.
	SearchBytes int
	Sessions    []cachedSession
}

// DefaultCachePath is where the index of root is cached: the user cache
// dir + dsh-refls/index-<hash of root>.gob.
func DefaultCachePath(root string) (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("finding the user cache dir: %w", err)
	}
	sum := sha256.Sum256([]byte(root))
	return filepath.Join(dir, "dsh-refls", "index-"+hex.EncodeToString(sum[:8])+".gob"), nil
}

// SaveCache writes the index state to path atomically: a private temporary
// file in the same directory, synced, then renamed over the old one. A
// failed write leaves the old cache in place and removes the temporary
// file; temporary files that killed saves left behind are removed. When
// nothing changed since this index loaded or saved path (a restart that
// found every log as cached), the file already holds this state and is
// not written again.
func (ix *Index) SaveCache(path string) error {
	ix.writeMu.Lock()
	if path == ix.saved && ix.changes == ix.savedAt && !ix.dirty {
		ix.writeMu.Unlock()
		return nil
	}
	changes := ix.changes
	// Saved in the order of a snapshot, so the snapshot published on load
	// need not sort.
	order := make([]*tracked, 0, len(ix.tracked))
	for _, t := range ix.tracked {
		order = append(order, t)
	}
	var ids idOrder
	sort.Slice(order, func(i, j int) bool { return listedBefore(order[i], order[j], &ids) })
	cf := cacheFile{Format: cacheFormat, Root: ix.root, Sessions: make([]cachedSession, 0, len(order))}
	for _, t := range order {
		cs := cachedSession{
			ProjectName: t.dir.projectName(), DirName: t.dir.dirName(), LogName: filepath.Base(t.dir.log.path),
			DirModTime: t.dir.dirModTime, Entry: *t.entry, File: t.file, Skip: t.skipReason(), IdentityErr: t.identityErr(),
			Started: t.started, TailLen: int(t.tailLen), TailSum: t.tailSum,
		}
		if t.skipReason() == "" {
			st := ix.searchOf(t)
			cs.SearchAll, cs.SearchIDLen, cs.SearchTitleLen, cs.SearchDispLen = st.all, len(st.id), len(st.title), len(st.display)
			cf.SearchBytes += len(st.all) + 1
		}
		cs.Entry.Path = "" // derived on load
		cf.Sessions = append(cf.Sessions, cs)
	}
	ix.writeMu.Unlock()
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("creating cache directory: %w", err)
	}
	removeStaleTemps(dir, time.Now())
	tmp, err := os.CreateTemp(dir, cacheTempPattern) // O_EXCL, mode 0600
	if err != nil {
		return fmt.Errorf("creating cache file: %w", err)
	}
	defer os.Remove(tmp.Name()) // after a successful rename there is nothing to remove
	err = writeCache(tmp, &cf)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("writing cache %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("replacing cache %s: %w", path, err)
	}
	ix.writeMu.Lock()
	ix.saved, ix.savedAt = path, changes
	ix.writeMu.Unlock()
	return nil
}

// writeCache writes the magic and the encoded cache to f and syncs it; the
// first error stops it.
func writeCache(f *os.File, cf *cacheFile) error {
	w := bufio.NewWriter(f)
	if _, err := io.WriteString(w, cacheMagic); err != nil {
		return err
	}
	if err := encodeCache(w, cf); err != nil {
		return fmt.Errorf("encoding: %w", err)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	return f.Sync()
}

// removeStaleTemps removes temporary cache files older than staleTempAge
// from dir: regular files only, found by name, never followed through a
// link.
func removeStaleTemps(dir string, now time.Time) {
	names, err := filepath.Glob(filepath.Join(dir, cacheTempPattern))
	if err != nil {
		return
	}
	for _, name := range names {
		info, err := os.Lstat(name)
		if err != nil || !info.Mode().IsRegular() || now.Sub(info.ModTime()) < staleTempAge {
			continue
		}
		_ = os.Remove(name)
	}
}

// ErrCacheUnusable reports a cache file that is corrupt, of another format,
// of another root, or that names a log it could not have been written for.
// The index is then built from the logs.
var ErrCacheUnusable = errors.New("index cache unusable")

// LoadCache fills an index that has not been built yet from a cache file.
// The cache only tells where reading may resume: the next Build stats
// every log and reads what changed, so a stale cache costs reads, never
// correctness. Paths are never taken from the cache: each is derived from
// the root and names checked to be plain, and a listed entry must carry
// the id and cwd its directories encode. A missing file returns an error
// wrapping os.ErrNotExist; anything but a regular file is refused without
// blocking.
func (ix *Index) LoadCache(path string) error {
	f, err := openRegularAs(path, "index cache")
	if err != nil {
		return err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return fmt.Errorf("reading index cache %s: %w", path, err)
	}
	if info.Size() > maxCacheBytes {
		return fmt.Errorf("%w: %s is %d bytes, more than %d", ErrCacheUnusable, path, info.Size(), maxCacheBytes)
	}
	// The file is never held whole: the head holds the header, and each
	// block is read where it lies by the goroutine that decodes it, into a
	// buffer that goroutine reuses (100,000 sessions: 38 MB less to
	// allocate while the index itself is being allocated).
	size := info.Size()
	head := make([]byte, min(size, cacheHeadBytes))
	if _, err := f.ReadAt(head, 0); err != nil {
		return fmt.Errorf("reading index cache %s: %w", path, err)
	}
	if !bytes.HasPrefix(head, []byte(cacheMagic)) {
		return fmt.Errorf("%w: %s is not a dsh-refls index cache", ErrCacheUnusable, path)
	}
	r := &cacheReader{b: head[len(cacheMagic):], beyond: size - int64(len(head))}
	format, root, searchBytes, count := r.header()
	if r.err != nil {
		return fmt.Errorf("%w: decoding %s: %v", ErrCacheUnusable, path, r.err)
	}
	if format != cacheFormat {
		return fmt.Errorf("%w: %s has format %d, want %d", ErrCacheUnusable, path, format, cacheFormat)
	}
	if root != ix.root {
		return fmt.Errorf("%w: %s indexes %s, not %s", ErrCacheUnusable, path, root, ix.root)
	}
	var blocks []cacheBlock
	off := size - r.rest()
	var hdr [2 * binary.MaxVarintLen64]byte
	for sessions := 0; sessions < count; {
		got, err := f.ReadAt(hdr[:], off)
		if err != nil && err != io.EOF {
			return fmt.Errorf("reading index cache %s: %w", path, err)
		}
		br := &cacheReader{b: hdr[:got], beyond: size - off - int64(got)}
		n, blockSize := br.blockHeader()
		if br.err != nil {
			return fmt.Errorf("%w: decoding %s: %v", ErrCacheUnusable, path, br.err)
		}
		off = size - br.rest()
		blocks = append(blocks, cacheBlock{sessions: n, off: off, size: blockSize})
		off += int64(blockSize)
		sessions += n
		if sessions > count {
			return fmt.Errorf("%w: %s holds more sessions than it announces", ErrCacheUnusable, path)
		}
	}
	if off != size {
		return fmt.Errorf("%w: %s has %d bytes after its last session", ErrCacheUnusable, path, size-off)
	}
	ix.restoreBlocks(f, blocks, count, searchBytes)
	for i := range blocks {
		if err := blocks[i].err; err != nil {
			return fmt.Errorf("%w: %s: %v", ErrCacheUnusable, path, err)
		}
	}
	// The writer's map of sessions and the snapshot's map of ids are built
	// on other goroutines (the cores the restore used) while the snapshot
	// is; a directory listed twice refuses the cache before anything is
	// published.
	mapped := make(chan trackedMap, 1)
	go func() { mapped <- mapTracked(blocks, count, path) }()
	positioned := make(chan listedIDs, 1)
	go func() { positioned <- positionIDs(blocks, count) }()
	var ids *listedIDs
	waitIDs := func() *listedIDs {
		if ids == nil {
			p := <-positioned
			ids = &p
		}
		return ids
	}
	order := make([]*tracked, 0, count)
	cols := newColumnsBuilder(count, min(searchBytes, int(size)))
	for i := range blocks {
		b := &blocks[i]
		colBase := int32(cols.len())
		cols.append(&b.cols)
		for k := range b.tracked {
			t := &b.tracked[k]
			if t.col > 0 {
				t.col += colBase
			}
			order = append(order, t)
		}
	}
	ix.writeMu.Lock()
	wasCols, wasChanges, wasDirty := ix.cols, ix.changes, ix.dirty
	ix.cols = cols.done()
	snap := ix.restoredSnapshotLocked(true, order, func() (map[string]int, bool) {
		p := waitIDs()
		return p.pos, p.repeated == 0
	})
	if snap == nil {
		waitIDs() // it reads the entries snapshotLocked replaces
		snap = ix.snapshotLocked(true, order)
	}
	waitIDs()
	tm := <-mapped
	loaded, err := tm.tracked, tm.err
	if err != nil {
		// Nothing was published: the index is as it was, unbuilt.
		ix.cols, ix.changes, ix.dirty = wasCols, wasChanges, wasDirty
		ix.writeMu.Unlock()
		return err
	}
	ix.tracked = loaded
	ix.storeLocked(snap)
	ix.saved, ix.savedAt = path, ix.changes
	// The published entries are the snapshot's; an entry it does not
	// share (a session skipped, or listed under another label) leaves its
	// block's entries, so that they can be freed.
	for _, t := range order {
		if !t.shared {
			e := *t.entry
			t.entry = &e
		}
	}
	ix.writeMu.Unlock()
	return nil
}

// trackedMap is the writer's map of sessions by directory that LoadCache
// builds beside the snapshot, or the error of a directory listed twice.
type trackedMap struct {
	tracked map[string]*tracked
	err     error
}

// mapTracked maps the sessions the blocks restored by directory.
func mapTracked(blocks []cacheBlock, count int, path string) trackedMap {
	m := trackedMap{tracked: make(map[string]*tracked, count)}
	for i := range blocks {
		for k := range blocks[i].tracked {
			t := &blocks[i].tracked[k]
			n := len(m.tracked)
			if m.tracked[t.dir.path()] = t; len(m.tracked) == n {
				m.err = fmt.Errorf("%w: %s lists %s twice", ErrCacheUnusable, path, t.dir.path())
				return m
			}
		}
	}
	return m
}

// listedIDs are the positions of the listed sessions' ids in the cache's
// order, valid as a snapshot's map of ids when no id repeats.
type listedIDs struct {
	pos      map[string]int
	repeated int
}

// positionIDs numbers the ids of the sessions the blocks restored that
// are listed, in the blocks' order.
func positionIDs(blocks []cacheBlock, count int) listedIDs {
	p := listedIDs{pos: make(map[string]int, count)}
	i := 0
	for b := range blocks {
		for k := range blocks[b].tracked {
			t := &blocks[b].tracked[k]
			if t.skipReason() != "" {
				continue
			}
			n := len(p.pos)
			if p.pos[t.entry.ID] = i; len(p.pos) == n {
				p.repeated++
			}
			i++
		}
	}
	return p
}

// cacheBlock is one block of a cache file and, once restored, its
// sessions' writer state, in the order of the file, with the search texts
// of those listed (a session's col counts from the block's first text).
type cacheBlock struct {
	sessions int
	// off and size are where the block's body lies in the file.
	off     int64
	size    int
	tracked []tracked
	cols    searchColumns
	err     error
}

// restoreBlocks decodes and restores the blocks on all cores; each block
// gets its own writer state, entries and search columns, allocated at
// once: a block's session count is checked against its size, so a forged
// count costs no more than the sessions the file really holds.
func (ix *Index) restoreBlocks(f *os.File, blocks []cacheBlock, count, searchBytes int) {
	workers := min(runtime.GOMAXPROCS(0), len(blocks))
	next := make(chan int, len(blocks))
	for i := range blocks {
		next <- i
	}
	close(next)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ld := newCacheLoad(ix.root)
			var body []byte // each block's, read in turn: what it decodes to copies what it keeps
			for i := range next {
				b := &blocks[i]
				if cap(body) < b.size {
					body = make([]byte, b.size)
				}
				body = body[:b.size]
				if _, err := f.ReadAt(body, b.off); err != nil {
					b.err = fmt.Errorf("reading a block: %w", err)
					continue
				}
				// The block's share of the search texts, as a first size.
				text := min(b.size, int(int64(searchBytes)*int64(b.sessions)/int64(count))+4096)
				b.err = ix.restoreBlock(b, body, ld, newColumnsBuilder(b.sessions, text))
			}
		}()
	}
	wg.Wait()
}

// restoreBlock decodes and restores the sessions of one block.
func (ix *Index) restoreBlock(b *cacheBlock, body []byte, ld *cacheLoad, cols *columnsBuilder) error {
	r := &cacheReader{b: body}
	b.tracked = make([]tracked, b.sessions)
	entries := make([]Entry, b.sessions)
	var cs cachedSession
	for i := range b.tracked {
		if r.session(&cs, ld); r.err != nil {
			return fmt.Errorf("decoding: %v", r.err)
		}
		if err := ix.restore(&cs, ld, &b.tracked[i], &entries[i], cols); err != nil {
			return err
		}
	}
	if len(r.b) != 0 {
		return fmt.Errorf("%d bytes after the last session of a block", len(r.b))
	}
	b.cols = cols.done()
	return nil
}

// restore rebuilds one tracked session from the cache into t and e,
// deriving every path (ld holds the log path the names were decoded into).
func (ix *Index) restore(s *cachedSession, ld *cacheLoad, t *tracked, e *Entry, cols *columnsBuilder) error {
	if !isPlainName(s.ProjectName) || !isProjectDirName(s.ProjectName) || !isPlainName(s.DirName) || !isPlainName(s.LogName) {
		return fmt.Errorf("entry names a path outside the layout: %q/%q/%q", s.ProjectName, s.DirName, s.LogName)
	}
	gen, enc, ok := parseLogName(s.LogName)
	if !ok {
		return fmt.Errorf("entry names %q, which is not a session log name", s.LogName)
	}
	// One string holds the log path; the directory path and both names are
	// substrings of it (100,000 sessions: 30 MB less than four strings each).
	logPath := ld.logPath
	dirEnd := len(logPath) - len(s.LogName) - 1
	if dirEnd < 0 {
		return fmt.Errorf("entry names %q, longer than its log path", s.LogName)
	}
	d, ok := makeSessionDir(s.ProjectName, s.DirName, logPath[:dirEnd], logFile{path: logPath, encoding: enc, generation: gen}, s.DirModTime)
	if !ok {
		return fmt.Errorf("entry's log path is not <root>/%s/%s/%s", s.ProjectName, s.DirName, s.LogName)
	}
	if s.TailLen < 0 || s.TailLen > resumeTailLen || int64(s.TailLen) > s.Entry.Offset {
		return fmt.Errorf("entry in %s has a resume check of %d bytes", s.DirName, s.TailLen)
	}
	*e = s.Entry
	*t = tracked{dir: d, entry: e, file: s.File, started: s.Started, tailLen: uint8(s.TailLen), tailSum: s.TailSum}
	t.setReasons(s.Skip, s.IdentityErr)
	t.entry.Path, t.entry.Encoding, t.entry.Generation = d.log.path, enc, gen
	t.entry.Title, t.entry.DescriptorLabel = capLabel(t.entry.Title), capLabel(t.entry.DescriptorLabel)
	if t.skipReason() == "" {
		if !t.started {
			return fmt.Errorf("listed entry in %s has no header", s.DirName)
		}
		if EncodeSegment(t.entry.ID) != s.DirName || ld.projectDir(t.entry) != s.ProjectName {
			return fmt.Errorf("listed entry's id and cwd do not encode to %s/%s", s.ProjectName, s.DirName)
		}
	}
	if t.skipReason() == "" {
		if cols.addCached(ld.search, s, t.entry) {
			t.col = int32(cols.len())
		} else {
			st := newSearchText(t.entry)
			t.fresh = &st
		}
	}
	return nil
}

// projectDir is ProjectDir of e's cwd, e being the entry decoded last
// (ld.cwd computed it once per cwd).
func (ld *cacheLoad) projectDir(e *Entry) string {
	if !e.HasCwd {
		return NoCwdDir
	}
	return ld.project
}

// isFolded reports whether b is foldCase(s), without building it when s
// is ASCII (a restore checks every session's id this way).
func isFolded(b []byte, s string) bool {
	if len(b) != len(s) {
		return string(b) == foldCase(s) // only a non-ASCII s folds to another length
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x80 {
			return string(b) == foldCase(s)
		}
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if b[i] != c {
			return false
		}
	}
	return true
}

// isPlainName reports whether name is one directory entry name: not empty,
// not . or .., without a separator or NUL.
func isPlainName(name string) bool {
	return name != "" && name != "." && name != ".." && !strings.ContainsAny(name, "/\\\x00")
}

// append appends the texts of c, columns another builder made.
func (b *columnsBuilder) append(c *searchColumns) {
	base := b.text.Len()
	if base+len(c.text) > b.fullMax {
		for i := range c.spans {
			st := c.at(int32(i))
			b.add(&st)
		}
		return
	}
	b.text.WriteString(c.text)
	for _, sp := range c.spans {
		sp.start, sp.end = sp.start+uint32(base), sp.end+uint32(base)
		b.cols.spans = append(b.cols.spans, sp)
	}
	b.cols.bytes = append(b.cols.bytes, c.bytes...)
	b.cols.pairs = append(b.cols.pairs, c.pairs...)
}

// addCached appends the search text LoadCache restores for e, straight
// from the cache, when its parts fit it and its id part
// is e's id folded; it reports false, adding nothing, for a text an older
// or forged cache got wrong, which the caller then builds from e.
func (b *columnsBuilder) addCached(all []byte, s *cachedSession, e *Entry) bool {
	li, lt, ld := s.SearchIDLen, s.SearchTitleLen, s.SearchDispLen
	if li < 0 || lt < 0 || ld < 0 || li+lt+ld+3 > len(all) {
		return false
	}
	titleEnd := len(all) - ld - 1
	if all[li] != 0 || all[titleEnd] != 0 || all[titleEnd-lt-1] != 0 || !isFolded(all[:li], e.ID) {
		return false
	}
	if push(b, all, li, lt, ld) {
		b.cols.bytes = append(b.cols.bytes, byteSetOf(all))
		b.cols.pairs = append(b.cols.pairs, pairSetOf(all))
	}
	return true
}
