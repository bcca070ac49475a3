package fileref

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"
)

// DefaultLimit is the number of candidates returned when the caller asks
// for limit 0 (SPEC §3 fileMaxResults).
const DefaultLimit = 20

// MaxLimit is the most candidates one search returns, whatever the caller
// asks for. Limits come from clients (the fileMaxResults setting, the
// limit of dsh/files); a completion list of more than a thousand paths is
// of no use to anyone, and the bound keeps what one search allocates
// independent of the number a client sends.
const MaxLimit = 1000

// Candidate is one search result.
type Candidate struct {
	// Path is relative to the workspace root, "/"-separated, without a
	// trailing slash.
	Path string
	Kind Kind
	// Ignored marks entries of an ignored directory that the query named
	// explicitly.
	Ignored bool
	// Score orders fuzzy results (higher is better); listings use it too
	// when a fragment filters them.
	Score int
}

// Tuning of the fuzzy scan.
const (
	// parallelScanMin: below this many paths one goroutine is faster than
	// splitting the work.
	parallelScanMin = 16384
	// scanCtxCheckEvery: how many paths are scored between context checks.
	scanCtxCheckEvery = 4096
	// matchSample is how many candidates of a scan part are looked at
	// to estimate how many will match.
	matchSample = 128
	// maxCachedQueries bounds the narrowing cache; a few entries cover
	// several clients typing at once.
	maxCachedQueries = 8
)

// cachedQuery remembers which paths of one snapshot matched a query, so
// that a longer query that starts with it only rescans those.
type cachedQuery struct {
	snap    *snapshot
	query   string // folded query
	hidden  bool   // whether hidden paths were allowed
	matches []hit
}

// hit is one matching path with where its greedy match ended, in the
// whole path and in the base name, so that one more typed character costs
// one short scan per remaining path. bend is baseUnknown for a path that
// could not rank, whose base name was not looked at; the next query
// matches its base name from the start.
type hit struct {
	idx  int32
	end  uint16
	bend uint16
}

// baseUnknown is the bend of a hit whose base name was not matched.
const baseUnknown = noBaseMatch - 1

// maxIndexedPathLen: hits store match ends in 16 bits, below baseUnknown;
// longer paths (far beyond PATH_MAX) are not indexed.
const maxIndexedPathLen = baseUnknown - 1

// Search returns the best candidates for query (the text after "@" or
// "@\""). An empty query or one containing "/" lists that directory live;
// anything else is fuzzy-matched against the index. capped reports whether
// more candidates existed than limit. limit 0 means DefaultLimit.
func (ix *Index) Search(ctx context.Context, query string, limit int) (results []Candidate, capped bool, err error) {
	if limit < 0 {
		return nil, false, fmt.Errorf("searching files: negative limit %d", limit)
	}
	if limit == 0 {
		limit = DefaultLimit
	}
	limit = min(limit, MaxLimit)
	if err := ctx.Err(); err != nil {
		return nil, false, fmt.Errorf("searching files for %q: %w", query, err)
	}
	if query == "" || strings.Contains(query, "/") {
		return ix.listDir(ctx, query, limit)
	}
	return ix.fuzzy(ctx, query, limit)
}

// hiddenAllowed applies SPEC §3: names starting with "." appear only when
// the query starts with "." or contains "/.".
func hiddenAllowed(query string) bool {
	return strings.HasPrefix(query, ".") || strings.Contains(query, "/.")
}

// foldQuery lower-cases a query for case-insensitive matching.
func foldQuery(q string) string { return strings.ToLower(q) }

// preBuildWalkLimit bounds the walk that answers a fuzzy query before the
// index is built, so that a huge workspace cannot stall a keystroke; such
// an answer is marked capped.
const preBuildWalkLimit = 20000

