package titles

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
	"unsafe"

	"github.com/dsh-refls/dsh-refls/sessionref/dshlog"
	"github.com/dsh-refls/dsh-refls/sessionref/dshlog/layout"
	"github.com/dsh-refls/dsh-refls/sessionref/internal/idorder"
)

// cacheMagic opens every index cache file; cacheFormat changes whenever the
// cached structures do, so an old or foreign file is discarded, never
// trusted.
const (
	cacheMagic  = "dsh-refls title index\n"
	cacheFormat = 15 // 7: search texts folded with full Unicode case mapping; 8: search text parts as lengths; 9: Entry.LastEventAt; 10: flat binary body (titlecachecodec.go) instead of gob; 11: the search texts' total size in the header, sessions in snapshot order; 12: sessions in blocks of known size, decoded in parallel; 13: listed sessions first, a table of cwds, and each block's search filters and texts stored as the snapshot holds them; 14: Entry.WorkDir; 15: Entry.Prompt, Seeded and Described (kind.go)
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
	Entry       dshlog.Entry
	File        dshlog.FileIdentity
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
	// SearchByteSet and SearchPairSet are the search text's filters
	// (searchText.bytes and pairs), stored so a restart does not compute
	// them again.
	SearchByteSet byteSet
	SearchPairSet pairSet
}

