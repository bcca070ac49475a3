package titles

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/dsh-refls/dsh-refls/sessionref/dshlog"
	"github.com/dsh-refls/dsh-refls/sessionref/internal/idorder"
)

// Snapshot is an immutable view of the title index. Readers may keep it as
// long as they like; the index publishes a new one after every change.
type Snapshot struct {
	// Root is the sessions root.
	Root string
	// Sessions are the listed sessions, newest first (createdAt descending,
	// ties by id).
	Sessions []dshlog.Entry
	// Skipped are sessions and files left out, with reasons.
	Skipped []dshlog.Skipped
	// Updated is when this snapshot was published.
	Updated time.Time
	// Building is true until the first build finished.
	Building bool
	// UnknownEvents counts the events of v4 logs whose type is outside the
	// v4 vocabulary, over all listed sessions; they are skipped (§1.7).
	UnknownEvents int

	byID   map[string]int
	search searchColumns // parallel to Sessions
	// cwdOf numbers each session's cwd (-1: none), parallel to Sessions,
	// so grouping a query's matches compares integers; cwds maps a cwd to
	// its number.
	cwdOf []int32
	cwds  map[string]int32
	// spelling caches spellingOf's last answer (cwdspelling.go).
	spelling lastSpelling
	queries  queryCache
	// scratch lends per-query buffers; shared by the snapshots of one index.
	scratch *sync.Pool
	// orders are the walk orders of lazy ranking (topk.go), shared by the
	// snapshots that share Sessions.
	orders *snapshotOrders
}

// Locate finds a listed session by id. It implements prepare.Locator.
func (s *Snapshot) Locate(id string) (dshlog.Entry, bool) {
	i, ok := s.byID[id]
	if !ok {
		return dshlog.Entry{}, false
	}
	return s.Sessions[i], true
}

// searchText is the lowercased text a query matches, computed once per
// change of an entry so queries never lowercase anything.
type searchText struct {
	// all joins id, cwd, title and display title with a byte no query spans.
	all                string
	id, title, display string
	// bytes is the set of byte values in all: a query holding a byte that
	// is not in it cannot match, and a one-byte query needs nothing else.
	bytes byteSet
	// pairs summarises the adjacent byte pairs of all: a query holding a
	// pair whose bit is clear cannot match, which rules out most sessions
	// before any substring search.
	pairs pairSet
}

// pairSet is a 512-bit summary of the adjacent byte pairs of a text.
type pairSet [8]uint64

// pairBit is the bit of the byte pair a, b in a pairSet.
func pairBit(a, b byte) uint {
	return (uint(a)*31 + uint(b)) & 511
}

// pairSetOf returns the pair summary of s.
func pairSetOf[T ~string | ~[]byte](s T) pairSet {
	var set pairSet
	for i := 1; i < len(s); i++ {
		bit := pairBit(s[i-1], s[i])
		set[bit>>6] |= 1 << (bit & 63)
	}
	return set
}

// covers reports whether every pair bit of need is in set.
func (set *pairSet) covers(need *pairSet) bool {
	for i := range set {
		if need[i]&^set[i] != 0 {
			return false
		}
	}
	return true
}

// byteSet is a set of byte values.
type byteSet [4]uint64

// byteSetOf returns the set of the bytes of s.
func byteSetOf[T ~string | ~[]byte](s T) byteSet {
	var set byteSet
	for i := 0; i < len(s); i++ {
		set[s[i]>>6] |= 1 << (s[i] & 63)
	}
	return set
}

// covers reports whether every byte of need is in set.
func (set *byteSet) covers(need *byteSet) bool {
	return need[0]&^set[0] == 0 && need[1]&^set[1] == 0 && need[2]&^set[2] == 0 && need[3]&^set[3] == 0
}

