// Package recall finds sessions by what was said in them: for every
// session of a title index it keeps the projected text of SPEC §2.3.3,
// exactly what a reference to the session would recall, and answers
// case-insensitive substring queries over it.
//
// The text lies on disk in compressed blocks (blocks.go), never in memory
// as a whole. A dictionary of the tokens of the case-folded text (folder.go,
// tokens.go) with the sessions holding each (postings.go) decides which
// sessions hold a word without reading text; trigrams of tokens too long
// for the dictionary, and phrases with spaces, leave candidates whose
// blocks are read back to check. Sessions are taken newest first until
// enough match; their blocks give the excerpts. Sessions whose log changed
// get new slots in a small overlay beside the postings until the next
// merge, which renumbers the postings without reading any text again.
// Every listed session is indexed: memory holds the postings, one small
// record per session and a bounded cache of decoded blocks.
package recall

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/dsh-refls/dsh-refls/sessionref/dshlog"
	"github.com/dsh-refls/dsh-refls/sessionref/titles"
)

// Options configure a recall index.
type Options struct {
	// Logger receives projection failures; nil logs nothing.
	Logger *zap.Logger
	// Parallelism bounds how many logs are projected at once; 0 means
	// 2 × GOMAXPROCS.
	Parallelism int
	// Path is where the index is stored (Save, Load): its text is written
	// beside it as it is read. "" keeps the text in a private temporary
	// file, removed on Close, until a Save.
	Path string
	// CacheBytes bounds the decoded blocks kept in memory; 0 means
	// DefaultCacheBytes.
	CacheBytes int64
	// Progress, when set, is told how many of the sessions a Sync
	// projects are done, out of how many, after each one. It is called
	// from several goroutines at once, and done may arrive out of order.
	Progress func(done, total int)
	// Yield, when set, is called by each projecting goroutine (worker 0
	// to Parallelism-1) before each session and between the messages of
	// one, so that it can give way: the server lets the other goroutines
	// run there, and holds every worker but the first while a request is
	// being answered. It returns when the worker may go on.
	Yield func(ctx context.Context, worker int)
	// Published, when set, is called after each view is published,
	// with its statistics: at the end of every Sync and, during a first
	// build (nothing indexed yet), after each step of it.
	Published func(Stats)
}

// Bounds of the incremental state.
const (
	// firstStep is how many sessions a first build reads before it
	// publishes the first of its steps; stepEvery bounds the time
	// between two.
	firstStep = 64
	stepEvery = 2 * time.Second
	// overlayMax is how many changed sessions are kept beside the
	// postings before they are merged into them.
	overlayMax = 64
	// maxCursors is how many sessions keep the state of their last read
	// (ProjectionCursor holds the log's folded surface), so that an
	// append to one of them is read alone: the most recently read first.
	maxCursors = 8
	// maxCursorLog bounds the log (and its text) of a session whose
	// cursor is kept, so the kept cursors hold at most a few MiB: a
	// larger log that grows is read in full again.
	maxCursorLog = 1 << 20
)

// Index is the recall index. Sync has one caller at a time; Search may be
// called from any goroutine at any time and reads an immutable view.
type Index struct {
	opts  Options
	log   *zap.Logger
	cache *blockCache
	// filters keeps the pair filters searches read lately.
	filters filterCache
	// spare and scratches keep the scratch space of finished searches
	// for the next ones (takeScratch).
	spare     atomic.Pointer[blockScratch]
	scratches sync.Pool

	// unchecked is set by Load and cleared once a Sync has compared the
	// loaded sessions with their logs (Stats.Revalidating).
	unchecked atomic.Bool

	// saveMu serialises saves; syncMu guards everything below.
	saveMu sync.Mutex
	syncMu sync.Mutex
	docs   map[string]*doc     // current documents by session id
	failed map[string]entryKey // sessions whose projection failed, until they change
	// data is the file new blocks go to; retired are files replaced by a
	// compaction that searches of older views may still read.
	data    *dataFile
	retired []*dataFile
	// garbage is how many bytes of data no current document refers to.
	garbage int64
	// dict holds every token up to maxTokenBytes (tokens.go); tokBase
	// are the postings of its ids and gramBase those of the trigrams of
	// longer tokens, over slots 0..tokBase.n-1; overlay holds the sorted
	// ids and grams of the slots from tokBase.n to nextSlot-1.
	dict     *dictionary
	tokBase  *postings
	gramBase *postings
	overlay  map[int32]overlayDoc
	nextSlot int32
	// fresh are the documents set since the last publish (orderOf);
	// resort asks the next publish to sort every document instead.
	fresh  []*doc
	resort bool
	// cursors are the kept read states, most recent first.
	cursors []cursorOf
	// projected counts the sessions read from their logs since New or Load.
	projected int
	// changes counts the syncs and loads that changed docs (Changes).
	changes atomic.Uint64
	// resumed counts the reads that went on from where the last one ended.
	resumed atomic.Int64
	// decoded and filtered count the blocks searches decompressed, and
	// those whose pair filter spared the decompression.
	decoded, filtered atomic.Int64

	brokenMu sync.Mutex
	broken   map[string]bool // sessions whose blocks could not be read back

	cur atomic.Pointer[view]
}