func (ix *Index) fuzzy(ctx context.Context, query string, limit int) ([]Candidate, bool, error) {
	if !ix.built.Load() {
		// Not built yet: score a bounded walk with the same rules. Its
		// snapshot is never published, so nothing of it is cached.
		entries, err := ix.walk(ctx, []walkJob{{abs: ix.root, frame: ix.outerFrame()}}, preBuildWalkLimit)
		if err != nil {
			return nil, false, fmt.Errorf("searching files for %q before the index is built: %w", query, err)
		}
		res, capped, err := ix.fuzzyIn(ctx, newSnapshot(nil, nil, entries, nil), query, limit)
		return res, capped || len(entries) >= preBuildWalkLimit, err
	}
	// built is set after the snapshot is published: this one is whole.
	snap := ix.snap.Load()
	if res, capped, ok := ix.recall(snap, query, limit); ok {
		return res, capped, nil
	}
	res, capped, err := ix.fuzzyIn(ctx, snap, query, limit)
	if err == nil {
		ix.keep(&answer{snap: snap, query: query, limit: limit, results: res, capped: capped})
	}
	return res, capped, err
}

// answer is the result of one fuzzy search, kept so that the same query
// asked again of the same snapshot is answered without a scan: editors ask
// again after a deletion brings a query back, and many mentions start with
// the same few letters.
type answer struct {
	snap    *snapshot
	query   string // as typed (the exact-name rule reads its case)
	limit   int
	results []Candidate
	capped  bool
}

// maxAnswers bounds the remembered answers; each holds at most MaxLimit
// candidates, which share the snapshot's text.
const maxAnswers = 64

// recall returns a remembered answer to query over snap, as a copy.
func (ix *Index) recall(snap *snapshot, query string, limit int) ([]Candidate, bool, bool) {
	ix.cacheMu.Lock()
	defer ix.cacheMu.Unlock()
	for _, a := range ix.answers {
		if a.snap == snap && a.query == query && a.limit == limit {
			return slices.Clone(a.results), a.capped, true
		}
	}
	return nil, false, false
}

// keep remembers an answer of the published snapshot, evicting the
// oldest.
func (ix *Index) keep(a *answer) {
	a.results = slices.Clone(a.results)
	ix.cacheMu.Lock()
	defer ix.cacheMu.Unlock()
	if ix.snap.Load() != a.snap {
		return
	}
	if len(ix.answers) >= maxAnswers {
		ix.answers = slices.Delete(ix.answers, 0, 1)
	}
	ix.answers = append(ix.answers, a)
}