func newSearchText(e *dshlog.Entry) searchText {
	id, title, display := foldCase(e.ID), foldCase(e.Title), foldCase(e.DisplayTitle())
	all := id + "\x00" + foldCase(e.Cwd) + "\x00" + title + "\x00" + display
	// The parts are substrings of all: one string per session.
	titleEnd := len(all) - len(display) - 1
	st := searchText{all: all, id: all[:len(id)], title: all[titleEnd-len(title) : titleEnd], display: all[len(all)-len(display):]}
	st.bytes, st.pairs = byteSetOf(all), pairSetOf(all)
	return st
}

// publishLocked builds and publishes a snapshot from the writer's state.
// When nothing changed since the last publish (a restart whose build found
// every log as the cache left it), the new snapshot shares the last one's
// sessions, search text and skips: only its time and Building differ.
func (ix *Index) publishLocked(building bool) {
	if prev := ix.snap.Load(); !ix.dirty && prev != nil && prev.byID != nil {
		snap := &Snapshot{Root: prev.Root, Sessions: prev.Sessions, Skipped: prev.Skipped, Updated: time.Now(), Building: building,
			UnknownEvents: prev.UnknownEvents, byID: prev.byID, search: prev.search, cwdOf: prev.cwdOf, cwds: prev.cwds, scratch: prev.scratch, orders: prev.orders}
		ix.snap.Store(snap)
		return
	}
	ix.storeLocked(ix.snapshotLocked(building, nil))
}

// snapshotLocked builds the snapshot of the writer's changed state, which
// storeLocked then publishes; the writer's entries and search texts become
// the snapshot's. order is every tracked session in the order to check
// first (see listedLocked), or nil.
func (ix *Index) snapshotLocked(building bool, order []*tracked) *Snapshot {
	ix.dirty = false
	ix.changes++
	snap := &Snapshot{Root: ix.root, Updated: time.Now(), Building: building, scratch: &ix.scratch, orders: &snapshotOrders{}}
	listed := ix.listedLocked(snap, order)
	// Each id's position in listed, -1 when it is listed twice: then all
	// its directories are skipped.
	pos := make(map[string]int, len(listed))
	repeated := 0
	for i, t := range listed {
		// One map operation per session; a repeated id is then marked.
		n := len(pos)
		if pos[t.entry.ID] = i; len(pos) == n {
			pos[t.entry.ID] = -1
			repeated++
		}
	}
	var count map[string]int // only when an id is repeated
	if repeated > 0 {
		count = make(map[string]int, repeated)
		for _, t := range listed {
			if pos[t.entry.ID] < 0 {
				count[t.entry.ID]++
			}
		}
	}
	snap.Sessions = make([]dshlog.Entry, 0, len(listed))
	// When the listed sessions are those of ix.cols in its order (the
	// snapshot after LoadCache), the columns are shared, not copied.
	reuse := repeated == 0 && ix.cols.len() == len(listed)
	for i := 0; reuse && i < len(listed); i++ {
		reuse = listed[i].fresh == nil && listed[i].col == int32(i)+1
	}
	var cols *columnsBuilder
	if !reuse {
		textBytes := 0
		for _, t := range listed {
			textBytes += ix.searchLen(t) + 1
		}
		cols = newColumnsBuilder(len(listed), textBytes)
	}
	var fold []byte                         // addEntry's buffer
	own := make([]*tracked, 0, len(listed)) // whose search text is the snapshot's
	snap.cwdOf = make([]int32, 0, len(listed))
	snap.cwds = map[string]int32{}
	parents := map[string]*dshlog.Entry{} // sessions whose catalog names children
	for _, t := range listed {
		if len(t.entry.ChildLabels) > 0 && (repeated == 0 || pos[t.entry.ID] >= 0) {
			parents[t.entry.ID] = t.entry
		}
	}
	for _, t := range listed {
		if repeated > 0 && pos[t.entry.ID] < 0 { // no lookup when no id repeats
			reason := fmt.Sprintf("session id %q appears in %d directories; all are skipped", t.entry.ID, count[t.entry.ID])
			snap.Skipped = append(snap.Skipped, dshlog.Skipped{Path: t.dir.Path(), Reason: reason})
			ix.keepOwnSearch(t)
			continue
		}
		e, shared := *t.entry, true
		if p := parents[e.ParentSession]; p != nil && e.ParentSession != "" {
			if label := p.ChildLabels[e.ID]; label != "" {
				e.CatalogLabel = label
				if e.DescriptorLabel == "" {
					shared = false
				}
			}
		}
		if !shared {
			if reuse { // the columns hold what this one no longer lists under
				reuse = false
				textBytes := 0
				for _, t := range listed {
					textBytes += ix.searchLen(t) + 1
				}
				cols = newColumnsBuilder(len(listed), textBytes)
				for i := range snap.Sessions {
					st := ix.cols.at(int32(i))
					cols.add(&st)
				}
			}
			cols.addEntry(&e, &fold)
			ix.keepOwnSearch(t)
		} else if !reuse {
			if t.fresh == nil && t.col == 0 {
				cols.addEntry(&e, &fold) // read since the last publish
			} else {
				st := ix.searchOf(t)
				cols.add(&st)
			}
		}
		snap.appendSession(&e)
		if shared {
			own = append(own, t)
		} else {
			own = append(own, nil)
		}
	}
	if repeated == 0 {
		snap.byID = pos // listed and Sessions are the same list
	} else {
		snap.byID = make(map[string]int, len(snap.Sessions))
		for i := range snap.Sessions {
			snap.byID[snap.Sessions[i].ID] = i
		}
	}
	if reuse {
		snap.search = ix.cols
	} else {
		snap.search = cols.done()
	}
	ix.cols = snap.search
	// The writer's entries become the snapshot's and its search texts
	// parts of the snapshot's columns, so the copies they were built in
	// can be freed.
	for i, t := range own {
		if t != nil {
			t.col, t.fresh = int32(i)+1, nil
			t.entry, t.shared = &snap.Sessions[i], true
		}
	}
	ix.finishLocked(snap)
	return snap
}