// overlayDoc is what the postings would hold of one session: its sorted
// token ids and the sorted trigrams of its long tokens.
type overlayDoc struct {
	tokens, grams []uint32
}

type cursorOf struct {
	id  string
	cur *dshlog.ProjectionCursor
}

// entryKey is what tells that a session's log changed since its
// projection: the log's length and a 64-bit FNV-1a hash of the rest of
// what the title index says of it (log path, last seq, generation, format,
// corruption). 16 bytes instead of the 64 of those fields (and no pointer
// into the title index's strings) in every record; a change that keeps
// the offset and collides in the hash, about one in 2^64, would leave a
// session unread until its next change.
type entryKey struct {
	offset int64
	sum    uint64
}

func keyOf(e *dshlog.Entry) entryKey {
	h := fnvString(fnvOffset, e.Path)
	h = fnvUint(h, uint64(e.LastSeq))
	h = fnvUint(h, uint64(e.Generation))
	h = fnvUint(h, uint64(e.FormatVersion))
	h = fnvString(h, e.Corrupt)
	return entryKey{offset: e.Offset, sum: h}
}

const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

// fnvString hashes the length of s, then s (the length keeps "ab","c"
// apart from "a","bc").
func fnvString(h uint64, s string) uint64 {
	h = fnvUint(h, uint64(len(s)))
	for i := 0; i < len(s); i++ {
		h = (h ^ uint64(s[i])) * fnvPrime
	}
	return h
}

func fnvUint(h, x uint64) uint64 {
	for k := 0; k < 8; k++ {
		h = (h ^ (x & 0xff)) * fnvPrime
		x >>= 8
	}
	return h
}

// doc is one indexed session: where its text lies. It never changes once
// published; a merge or compaction publishes a copy. There is one per
// indexed session (100,000 in a large store), so it is kept to 96 bytes
// (TestDocStaysSmall).
type doc struct {
	id        string
	createdAt int64
	key       entryKey
	data      *dataFile
	// Its blocks follow one another in data from first, stored the size
	// of all their records. lens holds the compressed length of each as
	// uvarints (refs decodes them) when there is more than one; a single
	// block (most sessions: blocks hold 16 KB of text) is the whole of
	// stored, and lens is "". A loaded index takes lens as stored,
	// without decoding it.
	first  int64
	lens   string
	stored int64
	// textBytes and foldedBytes are the sizes of its text and folding,
	// for Stats; a size past 4 GiB counts as 4 GiB.
	textBytes, foldedBytes uint32
	slot                   int32
	// long is set when the text holds a token longer than maxTokenBytes.
	long bool
}

// size32 is n for doc's sizes: at most 4 GiB - 1.
func size32(n int64) uint32 { return uint32(min(max(n, 0), 1<<32-1)) }

// refs returns where the blocks of d lie.
func (d *doc) refs() ([]blockRef, error) { return d.refsInto(nil) }

// refsInto is refs into the array of dst: a search reads a block list
// into its scratch space, where a list of its own per session came to a
// fifth of what a search for a word allocates.
func (d *doc) refsInto(dst []blockRef) ([]blockRef, error) {
	out := dst[:0]
	if d.lens == "" {
		if d.stored == 0 {
			return out, nil
		}
		if d.stored < recordHeaderLen || d.stored-recordHeaderLen > maxBlockBytes {
			return nil, fmt.Errorf("%w: the block list of session %s is damaged", errBlock, d.id)
		}
		return append(out, blockRef{off: d.first, n: uint32(d.stored - recordHeaderLen)}), nil
	}
	off, end := d.first, d.first+d.stored
	for s := d.lens; s != ""; {
		n, k := binary.Uvarint([]byte(s[:min(len(s), binary.MaxVarintLen64)]))
		if k <= 0 || n > maxBlockBytes || off+recordHeaderLen+int64(n) > end {
			return nil, fmt.Errorf("%w: the block list of session %s is damaged", errBlock, d.id)
		}
		out = append(out, blockRef{off: off, n: uint32(n)})
		off += recordHeaderLen + int64(n)
		s = s[k:]
	}
	return out, nil
}

