// Package recall finds sessions by what was said in them: for every
// session of a title index it keeps the projected text of SPEC §2.3.3,
// exactly what a reference to the session would recall, and answers
// case-insensitive substring queries over it.
//
// Each session's messages are kept as read plus their case folding
// (fold.go); a trigram posting index over the folded text rules out
// sessions before an exact substring check, which alone decides a match.
// Postings are built for the whole set at once and never change: a session
// whose log changed is projected again and searched beside them until the
// next rebuild.
package recall

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/dsh-refls/dsh-refls/sessionref"
)

// Options configure a recall index.
type Options struct {
	// Logger receives projection failures; nil logs nothing.
	Logger *zap.Logger
	// Parallelism bounds how many logs are projected at once; 0 means
	// 2 × GOMAXPROCS.
	Parallelism int
	// MaxTextBytes bounds the memory of the index: sessions are indexed
	// newest first while their text (as read plus folded) fits, older
	// ones are left out and counted in Stats.Unindexed. A session not yet
	// projected is estimated at twice its log's size. 0 means DefaultMaxTextBytes.
	MaxTextBytes int64
	// Progress, when set, is told how many of the sessions a Sync
	// projects are done, out of how many, after each one. It is called
	// from several goroutines at once, and done may arrive out of order.
	Progress func(done, total int)
}

// DefaultMaxTextBytes is the default text budget of an index.
const DefaultMaxTextBytes = 256 << 20

// Index is the recall index. Sync has one caller at a time; Search may be
// called from any goroutine at any time and reads an immutable view.
type Index struct {
	opts Options
	log  *zap.Logger

	syncMu sync.Mutex
	docs   map[string]*doc     // current documents by session id
	failed map[string]entryKey // sessions whose projection failed, until they change
	// unindexed counts the sessions the text budget left out.
	unindexed int
	projected int
	base      *postings
	// changes counts the syncs and loads that changed docs (Changes).
	changes atomic.Uint64
	// resumed counts the reads that went on from where the last one ended.
	resumed atomic.Int64

	cur atomic.Pointer[view]
}

// entryKey is what tells that a session's log changed since its projection.
type entryKey struct {
	path          string
	offset        int64
	lastSeq       int64
	generation    int
	formatVersion int
	corrupt       string
}

func keyOf(e *sessionref.Entry) entryKey {
	return entryKey{path: e.Path, offset: e.Offset, lastSeq: e.LastSeq, generation: e.Generation,
		formatVersion: e.FormatVersion, corrupt: e.Corrupt}
}

// doc is the projected text of one session. It never changes once built.
type doc struct {
	id        string
	createdAt int64
	key       entryKey
	// cur is where the read of the log ended, for the next sync to go on
	// from when the log only grew; only Sync touches it.
	cur *sessionref.ProjectionCursor
	// folded holds the folding of every message, each followed by NUL.
	folded string
	msgs   []message
}

// size is the memory the text of d holds, as read plus folded.
func (d *doc) size() int64 {
	n := int64(len(d.folded))
	for _, m := range d.msgs {
		n += int64(len(m.text))
	}
	return n
}

// message is one projected message and where its folding lies in folded.
type message struct {
	role         string
	seq          int64
	text         string
	fStart, fEnd int
}

// view is what searches read: the postings, which of their documents are
// still current, and the current documents they do not hold.
type view struct {
	base  *postings
	alive []bool // parallel to base.docs
	// order is every current document, newest first (createdAt
	// descending, then id), with its slot in base or -1.
	order []ordered
	byID  map[string]ordered
	stats Stats
}

type ordered struct {
	d    *doc
	slot int32
}