// appendSession lists e, numbering its cwd.
func (snap *Snapshot) appendSession(e *dshlog.Entry) {
	snap.Sessions = append(snap.Sessions, *e)
	cwd := int32(-1)
	if dir, has := e.EffectiveCwd(); has {
		cwd = snap.numberCwd(dir)
	}
	snap.cwdOf = append(snap.cwdOf, cwd)
}

// numberCwd is the number of dir in snap.cwds, a new one when it has none.
func (snap *Snapshot) numberCwd(dir string) int32 {
	n, ok := snap.cwds[dir]
	if !ok {
		n = int32(len(snap.cwds))
		snap.cwds[dir] = n
	}
	return n
}

// finishLocked adds the skips of files to snap, sorted, and counts its
// unknown events.
func (ix *Index) finishLocked(snap *Snapshot) {
	for i := range snap.Sessions {
		snap.UnknownEvents += snap.Sessions[i].UnknownEvents
	}
	snap.hiddenSet() // built by the writer, not by the first query
	ix.finishSkipsLocked(snap)
}

// finishSkipsLocked adds the skips of files to snap, sorted.
func (ix *Index) finishSkipsLocked(snap *Snapshot) {
	for _, s := range ix.skipped {
		snap.Skipped = append(snap.Skipped, s)
	}
	sort.Slice(snap.Skipped, func(i, j int) bool { return snap.Skipped[i].Path < snap.Skipped[j].Path })
}