// setRefs records refs, which must follow one another, as the blocks of d.
func (d *doc) setRefs(refs []blockRef) error {
	var lens []byte
	d.first, d.stored = 0, 0
	for i, r := range refs {
		if i == 0 {
			d.first = r.off
		} else if r.off != d.first+d.stored {
			return fmt.Errorf("the blocks of session %s are not contiguous", d.id)
		}
		lens = binary.AppendUvarint(lens, uint64(r.n))
		d.stored += recordHeaderLen + int64(r.n)
	}
	d.lens = ""
	if len(refs) > 1 {
		d.lens = string(lens)
	}
	return nil
}

// view is what searches read.
type view struct {
	tok, grams *postings
	overlay    map[int32]overlayDoc
	// dict is the dictionary's tokens when the view was made, of
	// dictionary dicts (which joins them for containing).
	dict  []string
	dicts *dictionary
	// order is every current document, newest first (createdAt
	// descending, then id).
	order []*doc
	stats Stats
}

// Stats describe the index.
type Stats struct {
	// Sessions is how many sessions are indexed.
	Sessions int `json:"sessions"`
	// Failed is how many sessions could not be projected.
	Failed int `json:"failed"`
	// TextBytes is the size of the projected text; FoldedBytes of its folding.
	TextBytes   int64 `json:"textBytes"`
	FoldedBytes int64 `json:"foldedBytes"`
	// StoredBytes is the size of the file holding the compressed text,
	// CacheBytes what its decoded blocks in memory take.
	StoredBytes int64 `json:"storedBytes"`
	CacheBytes  int64 `json:"cacheBytes"`
	// FilterCacheBytes is what the pair filters kept in memory take (at
	// most 2 MiB; filtercache.go).
	FilterCacheBytes int64 `json:"filterCacheBytes"`
	// PostingBytes is the memory of the posting lists and bitsets.
	PostingBytes int64 `json:"postingBytes"`
	// Unposted is how many sessions changed since the postings were
	// merged and are posted in the overlay beside them.
	Unposted int `json:"unposted"`
	// Tokens is how many distinct tokens the dictionary holds, Grams how
	// many trigrams of longer tokens the postings hold.
	Tokens int `json:"tokens"`
	Grams  int `json:"grams"`
	// Pending is how many listed sessions the first build running has
	// not indexed yet: its steps publish the newest sessions first, and
	// searches answer from them meanwhile. 0 once a Sync ended.
	Pending int `json:"pending"`
	// Unindexed is how many listed sessions were left out; every listed
	// session is indexed, so it is 0 (kept for hosts that read it).
	Unindexed int `json:"unindexed"`
	// Projected is how many sessions were read from their logs since the
	// index was opened or loaded from its stored copy (new or changed ones).
	Projected int `json:"projected"`
	// Resumed is how many of those reads went on from where the previous
	// read of the same log ended, reading only the appended bytes.
	Resumed int64 `json:"resumed"`
	// BlocksDecoded is how many blocks of text searches have read back
	// and decompressed since the index was opened; BlocksFiltered how
	// many more they read only as far as their pair filter, which showed
	// that a phrase was not in them (docs/search.md).
	BlocksDecoded  int64 `json:"blocksDecoded"`
	BlocksFiltered int64 `json:"blocksFiltered"`
	// Synced is when the view was published.
	Synced time.Time `json:"synced"`
	// Revalidating is set from a Load until the Sync after it has compared
	// every stored session with its log: until then searches answer from
	// the stored copy, which misses text appended while no server ran.
	Revalidating bool `json:"revalidating,omitempty"`
}

// New returns an empty recall index; Sync fills it.
func New(opts Options) *Index {
	if opts.Parallelism <= 0 {
		opts.Parallelism = 2 * runtime.GOMAXPROCS(0)
	}
	if opts.CacheBytes <= 0 {
		opts.CacheBytes = DefaultCacheBytes
	}
	lg := opts.Logger
	if lg == nil {
		lg = zap.NewNop()
	}
	ix := &Index{opts: opts, log: lg, cache: newBlockCache(opts.CacheBytes), docs: map[string]*doc{},
		failed: map[string]entryKey{}, dict: newDictionary(), tokBase: emptyDensePostings(), gramBase: emptyPostings(),
		overlay: map[int32]overlayDoc{}, broken: map[string]bool{}}
	ix.cur.Store(&view{tok: ix.tokBase, grams: ix.gramBase})
	return ix
}

// Close releases the index's files; a private temporary one is removed.
// The index must not be used afterwards.
func (ix *Index) Close() error {
	ix.syncMu.Lock()
	defer ix.syncMu.Unlock()
	var err error
	for _, d := range append(ix.retired, ix.data) {
		if d != nil {
			err = errors.Join(err, d.close())
		}
	}
	ix.data, ix.retired = nil, nil
	return err
}