// fuzzyIn ranks the entries of snap for query.
func (ix *Index) fuzzyIn(ctx context.Context, snap *snapshot, query string, limit int) ([]Candidate, bool, error) {
	hidden := hiddenAllowed(query)
	folded := foldQuery(query)
	qMask := uint64(0)
	for _, r := range folded {
		qMask |= maskBit(r)
	}
	qRunes := []rune(folded)

	base, prevQuery := ix.narrowFrom(snap, folded, hidden)
	extra := folded[len(prevQuery):]
	n := len(snap.entries)
	if base != nil {
		n = len(base)
	}
	parts := 1
	if n >= parallelScanMin {
		parts = runtime.GOMAXPROCS(0)
	}
	type partResult struct {
		matches []hit
		top     *topK
		found   int
		err     error
	}
	res := make([]partResult, parts)
	qb := newQueryBound(folded, qMask)
	// Short queries match most paths, long ones few: the matches of all
	// parts are allocated once, each part's room estimated from the
	// share of a sample of its candidates that passes the mask test.
	offs := make([]int, parts+1)
	for p := 0; p < parts; p++ {
		lo, hi := n*p/parts, n*(p+1)/parts
		samples, passed := 0, 0
		for k := lo; k < hi; k += max(1, (hi-lo)/matchSample) {
			idx := int32(k)
			if base != nil {
				idx = base[k].idx
			}
			samples++
			if snap.entries[idx].mask&qMask == qMask {
				passed++
			}
		}
		room := hi - lo
		if samples > 0 {
			// Two standard deviations above the sampled share.
			est := passed + 2*int(math.Sqrt(float64(passed))) + 2
			room = min(room, int(int64(room)*int64(est)/int64(samples))+64)
		}
		offs[p+1] = offs[p] + room
	}
	backing := make([]hit, offs[parts])
	scan := func(p int) {
		lo, hi := n*p/parts, n*(p+1)/parts
		top := newTopK(limit)
		matches := backing[offs[p]:offs[p]:offs[p+1]]
		found := 0
		for k := lo; k < hi; k++ {
			if (k-lo)%scanCtxCheckEvery == scanCtxCheckEvery-1 {
				if err := ctx.Err(); err != nil {
					res[p].err = err
					return
				}
			}
			var h hit
			if base != nil {
				h = base[k]
			} else {
				h = hit{idx: int32(k)}
			}
			e := &snap.entries[h.idx]
			if e.mask&qMask != qMask || e.hidden() && !hidden {
				continue
			}
			path := snap.path(e)
			var score int
			if e.nonASCII() {
				var ok bool
				score, ok = scorePath([]rune(path), utf8.RuneCountInString(path[:e.baseOff]), qRunes)
				if !ok {
					continue
				}
			} else {
				q, from := folded, 0
				bq, bfrom := folded, int(e.baseOff)
				if base != nil {
					q, from = extra, int(h.end)
					if h.bend != baseUnknown {
						bq, bfrom = extra, int(h.bend)
					}
				}
				low := snap.low(e)
				end, ok := forwardASCII(low, from, q)
				if !ok {
					continue
				}
				if top.full() && int(e.n-e.baseOff) != len(folded) &&
					!top.admits(scored{score: qb.scoreBound(e), path: path}) {
					// It cannot rank: neither its base name nor its
					// score is needed now.
					found++
					matches = append(matches, hit{idx: h.idx, end: uint16(end), bend: baseUnknown})
					continue
				}
				bend := noBaseMatch
				if bfrom != noBaseMatch {
					if b, ok := forwardASCII(low, bfrom, bq); ok {
						bend = b
					}
				}
				h.end, h.bend = uint16(end), uint16(bend)
				score = scoreASCIICeil(path, low, int(e.baseOff), end, bend, folded, qb.fullBound(e))
			}
			if exactName(e, path, snap.low(e), folded, query) {
				score += bonusExactName
			}
			found++
			matches = append(matches, h)
			top.offer(scored{score: score, path: path, entry: e})
		}
		res[p] = partResult{matches: matches, top: top, found: found}
	}
	if parts == 1 {
		scan(0)
	} else {
		var wg sync.WaitGroup
		for p := 0; p < parts; p++ {
			wg.Add(1)
			go func(p int) { defer wg.Done(); scan(p) }(p)
		}
		wg.Wait()
	}
	total := 0
	for _, r := range res {
		if r.err != nil {
			return nil, false, fmt.Errorf("searching files for %q: %w", query, r.err)
		}
		total += r.found
	}
	all := res[0].matches
	top := res[0].top
	if parts > 1 {
		// Each part's matches lie at the start of its room unless the
		// estimate was short and append moved them: close the gaps.
		inPlace := true
		for p, r := range res {
			inPlace = inPlace && cap(r.matches) == offs[p+1]-offs[p]
		}
		if inPlace {
			pos := 0
			for _, r := range res {
				pos += copy(backing[pos:], r.matches)
			}
			all = backing[:pos]
		} else {
			all = make([]hit, 0, total)
			for _, r := range res {
				all = append(all, r.matches...)
			}
		}
		for _, r := range res[1:] {
			for _, s := range r.top.items {
				top.offer(s)
			}
		}
	}
	if cap(all) >= 2*len(all)+64 {
		all = slices.Clone(all) // do not keep the unused room
	}
	ix.remember(&cachedQuery{snap: snap, query: folded, hidden: hidden, matches: all})
	best := top.sorted()
	out := make([]Candidate, len(best))
	for i, s := range best {
		out[i] = Candidate{Path: s.path, Kind: kindOf(s.entry.dir()), Score: s.score}
	}
	return out, total > limit, nil
}

// bonusExactName lifts a path whose base name is the query (ignoring
// case) above every fuzzy score, whatever its depth: someone who types a
// whole file name means that file (issue 14 item 7). Among several such
// paths the usual order decides (the shorter path first).
const bonusExactName = 1 << 24