// cacheFile is the whole cache.
type cacheFile struct {
	Format   int
	Root     string
	Sessions []cachedSession
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
//
// The state is encoded from the index itself while the writer's lock is
// held, each session's record made as its block is written; the lock is
// released before the file is synced. A copy of every record taken first
// (the cache's form until then) was a 56 MB transient at 100,000
// sessions, at the end of a first build, when the heap is at its largest.
// The servers' callers (sessionref/live) save on the goroutine that
// applies every update, so holding the lock while encoding delays none.
func (ix *Index) SaveCache(path string) error {
	ix.writeMu.Lock()
	locked := true
	defer func() {
		if locked {
			ix.writeMu.Unlock()
		}
	}()
	if path == ix.saved && ix.changes == ix.savedAt && !ix.dirty {
		return nil
	}
	changes := ix.changes
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
	err = writeCache(tmp, ix.savedLocked())
	ix.writeMu.Unlock()
	locked = false
	if err == nil {
		err = tmp.Sync()
	}
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

// savedIndex is the index as SaveCache writes it: its sessions, listed
// ones first in the order of a snapshot, and the search columns their
// texts lie in. It reads the index's own state: valid while the writer's
// lock is held.
type savedIndex struct {
	root  string
	order []*tracked
	cols  searchColumns
}

// savedLocked returns the savedIndex of ix; the caller holds writeMu for
// as long as it is used.
func (ix *Index) savedLocked() *savedIndex {
	order := make([]*tracked, 0, len(ix.tracked))
	for _, t := range ix.tracked {
		order = append(order, t)
	}
	// The listed sessions come first, in the order of a snapshot, so the
	// snapshot published on load need not sort, and its sessions are the
	// first entries LoadCache decodes.
	var ids idorder.Order
	sort.Slice(order, func(i, j int) bool {
		if li, lj := order[i].skipReason() == "", order[j].skipReason() == ""; li != lj {
			return li
		}
		return listedBefore(order[i], order[j], &ids)
	})
	return &savedIndex{root: ix.root, order: order, cols: ix.cols}
}

func (s *savedIndex) header() (int, string, int) { return cacheFormat, s.root, len(s.order) }
func (s *savedIndex) cwd(i int) string           { return s.order[i].entry.Cwd }

func (s *savedIndex) session(i int, cs *cachedSession) {
	t := s.order[i]
	*cs = cachedSession{
		ProjectName: t.dir.ProjectName(), DirName: t.dir.DirName(), LogName: filepath.Base(t.dir.Log.Path),
		DirModTime: t.dir.DirModTime, Entry: *t.entry, File: t.file, Skip: t.skipReason(), IdentityErr: t.identityErr(),
		Started: t.started, TailLen: int(t.tailLen), TailSum: t.tailSum,
	}
	if t.skipReason() == "" {
		st := searchIn(t, &s.cols)
		cs.SearchAll, cs.SearchIDLen, cs.SearchTitleLen, cs.SearchDispLen = st.all, len(st.id), len(st.title), len(st.display)
		cs.SearchByteSet, cs.SearchPairSet = st.bytes, st.pairs
	}
	cs.Entry.Path = "" // derived on load
}

// writeCache writes the magic and the encoded cache to f (the caller
// syncs it); the first error stops it.
func writeCache(f *os.File, src cacheSource) error {
	w := bufio.NewWriter(f)
	if _, err := io.WriteString(w, cacheMagic); err != nil {
		return err
	}
	if err := encodeCache(w, src); err != nil {
		return fmt.Errorf("encoding: %w", err)
	}
	return w.Flush()
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
	f, err := dshlog.OpenRegular(path, "index cache")
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
	// block is read where it lies by the goroutine that decodes it, its
	// search texts straight into the columns' text.
	size := info.Size()
	head := make([]byte, min(size, cacheHeadBytes))
	if _, err := f.ReadAt(head, 0); err != nil {
		return fmt.Errorf("reading index cache %s: %w", path, err)
	}
	if !bytes.HasPrefix(head, []byte(cacheMagic)) {
		return fmt.Errorf("%w: %s is not a dsh-refls index cache", ErrCacheUnusable, path)
	}
	r := &cacheReader{b: head[len(cacheMagic):], beyond: size - int64(len(head))}
	format, root, count, cwdBytes := r.header()
	if r.err != nil {
		return fmt.Errorf("%w: decoding %s: %v", ErrCacheUnusable, path, r.err)
	}
	if format != cacheFormat {
		return fmt.Errorf("%w: %s has format %d, want %d", ErrCacheUnusable, path, format, cacheFormat)
	}
	if root != ix.root {
		return fmt.Errorf("%w: %s indexes %s, not %s", ErrCacheUnusable, path, root, ix.root)
	}
	cwds, err := readCwds(f, size-r.rest(), cwdBytes)
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrCacheUnusable, path, err)
	}
	blocks, err := findBlocks(f, size, size-r.rest()+int64(cwdBytes), count)
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrCacheUnusable, path, err)
	}
	rc := newRestoredCache(blocks, count)
	rc.cwds = cwds
	ix.restoreBlocks(f, blocks, rc)
	for i := range blocks {
		if err := blocks[i].err; err != nil {
			return fmt.Errorf("%w: %s: %v", ErrCacheUnusable, path, err)
		}
	}
	// The snapshot's map of ids and the writer's map of sessions are built
	// on other goroutines while the snapshot is; a directory listed twice
	// refuses the cache before anything is published.
	positioned := make(chan listedIDs, 1)
	go func() { positioned <- positionIDs(rc.tracked) }()
	mapped := make(chan trackedMap, 1)
	go func() { mapped <- mapTracked(rc.tracked, path) }()
	var ids *listedIDs
	waitIDs := func() *listedIDs {
		if ids == nil {
			p := <-positioned
			ids = &p
		}
		return ids
	}
	ix.writeMu.Lock()
	defer ix.writeMu.Unlock()
	wasCols, wasChanges, wasDirty := ix.cols, ix.changes, ix.dirty
	ix.cols = rc.cols
	snap := ix.restoredSnapshotLocked(blocks, rc, waitIDs)
	var tm trackedMap
	if snap == nil {
		waitIDs() // it reads the entries snapshotLocked replaces
		order := make([]*tracked, len(rc.tracked))
		for i := range rc.tracked {
			order[i] = &rc.tracked[i]
		}
		snap = ix.snapshotLocked(true, order)
		snap.walkOrder(true)
		tm = <-mapped
	} else if err := skippedTwice(rc, snap.byID, path); err != nil {
		tm = trackedMap{err: err}
	}
	if tm.err != nil {
		// Nothing was published: the index is as it was, unbuilt.
		ix.cols, ix.changes, ix.dirty = wasCols, wasChanges, wasDirty
		return tm.err
	}
	ix.storeLocked(snap)
	if tm.tracked == nil {
		// The restored snapshot lists no directory twice (its ids are
		// unique, and each listed directory is its id encoded; the skipped
		// ones were checked): the writer's map, which the first build
		// needs, is waited for once the snapshot is served.
		if tm = <-mapped; tm.err != nil {
			ix.storeLocked(&Snapshot{Root: ix.root, Building: true, Updated: time.Now()})
			ix.cols, ix.changes, ix.dirty = wasCols, wasChanges, wasDirty
			return tm.err
		}
	}
	ix.tracked = tm.tracked
	ix.saved, ix.savedAt = path, ix.changes
	// The published entries are the snapshot's; an entry it does not
	// share (a session skipped, or listed under another label) leaves the
	// decoded entries, so that those it does not use can be freed.
	for i := range rc.tracked {
		if t := &rc.tracked[i]; !t.shared {
			e := *t.entry
			t.entry = &e
		}
	}
	return nil
}