// Stats returns the statistics of the current view.
func (ix *Index) Stats() Stats {
	st := ix.cur.Load().stats
	st.CacheBytes, st.FilterCacheBytes = ix.cache.size(), ix.filters.size()
	st.Revalidating = ix.unchecked.Load()
	st.BlocksDecoded, st.BlocksFiltered = ix.decoded.Load(), ix.filtered.Load()
	return st
}

// Synced reports whether a view has been published since New.
func (ix *Index) Synced() bool { return !ix.cur.Load().stats.Synced.IsZero() }

// markBroken notes that a session's text could not be read back: the next
// Sync reads its log again.
func (ix *Index) markBroken(id string, err error) {
	ix.log.Warn("recall text unreadable; the session is read again at the next sync", zap.String("session", id), zap.Error(err))
	ix.brokenMu.Lock()
	ix.broken[id] = true
	ix.brokenMu.Unlock()
}

func (ix *Index) takeBroken() map[string]bool {
	ix.brokenMu.Lock()
	defer ix.brokenMu.Unlock()
	b := ix.broken
	ix.broken = map[string]bool{}
	return b
}

// Sync brings the index up to date with snap: sessions that are new or
// whose log changed (appended to, replaced, migrated to a new generation,
// newly corrupt) are projected again, sessions no longer listed are
// dropped. It then publishes a new view.
func (ix *Index) Sync(ctx context.Context, snap *titles.Snapshot) error {
	ix.syncMu.Lock()
	defer ix.syncMu.Unlock()
	broken := ix.takeBroken()
	// Pointers into snap, which does not change: a first build at
	// 100,000 sessions copied 24 MB of entries.
	var todo []*dshlog.Entry
	// kept and failedListed count the listed sessions that are indexed
	// or failed: a set of the listed ids (3 MB at 100,000 sessions, at
	// every sync) is made only when some are no longer listed.
	kept, failedListed := 0, 0
	for i := range snap.Sessions { // newest first
		e := &snap.Sessions[i]
		k := keyOf(e)
		d := ix.docs[e.ID]
		if d != nil {
			kept++
			if d.key == k && !broken[e.ID] {
				continue
			}
		}
		if fk, ok := ix.failed[e.ID]; ok {
			failedListed++
			if fk == k {
				continue
			}
		}
		todo = append(todo, e)
	}
	changed := len(todo) > 0
	ix.projected += len(todo)
	if kept < len(ix.docs) || failedListed < len(ix.failed) {
		listed := make(map[string]bool, len(snap.Sessions))
		for i := range snap.Sessions {
			listed[snap.Sessions[i].ID] = true
		}
		for id, d := range ix.docs {
			if !listed[id] {
				ix.dropDoc(d)
				changed = true
			}
		}
		for id := range ix.failed {
			if !listed[id] {
				delete(ix.failed, id)
			}
		}
	}
	var err error
	if len(todo) > 0 {
		err = ix.projectAll(ctx, todo)
	}
	if changed {
		ix.changes.Add(1)
	}
	ix.publish()
	if err != nil {
		return fmt.Errorf("recall index: %w", err)
	}
	ix.unchecked.Store(false)
	return nil
}

// dropDoc forgets d; its blocks become garbage.
func (ix *Index) dropDoc(d *doc) {
	delete(ix.docs, d.id)
	delete(ix.overlay, d.slot)
	if d.data == ix.data {
		ix.garbage += d.stored
	}
}

// built is one projected session, ready to be written.
type built struct {
	i int // in todo
	d *doc
	// ids are the sorted dictionary ids of its tokens.
	ids   []uint32
	grams []uint32
	// recs holds the records of its blocks, one after the other, and
	// lens their compressed lengths.
	recs []byte
	lens []uint32
	// warm are its blocks decoded, for the newest sessions of a sync
	// (warmSessions): the collector puts them in the block cache.
	warm        []*textBlock
	cur         *dshlog.ProjectionCursor
	err         error
	interrupted bool
}

// worker is what one projecting goroutine reuses from session to session.
type worker struct {
	f           *folder
	gs          *gramSet
	ts          *tokenSet
	folded, raw []byte
	// piece is appendRecordOf's buffer, filter the pair filter of the
	// block being written.
	piece, filter []byte
	pending       []rawMessage
	// reader reads the logs of sessions that keep no cursor; its texts
	// are valid until its next read, and build copies what it keeps.
	reader dshlog.ProjectionReader
	// free returns record buffers once written, for the next sessions;
	// freeIDs the token and gram id lists once posted (a first build's:
	// 86 MB of its allocations at 100,000 sessions were these lists).
	free    chan []byte
	freeIDs chan []uint32
	// yield is Options.Yield for this worker, its number k.
	yield func(context.Context, int)
	ctx   context.Context
	k     int
	// since counts the text read since the last pause.
	since int
}