// exactName reports whether the base name of e (whose path and, for
// ASCII, lower-case path are given) equals query (folded is its
// lower-case form), ignoring case. A query is never a path with "/" here
// (those are listings), so a path equal to the query is a base name at
// the root.
func exactName(e *entry, path, low, folded, query string) bool {
	if e.nonASCII() {
		return strings.EqualFold(path[e.baseOff:], query)
	}
	return len(low)-int(e.baseOff) == len(folded) && low[e.baseOff:] == folded
}

func kindOf(dir bool) Kind {
	if dir {
		return KindDirectory
	}
	return KindFile
}

// narrowFrom returns the matches of the longest cached query that the new
// query extends (a subsequence match of the longer query implies one of
// its prefix), or nil to scan everything.
func (ix *Index) narrowFrom(snap *snapshot, folded string, hidden bool) (matches []hit, query string) {
	ix.cacheMu.Lock()
	defer ix.cacheMu.Unlock()
	var best *cachedQuery
	for _, c := range ix.cache {
		if c.snap == snap && c.hidden == hidden && strings.HasPrefix(folded, c.query) &&
			(best == nil || len(c.query) > len(best.query)) {
			best = c
		}
	}
	if best == nil {
		return nil, ""
	}
	return best.matches, best.query
}

// remember stores a query's matches, evicting the oldest entry.
func (ix *Index) remember(c *cachedQuery) {
	ix.cacheMu.Lock()
	defer ix.cacheMu.Unlock()
	if ix.snap.Load() != c.snap {
		return
	}
	for i, old := range ix.cache {
		if old.query == c.query && old.hidden == c.hidden {
			ix.cache = slices.Delete(ix.cache, i, i+1)
			break
		}
	}
	if len(ix.cache) >= maxCachedQueries {
		ix.cache = ix.cache[1:]
	}
	ix.cache = append(ix.cache, c)
}

// scored is a fuzzy match waiting for top-K selection.
type scored struct {
	score int
	path  string
	entry *entry
}

// better orders results: higher score, then shorter path, then path order,
// so that ties are deterministic whatever the scan order.
func better(a, b scored) bool {
	if a.score != b.score {
		return a.score > b.score
	}
	if len(a.path) != len(b.path) {
		return len(a.path) < len(b.path)
	}
	return a.path < b.path
}

// topK keeps the k best items in a min-heap whose root is the worst kept
// item, so each offer costs O(log k) and no full sort is needed.
type topK struct {
	k     int
	items []scored
}

func newTopK(k int) *topK { return &topK{k: k, items: make([]scored, 0, k)} }

// full reports whether k items are kept, so that an item must beat the
// worst of them to enter.
func (t *topK) full() bool { return len(t.items) == t.k }

// admits reports whether s would enter the kept items.
func (t *topK) admits(s scored) bool { return !t.full() || better(s, t.items[0]) }

func (t *topK) offer(s scored) {
	if len(t.items) < t.k {
		t.items = append(t.items, s)
		t.up(len(t.items) - 1)
		return
	}
	if !better(s, t.items[0]) {
		return
	}
	t.items[0] = s
	t.down(0)
}

// worse is the heap order: the root is the worst item.
func (t *topK) worse(i, j int) bool { return better(t.items[j], t.items[i]) }

func (t *topK) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !t.worse(i, p) {
			return
		}
		t.items[i], t.items[p] = t.items[p], t.items[i]
		i = p
	}
}

func (t *topK) down(i int) {
	n := len(t.items)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && t.worse(r, l) {
			m = r
		}
		if !t.worse(m, i) {
			return
		}
		t.items[i], t.items[m] = t.items[m], t.items[i]
		i = m
	}
}

// sorted returns the kept items best first.
func (t *topK) sorted() []scored {
	out := slices.Clone(t.items)
	slices.SortFunc(out, func(a, b scored) int {
		if better(a, b) {
			return -1
		}
		if better(b, a) {
			return 1
		}
		return 0
	})
	return out
}