// skippedTwice reports a directory of a skipped session that the cache
// lists twice: as another skipped session's, or as a listed session's,
// whose directory is its id encoded (byID maps the listed ids, each
// listed once).
func skippedTwice(rc *restoredCache, byID map[string]int, path string) error {
	seen := map[string]bool{}
	for i := rc.listed; i < len(rc.tracked); i++ {
		t := &rc.tracked[i]
		p := t.dir.Path()
		twice := seen[p]
		if id, err := layout.DecodeSegment(t.dir.DirName()); err == nil {
			if k, ok := byID[id]; ok && rc.tracked[k].dir.Path() == p {
				twice = true
			}
		}
		if twice {
			return fmt.Errorf("%w: %s lists %s twice", ErrCacheUnusable, path, p)
		}
		seen[p] = true
	}
	return nil
}

// readCwds reads the table of cwds, size bytes at off (which the file was
// checked to hold), with each one's project directory.
func readCwds(f *os.File, off int64, size int) ([]cachedCwd, error) {
	b := make([]byte, size)
	if _, err := f.ReadAt(b, off); err != nil {
		return nil, fmt.Errorf("reading its cwds: %w", err)
	}
	r := &cacheReader{b: b}
	cwds := r.cwdTable(true)
	if r.err != nil || len(r.b) != 0 {
		return nil, errors.New("its table of cwds is not as long as it says")
	}
	return cwds, nil
}

// findBlocks reads the header of each block of the cache f, the first at
// off, until they hold count sessions, and checks that they end the file
// and that their sizes add up: each block is then told where its
// sessions, listed sessions and search texts go.
func findBlocks(f *os.File, size, off int64, count int) ([]cacheBlock, error) {
	var blocks []cacheBlock
	var hdr [4 * binary.MaxVarintLen64]byte
	sessions, listed, text := 0, 0, 0
	for sessions < count {
		got, err := f.ReadAt(hdr[:], off)
		if err != nil && err != io.EOF {
			return nil, fmt.Errorf("reading: %w", err)
		}
		br := &cacheReader{b: hdr[:got], beyond: size - off - int64(got)}
		h := br.blockHeader()
		if br.err != nil {
			return nil, fmt.Errorf("decoding: %v", br.err)
		}
		off = size - br.rest()
		blocks = append(blocks, cacheBlock{blockHead: h, off: off, first: sessions, firstListed: listed, textAt: text})
		off += int64(h.size)
		sessions, listed, text = sessions+h.sessions, listed+h.listed, text+h.text
		if sessions > count {
			return nil, errors.New("it holds more sessions than it announces")
		}
	}
	if off != size {
		return nil, fmt.Errorf("it has %d bytes after its last session", size-off)
	}
	return blocks, nil
}

// restoredCache is where the blocks of a cache are restored, each block
// into its part: every session's writer state and entry in the order of
// the file (the listed ones first, so that they are the snapshot's
// sessions), and the columns of the listed ones.
type restoredCache struct {
	tracked []tracked
	entries []dshlog.Entry
	// cwds is the cache's table of cwds.
	cwds []cachedCwd
	// text is the columns' text; each block reads its texts into its part.
	text []byte
	cols searchColumns
	// cwdOf is, for each listed session, the number of its cwd in cwds
	// (-1: none), then in the snapshot's numbering.
	cwdOf []int32
	// listed is how many sessions are listed.
	listed int
}

// newRestoredCache allocates what the blocks restore into, each part once:
// the blocks' counts and sizes were checked against the file, so a forged
// count costs no more than the sessions the file really holds.
func newRestoredCache(blocks []cacheBlock, count int) *restoredCache {
	listed, text := 0, 0
	if n := len(blocks); n > 0 {
		last := &blocks[n-1]
		listed, text = last.firstListed+last.listed, last.textAt+last.text
	}
	rc := &restoredCache{tracked: make([]tracked, count), entries: make([]dshlog.Entry, count), text: make([]byte, text),
		cwdOf: make([]int32, listed), listed: listed}
	rc.cols.spans, rc.cols.bytes, rc.cols.pairs = make([]searchSpan, listed), make([]byteSet, listed), make([]pairSet, listed)
	// The text is not written again once every block has read its part
	// (restoreBlocks returns after them all): it becomes the columns'
	// string without a copy of 100,000 sessions' texts.
	rc.cols.text = unsafe.String(unsafe.SliceData(rc.text), len(rc.text))
	return rc
}

// trackedMap is the writer's map of sessions by directory that LoadCache
// builds beside the snapshot, or the error of a directory listed twice.
type trackedMap struct {
	tracked map[string]*tracked
	err     error
}