// Stats describe the index.
type Stats struct {
	// Sessions is how many sessions have a projection.
	Sessions int `json:"sessions"`
	// Failed is how many sessions could not be projected.
	Failed int `json:"failed"`
	// TextBytes is the size of the projected text; FoldedBytes of its folding.
	TextBytes   int64 `json:"textBytes"`
	FoldedBytes int64 `json:"foldedBytes"`
	// PostingBytes is the memory of the posting lists and bitsets.
	PostingBytes int64 `json:"postingBytes"`
	// Unposted is how many sessions changed since the postings were built
	// and are searched by a scan until the next rebuild.
	Unposted int `json:"unposted"`
	// Grams is how many distinct grams the postings hold.
	Grams int `json:"grams"`
	// Unindexed is how many listed sessions, the oldest, were left out
	// because the text budget was spent.
	Unindexed int `json:"unindexed"`
	// Projected is how many sessions were read from their logs since the
	// index was opened or loaded from its stored copy (new or changed ones).
	Projected int `json:"projected"`
	// Resumed is how many of those reads went on from where the previous
	// read of the same log ended, reading only the appended bytes.
	Resumed int64 `json:"resumed"`
	// Synced is when the view was published.
	Synced time.Time `json:"synced"`
}

// New returns an empty recall index; Sync fills it.
func New(opts Options) *Index {
	if opts.Parallelism <= 0 {
		opts.Parallelism = 2 * runtime.GOMAXPROCS(0)
	}
	if opts.MaxTextBytes <= 0 {
		opts.MaxTextBytes = DefaultMaxTextBytes
	}
	lg := opts.Logger
	if lg == nil {
		lg = zap.NewNop()
	}
	ix := &Index{opts: opts, log: lg, docs: map[string]*doc{}, failed: map[string]entryKey{}}
	ix.cur.Store(&view{base: &postings{slot: map[*doc]int32{}}, byID: map[string]ordered{}})
	return ix
}

// Stats returns the statistics of the current view.
func (ix *Index) Stats() Stats { return ix.cur.Load().stats }

// Synced reports whether a view has been published since New.
func (ix *Index) Synced() bool { return !ix.cur.Load().stats.Synced.IsZero() }

// Sync brings the index up to date with snap: sessions that are new or
// whose log changed (appended to, replaced, migrated to a new generation,
// newly corrupt) are projected again, sessions no longer listed are
// dropped. It then publishes a new view.
func (ix *Index) Sync(ctx context.Context, snap *sessionref.Snapshot) error {
	ix.syncMu.Lock()
	defer ix.syncMu.Unlock()
	listed := make(map[string]bool, len(snap.Sessions))
	var todo []sessionref.Entry
	var used int64
	ix.unindexed = 0
	for i := range snap.Sessions { // newest first
		e := &snap.Sessions[i]
		k := keyOf(e)
		d := ix.docs[e.ID]
		// A log not yet projected is estimated at twice its size: its
		// projected text is at most the log, held as read plus folded.
		cost := 2 * max(e.Offset, 0)
		if d != nil && d.key == k {
			cost = d.size()
		}
		if used+cost > ix.opts.MaxTextBytes {
			ix.unindexed = len(snap.Sessions) - i
			break
		}
		used += cost
		listed[e.ID] = true
		if d != nil && d.key == k {
			continue
		}
		if fk, ok := ix.failed[e.ID]; ok && fk == k {
			continue
		}
		todo = append(todo, *e)
	}
	changed := len(todo) > 0
	ix.projected += len(todo)
	for id := range ix.docs {
		if !listed[id] {
			delete(ix.docs, id)
			changed = true
		}
	}
	for id := range ix.failed {
		if !listed[id] {
			delete(ix.failed, id)
		}
	}
	prev := make([]*sessionref.ProjectionCursor, len(todo))
	for i := range todo {
		if d := ix.docs[todo[i].ID]; d != nil {
			prev[i], d.cur = d.cur, nil // spent by the read
		}
	}
	docs, errs, err := ix.project(ctx, todo, prev)
	for i, e := range todo {
		switch {
		case docs[i] != nil:
			ix.docs[e.ID] = docs[i]
			delete(ix.failed, e.ID)
		case errs[i] != nil:
			delete(ix.docs, e.ID)
			ix.failed[e.ID] = keyOf(&todo[i])
			ix.log.Debug("session not searchable", zap.String("session", e.ID), zap.Error(errs[i]))
		}
	}
	if changed {
		ix.changes.Add(1)
	}
	ix.publish()
	if err != nil {
		return fmt.Errorf("recall index: %w", err)
	}
	return nil
}