// maxFreeIDs is the longest id list (in ids) a first build hands back to
// its workers: a session of unusually many tokens does not leave its
// array to every next one.
const maxFreeIDs = 1 << 14

// yieldEvery is how much text a worker reads between two pauses inside
// one session (about 0.1 ms of work).
const yieldEvery = 32 << 10

// warmSessions is how many of the newest sessions a sync reads have their
// first block put in the block cache as it is written, up to a quarter of
// it (2 MB by default, kept by a server that is not searched at all):
// the searches right after a first build read the newest sessions first,
// and found every block cold (read back, decompressed, folded again). A
// search cuts its excerpts from the first blocks that hold a hit, mostly
// a session's first: all the blocks of the newest sessions (as before)
// filled the quarter with the 3 newest of a 10,000-session store.
const warmSessions = 64

// maxWarmBlock is the largest first block a build keeps decoded: a block
// of one long message (a pasted log of 32 MiB) would cost its size twice
// more (a clone and its folding) for the lifetime of the cache; a search
// reads it back when it needs it.
const maxWarmBlock = 1 << 20

func newWorker(free chan []byte, freeIDs chan []uint32, yield func(context.Context, int), ctx context.Context, k int) *worker {
	return &worker{f: newFolder(), gs: newGramSet(), ts: newTokenSet(), free: free, freeIDs: freeIDs, yield: yield, ctx: ctx, k: k}
}

// pause gives way where Options.Yield says to.
func (w *worker) pause() {
	if w.yield != nil {
		w.yield(w.ctx, w.k)
	}
}

// projectAll reads the projections of todo in parallel and adds them: to
// the overlay when they are few and postings exist, else into new postings that also take
// over every current document (renumbered).
func (ix *Index) projectAll(ctx context.Context, todo []*dshlog.Entry) error {
	if ix.data == nil {
		d, err := createData(ix.opts.Path)
		if err != nil {
			return err
		}
		ix.data = d
	}
	prev := make([]*dshlog.ProjectionCursor, len(todo))
	for i := range todo {
		prev[i] = ix.takeCursor(todo[i].ID)
		if d := ix.docs[todo[i].ID]; d != nil {
			ix.dropDoc(d)
		}
	}
	var tb, gb *builder
	if len(todo) > overlayMax || len(ix.overlay)+len(todo) > overlayMax || len(ix.docs) == 0 {
		tb, gb = ix.seed(len(todo))
	}
	results := make(chan *built, ix.opts.Parallelism)
	free := make(chan []byte, 2*ix.opts.Parallelism+2)
	freeIDs := make(chan []uint32, 4*ix.opts.Parallelism+4)
	next := make(chan int)
	var finished atomic.Int64
	var wg sync.WaitGroup
	for k := 0; k < min(ix.opts.Parallelism, len(todo)); k++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := newWorker(free, freeIDs, ix.opts.Yield, ctx, k)
			for i := range next {
				results <- ix.build(ctx, w, i, todo[i], prev[i])
				if ix.opts.Progress != nil {
					ix.opts.Progress(int(finished.Add(1)), len(todo))
				}
			}
		}()
	}
	go func() {
		for i := range todo {
			if ctx.Err() != nil {
				break
			}
			next <- i
		}
		close(next)
		wg.Wait()
		close(results)
	}()
	var kept []cursorOf
	var werr error
	// A first build publishes its steps: the newest sessions (todo is
	// newest first, and so are the results, nearly) are searchable
	// after the first few, and then at every doubling and at least every
	// stepEvery, while the older ones are read.
	stepped := len(ix.docs) == 0 && tb != nil
	collected, nextStep, lastStep := 0, firstStep, time.Now()
	var warm int64 // bytes of blocks put in the cache
	for r := range results {
		collected++
		if stepped && werr == nil && (collected >= nextStep || time.Since(lastStep) >= stepEvery) && collected < len(todo) {
			if ix.publishStep(tb, gb, len(todo)-collected+1) {
				nextStep, lastStep = 2*collected, time.Now()
			}
		}
		e := todo[r.i]
		switch {
		case r.interrupted:
			continue
		case r.err != nil:
			ix.failed[e.ID] = keyOf(e)
			ix.log.Debug("session not searchable", zap.String("session", e.ID), zap.Error(r.err))
			continue
		case werr != nil:
			continue
		}
		var base int64
		base, werr = ix.data.appendRecords(r.recs)
		if werr == nil && ix.opts.Path != "" {
			ix.data.wrote(len(r.recs))
		}
		if werr == nil {
			refs := make([]blockRef, len(r.lens))
			for k, n := range r.lens {
				refs[k] = blockRef{off: base, n: n}
				base += recordHeaderLen + int64(n)
			}
			werr = r.d.setRefs(refs)
			for k, b := range r.warm {
				if warm += b.size(); warm > ix.opts.CacheBytes/4 {
					break
				}
				ix.cache.put(cacheKey{file: ix.data.id, off: refs[k].off}, b)
			}
		}
		if cap(r.recs) <= 1<<20 { // a large session's buffer is not kept
			select {
			case free <- r.recs[:0]:
			default:
			}
		}
		if werr != nil {
			continue
		}
		r.d.data, r.d.slot = ix.data, ix.nextSlot
		ix.nextSlot++
		ids := r.ids
		if tb != nil {
			tb.add(int(r.d.slot), ids)
			gb.add(int(r.d.slot), r.grams)
			// Posted: the builders keep slots, not the lists.
			for _, l := range [][]uint32{ids, r.grams} {
				if cap(l) <= maxFreeIDs {
					select {
					case freeIDs <- l[:0]:
					default:
					}
				}
			}
		} else {
			ix.overlay[r.d.slot] = overlayDoc{tokens: ids, grams: r.grams}
		}
		ix.docs[e.ID] = r.d
		ix.fresh = append(ix.fresh, r.d)
		delete(ix.failed, e.ID)
		// A cursor holds the log's surface: only the newest sessions
		// read keep theirs (todo is newest first), never a whole build's,
		// and only for logs of at most maxCursorLog bytes.
		if r.cur != nil && r.i < maxCursors && e.Offset <= maxCursorLog && int64(r.d.textBytes) <= maxCursorLog {
			kept = append(kept, cursorOf{id: e.ID, cur: r.cur})
		}
	}
	ix.keepCursors(kept)
	if tb != nil {
		ix.freeze(tb, gb)
	} else if len(ix.overlay) > overlayMax || int(ix.nextSlot) > 64+2*len(ix.docs) {
		ix.merge()
	}
	if werr != nil {
		return werr
	}
	return ctx.Err()
}