// restoredSnapshotLocked builds the snapshot LoadCache publishes from the
// restored blocks without copying them: the listed sessions are the first
// entries decoded, their columns those rc holds, and their cwds are
// numbered from the cache's table. It applies when the sessions are
// listed first and in a snapshot's order, each with its cached search text
// and under its own label, and no id repeats (ids waits for the map of
// ids another core builds; meanwhile the walk order by activity, which the
// first query needs, is built); otherwise it returns nil having changed
// nothing but rc's cwd numbers, and snapshotLocked builds the snapshot.
func (ix *Index) restoredSnapshotLocked(blocks []cacheBlock, rc *restoredCache, ids func() *listedIDs) *Snapshot {
	var prev *tracked
	var order idorder.Order
	parents := false
	for i := range blocks {
		b := &blocks[i]
		if !b.sorted || b.fresh || (b.firstT != nil && prev != nil && listedBefore(b.firstT, prev, &order)) {
			return nil // sorted again, or not the columns' text
		}
		if b.lastT != nil {
			prev = b.lastT
		}
		parents = parents || b.parents
	}
	listed := rc.tracked[:rc.listed]
	for i := range listed {
		if listed[i].skipReason() != "" {
			return nil // not the listed sessions first
		}
	}
	if parents {
		byID := map[string]*dshlog.Entry{}
		for i := range listed {
			if e := listed[i].entry; len(e.ChildLabels) > 0 {
				byID[e.ID] = e
			}
		}
		for i := range listed {
			e := listed[i].entry
			if p := byID[e.ParentSession]; p != nil && e.ParentSession != "" && p.ChildLabels[e.ID] != "" {
				return nil // listed under its parent's label
			}
		}
	}
	snap := &Snapshot{Root: ix.root, Updated: time.Now(), Building: true, scratch: &ix.scratch, orders: &snapshotOrders{}}
	for i := rc.listed; i < len(rc.tracked); i++ {
		t := &rc.tracked[i]
		snap.Skipped = append(snap.Skipped, dshlog.Skipped{Path: t.dir.Path(), Reason: t.skipReason()})
	}
	// The cwds are numbered in the order they first appear, as
	// appendSession numbers them.
	snap.cwds = map[string]int32{}
	number := make([]int32, len(rc.cwds))
	for c := range number {
		number[c] = -1
	}
	for k, c := range rc.cwdOf {
		if dir := rc.entries[k].WorkDir; dir != "" {
			// Grouped by the directory the log moved to.
			rc.cwdOf[k] = snap.numberCwd(dir)
			continue
		}
		if c < 0 {
			continue
		}
		if number[c] < 0 {
			number[c] = snap.numberCwd(rc.cwds[c].cwd)
		}
		rc.cwdOf[k] = number[c]
	}
	for i := range blocks {
		snap.UnknownEvents += blocks[i].unknown
	}
	snap.Sessions, snap.cwdOf = rc.entries[:rc.listed:rc.listed], rc.cwdOf
	snap.search = ix.cols
	snap.walkOrder(true)
	snap.hiddenSet()
	p := ids()
	if p.repeated > 0 {
		return nil
	}
	snap.byID = p.pos
	ix.dirty = false
	ix.changes++
	for i := range listed {
		listed[i].shared = true
	}
	ix.finishSkipsLocked(snap)
	return snap
}

// storeLocked publishes snap and logs the skips it is the first to hold.
func (ix *Index) storeLocked(snap *Snapshot) {
	prev := ix.snap.Load()
	ix.snap.Store(snap)
	ix.logNewSkips(prev, snap)
}

// addEntry appends the search text newSearchText(e) would build, folding
// each part straight into the columns through buf: publishing a build of
// 100,000 sessions allocated ~16 MB of strings that were copied into the
// columns and dropped.
func (b *columnsBuilder) addEntry(e *dshlog.Entry, buf *[]byte) {
	s := appendFolded((*buf)[:0], e.ID)
	idLen := len(s)
	s = appendFolded(append(s, 0), e.Cwd)
	s = append(s, 0)
	titleStart := len(s)
	s = appendFolded(s, e.Title)
	titleLen := len(s) - titleStart
	s = append(s, 0)
	dispStart := len(s)
	s = appendFolded(s, e.DisplayTitle())
	*buf = s
	if push(b, s, idLen, titleLen, len(s)-dispStart) {
		b.cols.bytes = append(b.cols.bytes, byteSetOf(s))
		b.cols.pairs = append(b.cols.pairs, pairSetOf(s))
	}
}

// appendFolded appends foldCase(s) to dst, without building it when s is
// ASCII.
func appendFolded(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return append(dst, foldCase(s)...)
		}
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst
}