// project reads the projections of entries in parallel. A nil doc with a
// nil error means the read was cut short by ctx.
func (ix *Index) project(ctx context.Context, entries []sessionref.Entry, prev []*sessionref.ProjectionCursor) ([]*doc, []error, error) {
	docs := make([]*doc, len(entries))
	errs := make([]error, len(entries))
	next := make(chan int)
	var finished atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < min(ix.opts.Parallelism, max(1, len(entries))); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f := newFolder()
			for i := range next {
				p, cur, resumed, err := sessionref.ReadProjectionFrom(ctx, entries[i], prev[i])
				switch {
				case err == nil:
					if resumed {
						ix.resumed.Add(1)
					}
					docs[i] = newDoc(f, &entries[i], p)
					docs[i].cur = cur
				case ctx.Err() == nil:
					errs[i] = err
				}
				if ix.opts.Progress != nil {
					ix.opts.Progress(int(finished.Add(1)), len(entries))
				}
			}
		}()
	}
	var err error
	for i := range entries {
		if err = ctx.Err(); err != nil {
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
	return docs, errs, err
}

func newDoc(f *folder, e *sessionref.Entry, p *sessionref.Projection) *doc {
	d := &doc{id: e.ID, createdAt: e.CreatedAt, key: keyOf(e), msgs: make([]message, 0, len(p.Messages))}
	size := 0
	for _, m := range p.Messages {
		size += len(m.Text) + 1
	}
	buf := make([]byte, 0, size+size/16)
	for _, m := range p.Messages {
		start := len(buf)
		buf = f.appendFold(buf, m.Text)
		d.msgs = append(d.msgs, message{role: m.Role, seq: m.Seq, text: m.Text, fStart: start, fEnd: len(buf)})
		buf = append(buf, 0)
	}
	d.folded = string(buf)
	return d
}

// rebuildNeeded reports whether the documents outside the postings are
// enough to make a rebuild worth it.
func rebuildNeeded(base *postings, unposted int, unpostedBytes, total int64) bool {
	if base == nil || base.docs == nil {
		return true
	}
	return unposted > 64+len(base.docs)/32 || unpostedBytes > 16<<20+total/8
}

// publish builds the next view; the writer holds syncMu.
func (ix *Index) publish() {
	all := make([]*doc, 0, len(ix.docs))
	var total, unpostedBytes int64
	unposted := 0
	for _, d := range ix.docs {
		all = append(all, d)
		total += int64(len(d.folded))
		if ix.base == nil {
			continue
		}
		if _, ok := ix.base.slot[d]; !ok {
			unposted++
			unpostedBytes += int64(len(d.folded))
		}
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].createdAt != all[j].createdAt {
			return all[i].createdAt > all[j].createdAt
		}
		return all[i].id < all[j].id
	})
	if rebuildNeeded(ix.base, unposted, unpostedBytes, total) {
		ix.base = buildPostings(all, ix.opts.Parallelism)
	}
	v := &view{base: ix.base, alive: make([]bool, len(ix.base.docs)), order: make([]ordered, len(all)),
		byID: make(map[string]ordered, len(all))}
	for i, d := range all {
		s, ok := ix.base.slot[d]
		if ok {
			v.alive[s] = true
		} else {
			s = -1
			v.stats.Unposted++
		}
		v.order[i] = ordered{d: d, slot: s}
		v.byID[d.id] = v.order[i]
		v.stats.FoldedBytes += int64(len(d.folded))
		for _, m := range d.msgs {
			v.stats.TextBytes += int64(len(m.text))
		}
	}
	v.stats.Sessions, v.stats.Failed, v.stats.Unindexed, v.stats.Projected = len(all), len(ix.failed), ix.unindexed, ix.projected
	v.stats.PostingBytes, v.stats.Grams = ix.base.bytes, len(ix.base.lists)+len(ix.base.bits)
	v.stats.Resumed = ix.resumed.Load()
	v.stats.Synced = time.Now()
	ix.cur.Store(v)
}

// errCancelled is returned by Search when ctx ends first.
var errCancelled = errors.New("search cancelled")