// build projects one session and lays out its blocks and grams.
func (ix *Index) build(ctx context.Context, w *worker, i int, e *dshlog.Entry, prev *dshlog.ProjectionCursor) *built {
	w.pause()
	// Only the newest sessions read keep a cursor (the collector's rule),
	// whose surface holds texts of their own; the others are read into the
	// worker's buffers: no string per message.
	var p *dshlog.Projection
	var cur *dshlog.ProjectionCursor
	var resumed bool
	var err error
	if i < maxCursors && e.Offset <= maxCursorLog {
		p, cur, resumed, err = dshlog.ReadProjectionFrom(ctx, *e, prev)
	} else {
		p, resumed, err = w.reader.ReadFrom(ctx, *e, prev)
	}
	if err != nil {
		return &built{i: i, err: err, interrupted: ctx.Err() != nil}
	}
	if resumed {
		ix.resumed.Add(1)
	}
	r := &built{i: i, cur: cur, d: &doc{id: e.ID, createdAt: e.CreatedAt, key: keyOf(e)}}
	select {
	case r.recs = <-w.free:
	default:
	}
	// Room for the records at once, as dshgen text compresses (42%, plus
	// filters and headers): growing them by doubling copied them about
	// once more, 4% of a first build's CPU. At most maxReserve: a session
	// of one huge message grows its records as it writes them, rather
	// than holding half its text more from the start (issue 31 item 5:
	// the process's peak follows the message).
	total := 0
	for _, m := range p.Messages {
		total += len(m.Text)
	}
	r.recs = slices.Grow(r.recs, min(total/2, maxReserve)+recordHeaderLen+binary.MaxVarintLen64)
	w.gs.reset()
	w.ts.reset()
	size := 0
	var text, folded int64
	flush := func() {
		if len(w.pending) > 0 {
			w.filter = w.ts.appendFilter(w.filter[:0])
			if i < warmSessions && len(r.lens) == 0 && size <= maxWarmBlock {
				w.raw = encodeBlock(w.raw[:0], w.pending)
				if b, err := decodeBlock(bytes.Clone(w.raw), w.f); err == nil { // w.raw is reused
					b.filter = bytes.Clone(w.filter)
					r.warm = append(r.warm, b)
				}
			}
			var n uint32
			r.recs, w.piece, n = appendRecordOf(r.recs, w.piece, w.pending, w.filter)
			r.lens = append(r.lens, n)
			clear(w.pending)
			w.pending, size = w.pending[:0], 0
		}
	}
	for k, m := range p.Messages {
		if len(w.pending) == 0 {
			w.ts.startBlock(blockText(p.Messages[k:]))
		}
		if w.since += len(m.Text); w.since >= yieldEvery {
			w.since = 0
			w.pause()
		}
		text += int64(len(m.Text))
		w.ts.startMessage()
		folded += int64(w.addText(m.Text) + 1)
		w.pending = append(w.pending, rawMessage{role: m.Role, seq: m.Seq, text: m.Text})
		if size += len(m.Text); size >= blockTarget {
			flush()
		}
	}
	flush()
	r.d.textBytes, r.d.foldedBytes = size32(text), size32(folded)
	if cap(w.folded) > 1<<20 {
		w.folded = nil // one huge message is not kept for every next session
	}
	if cap(w.raw) > 1<<20 {
		w.raw = nil
	}
	for _, n := range r.lens {
		if n > maxBlockBytes {
			return &built{i: i, err: fmt.Errorf("a text block of %d bytes exceeds %d", n, maxBlockBytes)}
		}
	}
	var ids, grams []uint32
	select {
	case ids = <-w.freeIDs:
	default:
	}
	select {
	case grams = <-w.freeIDs:
	default:
	}
	r.grams, r.d.long = w.gs.appendSorted(grams), w.ts.long
	r.ids = ix.dict.appendIDsOfSet(ids, w.ts)
	return r
}