// listedLocked returns the tracked sessions to list, newest first, and adds
// the others to snap.Skipped. order, when not nil, holds every tracked
// session: LoadCache passes them in the cache's order, which is the last
// snapshot's, so checking it costs one comparison per session instead of
// a sort.
func (ix *Index) listedLocked(snap *Snapshot, order []*tracked) []*tracked {
	if order == nil {
		order = make([]*tracked, 0, len(ix.tracked))
		for _, t := range ix.tracked {
			order = append(order, t)
		}
	}
	listed := make([]*tracked, 0, len(order))
	for _, t := range order {
		if t.skipReason() == "" {
			listed = append(listed, t)
		} else {
			t.col, t.fresh = 0, nil // read again before it is listed
			snap.Skipped = append(snap.Skipped, dshlog.Skipped{Path: t.dir.Path(), Reason: t.skipReason()})
		}
	}
	var ids idorder.Order // ties on createdAt: dsh's localeCompare of ids (internal/idorder)
	less := func(i, j int) bool { return listedBefore(listed[i], listed[j], &ids) }
	if !sort.SliceIsSorted(listed, less) {
		sort.Slice(listed, less)
	}
	return listed
}

// listedBefore is the order of a snapshot's sessions: createdAt
// descending, then ids as dsh compares them, then directory paths.
func listedBefore(a, b *tracked, ids *idorder.Order) bool {
	if a.entry.CreatedAt != b.entry.CreatedAt {
		return a.entry.CreatedAt > b.entry.CreatedAt
	}
	if c := ids.Compare(a.entry.ID, b.entry.ID); c != 0 {
		return c < 0
	}
	return a.dir.Path() < b.dir.Path()
}

// searchOf returns the search text of a listed session.
func (ix *Index) searchOf(t *tracked) searchText { return searchIn(t, &ix.cols) }

// searchIn is searchOf with the columns cols.
func searchIn(t *tracked, cols *searchColumns) searchText {
	switch {
	case t.fresh != nil:
		return *t.fresh
	case t.col > 0:
		return cols.at(t.col - 1)
	}
	return newSearchText(t.entry)
}

// searchLen is len(ix.searchOf(t).all), or close to it, without building
// it, to size the columns.
func (ix *Index) searchLen(t *tracked) int {
	switch {
	case t.fresh != nil:
		return len(t.fresh.all)
	case t.col > 0:
		sp := &ix.cols.spans[t.col-1]
		return int(sp.end - sp.start)
	}
	// Read since the last publish: the folded parts are as long as the
	// parts but for case changes that change a character's length, and
	// this is only a hint.
	e := t.entry
	return len(e.ID) + len(e.Cwd) + len(e.Title) + len(e.DisplayTitle()) + 3
}

// keepOwnSearch gives a session that the snapshot does not list with its
// own search text (a repeated id, or listed under a catalog label) a copy
// of that text, which the columns being replaced no longer hold for it.
func (ix *Index) keepOwnSearch(t *tracked) {
	if t.fresh == nil {
		var st searchText
		if t.col > 0 {
			st = cloneSearch(ix.cols.at(t.col - 1))
		} else {
			st = newSearchText(t.entry)
		}
		t.fresh = &st
	}
	t.col = 0
}

// cloneSearch copies a search text out of the string it is part of.
func cloneSearch(st searchText) searchText {
	all := strings.Clone(st.all)
	titleEnd := len(all) - len(st.display) - 1
	return searchText{all: all, id: all[:len(st.id)], title: all[titleEnd-len(st.title) : titleEnd],
		display: all[len(all)-len(st.display):], bytes: st.bytes, pairs: st.pairs}
}

// logNewSkips logs each skip reason once, when it first appears.
func (ix *Index) logNewSkips(prev, next *Snapshot) {
	old := map[dshlog.Skipped]bool{}
	if prev != nil {
		for _, s := range prev.Skipped {
			old[s] = true
		}
	}
	for _, s := range next.Skipped {
		if !old[s] {
			ix.log.Info("session skipped", zap.String("path", s.Path), zap.String("reason", s.Reason))
		}
	}
}