// mapTracked maps the restored sessions by directory.
func mapTracked(restored []tracked, path string) trackedMap {
	m := trackedMap{tracked: make(map[string]*tracked, len(restored))}
	for i := range restored {
		t := &restored[i]
		n := len(m.tracked)
		if m.tracked[t.dir.Path()] = t; len(m.tracked) == n {
			m.err = fmt.Errorf("%w: %s lists %s twice", ErrCacheUnusable, path, t.dir.Path())
			return m
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

// positionIDs numbers the ids of the restored sessions that are listed,
// in the cache's order.
func positionIDs(restored []tracked) listedIDs {
	p := listedIDs{pos: make(map[string]int, len(restored))}
	i := 0
	for k := range restored {
		t := &restored[k]
		if t.skipReason() != "" {
			continue
		}
		n := len(p.pos)
		if p.pos[t.entry.ID] = i; len(p.pos) == n {
			p.repeated++
		}
		i++
	}
	return p
}

// cacheBlock is one block of a cache file: its header, where its body
// lies, where its sessions go, and what restoring it found.
type cacheBlock struct {
	blockHead
	// off is where the block's body lies in the file.
	off int64
	// first, firstListed and textAt are where the block's sessions, listed
	// sessions and search texts go in the restoredCache.
	first, firstListed, textAt int
	// unknown counts the unknown events of its listed sessions.
	unknown int
	// parents reports a listed session that names children; fresh, one
	// whose cached search text was not usable.
	parents, fresh bool
	// sorted reports that its listed sessions are in a snapshot's order;
	// firstT and lastT are the first and last of them.
	sorted        bool
	firstT, lastT *tracked
	err           error
}

// restoreBlocks decodes and restores the blocks on all cores, each into
// its part of rc.
func (ix *Index) restoreBlocks(f *os.File, blocks []cacheBlock, rc *restoredCache) {
	workers := min(runtime.GOMAXPROCS(0), len(blocks))
	next := make(chan int, len(blocks))
	most := 0 // the largest block's fields and filters
	for i := range blocks {
		next <- i
		most = max(most, blocks[i].size-blocks[i].text)
	}
	close(next)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ld := newCacheLoad(ix.root)
			// Each block's fields and filters, read in turn: what they
			// decode to copies what it keeps. One array of the largest:
			// grown block by block, the blocks of nearly equal sizes made
			// each worker allocate three or four (8 MB at 100,000 sessions,
			// on memory the process had not touched).
			body := make([]byte, most)
			for i := range next {
				b := &blocks[i]
				fields := b.size - b.text
				body := body[:fields]
				if _, err := f.ReadAt(body, b.off); err != nil {
					b.err = fmt.Errorf("reading a block: %w", err)
					continue
				}
				if _, err := f.ReadAt(rc.text[b.textAt:b.textAt+b.text], b.off+int64(fields)); err != nil {
					b.err = fmt.Errorf("reading a block's search texts: %w", err)
					continue
				}
				b.err = ix.restoreBlock(b, body, rc, ld)
			}
		}()
	}
	wg.Wait()
}

// restoreBlock decodes and restores the sessions of one block into rc;
// body holds its fields and filters, and rc.text its search texts.
func (ix *Index) restoreBlock(b *cacheBlock, body []byte, rc *restoredCache, ld *cacheLoad) error {
	r := &cacheReader{b: body[:b.fieldsEnd()]}
	filterAt := b.fieldsEnd()
	text := rc.text[b.textAt : b.textAt+b.text]
	at, li, end := 0, b.firstListed, b.firstListed+b.listed
	var cs cachedSession
	var ids idorder.Order
	b.sorted = true
	// The block's sessions and entries are written once before they are
	// decoded into. The decoders first read each page of these arrays,
	// which the process has not touched yet (a nil check on the pointer
	// they are given): the kernel maps such a page to its shared page of
	// zeros, then on the first write copies it and flushes the mapping
	// from every core, an interrupt to each. At 100,000 sessions that was
	// ~7,000 such copies, half the restore's CPU; written first, each page
	// costs one fault.
	clear(rc.tracked[b.first : b.first+b.sessions])
	clear(rc.entries[b.first : b.first+b.sessions])
	for k := 0; k < b.sessions; k++ {
		t, e := &rc.tracked[b.first+k], &rc.entries[b.first+k]
		n, cwd := r.session(&cs, e, rc.cwds, ld)
		if r.err != nil {
			return fmt.Errorf("decoding: %v", r.err)
		}
		if n >= len(text)-at || text[at+n] != 0 {
			return errors.New("a session's search text overruns its block's")
		}
		if err := ix.restore(&cs, ld, t, e); err != nil {
			return err
		}
		if t.skipReason() == "" {
			if li == end {
				return errors.New("a block lists more sessions than its header says")
			}
			if cachedSearchFits(text[at:at+n], &cs, e) {
				rc.cols.spans[li] = newSearchSpan(b.textAt+at, n, cs.SearchIDLen, cs.SearchTitleLen, cs.SearchDispLen)
				rc.cols.bytes[li], rc.cols.pairs[li] = filters(body[filterAt:])
				t.col = int32(li) + 1
			} else {
				st := newSearchText(e)
				t.fresh, b.fresh = &st, true
			}
			rc.cwdOf[li] = -1
			if e.HasCwd {
				rc.cwdOf[li] = int32(cwd)
			}
			b.unknown += e.UnknownEvents
			b.parents = b.parents || len(e.ChildLabels) > 0
			if b.lastT != nil && listedBefore(t, b.lastT, &ids) {
				b.sorted = false
			}
			if b.firstT == nil {
				b.firstT = t
			}
			b.lastT = t
			li++
		}
		at += n + 1
		filterAt += filterBytes
	}
	if len(r.b) != 0 || at != len(text) || li != end {
		return fmt.Errorf("a block holds %d bytes of fields and %d of search texts after its last session, and %d listed sessions, not %d", len(r.b), len(text)-at, li-b.firstListed, b.listed)
	}
	return nil
}

// restore rebuilds one tracked session from the cache into t, whose entry
// e is, deriving every path (ld holds the log path the names were decoded
// into).
func (ix *Index) restore(s *cachedSession, ld *cacheLoad, t *tracked, e *dshlog.Entry) error {
	if !isPlainName(s.ProjectName) || !dshlog.IsProjectDirName(s.ProjectName) || !isPlainName(s.DirName) || !isPlainName(s.LogName) {
		return fmt.Errorf("entry names a path outside the layout: %q/%q/%q", s.ProjectName, s.DirName, s.LogName)
	}
	gen, enc, ok := dshlog.ParseLogName(s.LogName)
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
	d, ok := dshlog.MakeSessionDir(s.ProjectName, s.DirName, logPath[:dirEnd], dshlog.LogFile{Path: logPath, Encoding: enc, Generation: gen}, s.DirModTime)
	if !ok {
		return fmt.Errorf("entry's log path is not <root>/%s/%s/%s", s.ProjectName, s.DirName, s.LogName)
	}
	if s.TailLen < 0 || s.TailLen > dshlog.ResumeTailLen || int64(s.TailLen) > e.Offset {
		return fmt.Errorf("entry in %s has a resume check of %d bytes", s.DirName, s.TailLen)
	}
	*t = tracked{dir: d, entry: e, file: s.File, started: s.Started, tailLen: uint8(s.TailLen), tailSum: s.TailSum}
	t.setReasons(s.Skip, s.IdentityErr)
	e.Path, e.Encoding, e.Generation = d.Log.Path, enc, gen
	e.Title, e.DescriptorLabel = dshlog.CapLabel(e.Title), dshlog.CapLabel(e.DescriptorLabel)
	if t.skipReason() == "" {
		if !t.started {
			return fmt.Errorf("listed entry in %s has no header", s.DirName)
		}
		if layout.EncodeSegment(e.ID) != s.DirName || ld.projectDir(e) != s.ProjectName {
			return fmt.Errorf("listed entry's id and cwd do not encode to %s/%s", s.ProjectName, s.DirName)
		}
	}
	return nil
}

// projectDir is layout.ProjectDir of e's cwd, e being the entry decoded last
// (the cache's table computed it once per cwd).
func (ld *cacheLoad) projectDir(e *dshlog.Entry) string {
	if !e.HasCwd {
		return layout.NoCwdDir
	}
	return ld.project
}

// cachedSearchFits reports whether all, the search text the cache holds
// for e, has the parts s gives it, and its id part is e's id folded: a
// text an older or forged cache got wrong is built from e instead.
func cachedSearchFits(all []byte, s *cachedSession, e *dshlog.Entry) bool {
	li, lt, ld := s.SearchIDLen, s.SearchTitleLen, s.SearchDispLen
	if li < 0 || lt < 0 || ld < 0 || li+lt+ld+3 > len(all) {
		return false
	}
	titleEnd := len(all) - ld - 1
	return all[li] == 0 && all[titleEnd] == 0 && all[titleEnd-lt-1] == 0 && isFolded(all[:li], e.ID)
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