// maxReserve bounds the records a build reserves for a session at once:
// the buffers a first build hands back to its workers are at most 1 MiB.
const maxReserve = 1 << 20

// blockText is the text of the block that starts with msgs[0]: the
// messages up to the one that brings it to blockTarget bytes.
func blockText(msgs []dshlog.ProjectedMessage) int {
	n := 0
	for _, m := range msgs {
		if n += len(m.Text); n >= blockTarget {
			break
		}
	}
	return n
}

// seed returns builders of the token and gram postings holding every
// current document, renumbered from 0 in slot order (published copies of
// the documents get their new slot), expecting extra sessions more.
func (ix *Index) seed(extra int) (tokens, grams *builder) {
	cur := make([]*doc, 0, len(ix.docs))
	for _, d := range ix.docs {
		cur = append(cur, d)
	}
	sort.Slice(cur, func(i, j int) bool { return cur[i].slot < cur[j].slot })
	remap := make([]int32, ix.nextSlot)
	for i := range remap {
		remap[i] = -1
	}
	for i, d := range cur {
		remap[d.slot] = int32(i)
	}
	tokens, grams = newDenseBuilder(), newBuilder()
	tokens.expect(len(cur) + extra)
	grams.expect(len(cur) + extra)
	tokens.seed(ix.tokBase, remap[:min(len(remap), ix.tokBase.n)])
	grams.seed(ix.gramBase, remap[:min(len(remap), ix.gramBase.n)])
	over := make([]int32, 0, len(ix.overlay))
	for s := range ix.overlay {
		over = append(over, s)
	}
	slices.Sort(over)
	for _, s := range over {
		if int(s) < len(remap) && remap[s] >= 0 {
			tokens.add(int(remap[s]), ix.overlay[s].tokens)
			grams.add(int(remap[s]), ix.overlay[s].grams)
		}
	}
	for i, d := range cur {
		c := *d
		c.slot = int32(i)
		ix.docs[d.id] = &c
	}
	ix.nextSlot = int32(len(cur))
	tokens.n, grams.n = len(cur), len(cur)
	return tokens, grams
}

// freeze makes the builders the postings; the overlay is then empty.
func (ix *Index) freeze(tokens, grams *builder) {
	grams.n = max(grams.n, tokens.n)
	tokens.n = grams.n
	ix.tokBase, ix.gramBase, ix.overlay = tokens.postings(), grams.postings(), map[int32]overlayDoc{}
	ix.nextSlot = int32(ix.tokBase.n)
}

// merge folds the overlay into the postings and drops the slots of
// documents no longer current.
func (ix *Index) merge() {
	ix.freeze(ix.seed(0))
}

// takeCursor removes and returns the kept cursor of id, if any.
func (ix *Index) takeCursor(id string) *dshlog.ProjectionCursor {
	for i, c := range ix.cursors {
		if c.id == id {
			ix.cursors = slices.Delete(ix.cursors, i, i+1)
			return c.cur
		}
	}
	return nil
}

// keepCursors keeps the cursors of the sessions just read (newest
// session first) ahead of the older ones, up to maxCursors.
func (ix *Index) keepCursors(kept []cursorOf) {
	sort.SliceStable(kept, func(i, j int) bool { return ix.docs[kept[i].id].createdAt > ix.docs[kept[j].id].createdAt })
	ix.cursors = append(kept, ix.cursors...)
	if len(ix.cursors) > maxCursors {
		clear(ix.cursors[maxCursors:])
		ix.cursors = ix.cursors[:maxCursors]
	}
}

// publishStep publishes the documents read so far by a first build, over
// postings that share the builders' arrays (which go on growing past
// them), and reports whether it did. It takes the slots below the
// largest multiple of 64 the builders reached: the words of their bitsets
// below it never change again, and the slots of their lists are appended
// past it. Copies of the postings at every step were 0.12 GB of a first
// build's allocations at 100,000 sessions, and two of them (the last
// view's and the next) were live at once. pending sessions are still to
// come, and so are the documents at slots past the step's.
func (ix *Index) publishStep(tb, gb *builder, pending int) bool {
	n := max(tb.n, gb.n) &^ 63
	if n == 0 {
		return false
	}
	ix.publishWith(tb.prefix(n), gb.prefix(n), nil, pending, int32(n))
	return true
}

// publish builds the next view; the writer holds syncMu.
func (ix *Index) publish() { ix.publishWith(ix.tokBase, ix.gramBase, ix.overlay, 0, math.MaxInt32) }

// newestFirst orders documents as views list them: createdAt descending,
// then id.
func newestFirst(a, b *doc) int {
	if c := cmp.Compare(b.createdAt, a.createdAt); c != 0 {
		return c
	}
	return cmp.Compare(a.id, b.id)
}

// orderOf returns the current documents at slots below below, newest
// first, and how many were left out. Sorting every document at every
// publish took 150-380 ms at 100,000 sessions (busy machine): unless many
// documents are fresh (set since the last publish) or ix.resort is set,
// the last view's order is walked instead, each document replaced by its
// current copy (a merge or compaction copies documents, which keep their
// place), and the fresh ones, sorted, are merged in. Fresh documents left
// out stay fresh for the next publish.
func (ix *Index) orderOf(below int32) ([]*doc, int) {
	var fresh []*doc // the fresh documents left out
	for _, d := range ix.fresh {
		if ix.docs[d.id] == d && d.slot >= below {
			fresh = append(fresh, d)
		}
	}
	if !ix.resort && len(ix.fresh) <= len(ix.docs)/8 {
		if all := ix.mergedOrder(below); len(all)+len(fresh) == len(ix.docs) {
			ix.fresh = fresh
			return all, len(fresh)
		}
		// A document is neither fresh nor in the last view (its copy
		// by a merge of the postings was made after it was set).
	}
	all := make([]*doc, 0, len(ix.docs))
	left := 0
	for _, d := range ix.docs {
		if d.slot < below {
			all = append(all, d)
		} else {
			left++
		}
	}
	slices.SortFunc(all, newestFirst)
	ix.fresh, ix.resort = fresh, false
	return all, left
}

// mergedOrder is the last view's order with each document replaced by its
// current copy, fresh ones merged in, those at slots from below on left
// out.
func (ix *Index) mergedOrder(below int32) []*doc {
	all := make([]*doc, 0, len(ix.docs))
	isFresh := make(map[*doc]bool, len(ix.fresh))
	var add []*doc
	for _, d := range ix.fresh {
		if ix.docs[d.id] == d && !isFresh[d] {
			isFresh[d] = true
			if d.slot < below {
				add = append(add, d)
			}
		}
	}
	slices.SortFunc(add, newestFirst)
	for _, d := range ix.cur.Load().order {
		c := ix.docs[d.id]
		if c == nil || isFresh[c] || c.slot >= below {
			continue
		}
		for len(add) > 0 && newestFirst(add[0], c) < 0 {
			all, add = append(all, add[0]), add[1:]
		}
		all = append(all, c)
	}
	return append(all, add...)
}

// publishWith publishes the current documents over the given postings,
// those at slots from below on left out (and counted as pending).
func (ix *Index) publishWith(tok, grams *postings, overlay map[int32]overlayDoc, pending int, below int32) {
	all, left := ix.orderOf(below)
	pending += left
	d := ix.dict
	v := &view{tok: tok, grams: grams, overlay: make(map[int32]overlayDoc, len(overlay)), dict: d.list(), dicts: d,
		order: all}
	var overlayBytes int64
	for s, o := range overlay {
		v.overlay[s] = o
		overlayBytes += int64(len(o.tokens)+len(o.grams)) * 4
	}
	for _, d := range all {
		v.stats.TextBytes += int64(d.textBytes)
		v.stats.FoldedBytes += int64(d.foldedBytes)
	}
	if ix.data != nil {
		v.stats.StoredBytes = ix.data.Size()
	}
	v.stats.Sessions, v.stats.Failed, v.stats.Projected = len(all), len(ix.failed), ix.projected
	v.stats.PostingBytes = tok.bytes + grams.bytes + overlayBytes
	v.stats.Tokens, v.stats.Grams, v.stats.Unposted = len(v.dict), grams.size(), len(overlay)
	v.stats.Resumed = ix.resumed.Load()
	v.stats.Pending = pending
	v.stats.Synced = time.Now()
	ix.cur.Store(v)
	if ix.opts.Published != nil {
		ix.opts.Published(v.stats)
	}
}

// errCancelled is returned by Search when ctx ends first.
var errCancelled = errors.New("search cancelled")
