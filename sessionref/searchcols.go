package sessionref

import (
	"runtime"
	"strings"
	"sync"
)

// searchColumns holds the search texts of a snapshot's sessions in one
// string, each followed by a NUL byte, with the per-session spans and byte
// summaries in pointer-free slices. A query is then one substring search
// over contiguous memory instead of one per session, and the collector has
// four objects to scan instead of four strings per session.
type searchColumns struct {
	text  string
	spans []searchSpan
	bytes []byteSet
	pairs []pairSet
}

// searchSpan locates one session's search text in searchColumns.text:
// text[start:end] is what searchText.all was; the id is its first idLen
// bytes, the display title its last dispLen, the title the titleLen bytes
// before the NUL that precedes the display title.
type searchSpan struct {
	start, end               int
	idLen, titleLen, dispLen int
}

// at returns the search text of session i, as substrings of the columns.
func (c *searchColumns) at(i int32) searchText {
	sp := &c.spans[i]
	all := c.text[sp.start:sp.end]
	titleEnd := len(all) - sp.dispLen - 1
	return searchText{all: all, id: all[:sp.idLen], title: all[titleEnd-sp.titleLen : titleEnd],
		display: all[len(all)-sp.dispLen:], bytes: c.bytes[i], pairs: c.pairs[i]}
}

// columnsBuilder appends search texts to new columns.
type columnsBuilder struct {
	text strings.Builder
	cols searchColumns
}

func newColumnsBuilder(n, textBytes int) *columnsBuilder {
	b := &columnsBuilder{cols: searchColumns{spans: make([]searchSpan, 0, n), bytes: make([]byteSet, 0, n), pairs: make([]pairSet, 0, n)}}
	b.text.Grow(textBytes)
	return b
}

func (b *columnsBuilder) add(st *searchText) {
	start := b.text.Len()
	b.text.WriteString(st.all)
	b.text.WriteByte(0)
	b.cols.spans = append(b.cols.spans, searchSpan{start: start, end: start + len(st.all), idLen: len(st.id), titleLen: len(st.title), dispLen: len(st.display)})
	b.cols.bytes = append(b.cols.bytes, st.bytes)
	b.cols.pairs = append(b.cols.pairs, st.pairs)
}

func (b *columnsBuilder) done() searchColumns {
	b.cols.text = b.text.String()
	return b.cols
}

// len is the number of sessions.
func (c *searchColumns) len() int { return len(c.spans) }

// scanAll appends to out the sessions in [lo, hi) whose search text
// contains query, in order. query is at least two bytes and holds no NUL,
// so no match spans two sessions' texts: the whole range is searched as
// one string, and after each match the search resumes at the next session.
func (c *searchColumns) scanAll(query string, lo, hi int, out []int32) []int32 {
	if lo >= hi {
		return out
	}
	text := c.text[:c.spans[hi-1].end]
	off, i := c.spans[lo].start, lo
	for {
		j := strings.Index(text[off:], query)
		if j < 0 {
			return out
		}
		pos := off + j
		// The first session at or after i whose text ends after pos holds
		// the match.
		k, top := i, hi
		for k < top {
			mid := int(uint(k+top) >> 1)
			if c.spans[mid].end <= pos {
				k = mid + 1
			} else {
				top = mid
			}
		}
		out = append(out, int32(k))
		i = k + 1
		if i >= hi {
			return out
		}
		off = c.spans[i].start
	}
}

// contains reports whether session i's search text contains query; need
// and needPairs are the byte and pair summaries of query.
func (c *searchColumns) contains(i int32, query string, need *byteSet, needPairs *pairSet) bool {
	if !c.bytes[i].covers(need) {
		return false
	}
	if len(query) == 1 {
		return true
	}
	if !c.pairs[i].covers(needPairs) {
		return false
	}
	sp := &c.spans[i]
	return strings.Contains(c.text[sp.start:sp.end], query)
}

// parallelFilterMin is the number of sessions above which a query is
// matched on every core: below it, starting goroutines costs more than it
// saves.
const parallelFilterMin = 4096

// denseBase is the fraction (1/denseBase) of all sessions above which the
// previous matches are not narrowed one by one but the whole text searched.
const denseBase = 4

// match appends to out the sessions whose search text contains the
// lowercased, non-empty query, in order: among base when base is not nil,
// else among all sessions. Large inputs are split across GOMAXPROCS
// goroutines.
func (c *searchColumns) match(query string, base []int32, out []int32, sc *queryScratch) []int32 {
	need, needPairs := byteSetOf(query), pairSetOf(query)
	if base != nil && len(base) > c.len()/denseBase && len(query) > 1 && strings.IndexByte(query, 0) < 0 {
		// Most sessions still match: one search over the whole text skips
		// the non-matching ones faster than testing each member.
		base = nil
	}
	n := c.len()
	if base != nil {
		n = len(base)
	}
	part := func(lo, hi int, out []int32) []int32 {
		switch {
		case base != nil:
			for _, i := range base[lo:hi] {
				if c.contains(i, query, &need, &needPairs) {
					out = append(out, i)
				}
			}
		case len(query) == 1 || strings.IndexByte(query, 0) >= 0:
			// One byte: the byte sets answer alone. A NUL (which no real
			// query holds) is searched per session as before.
			for i := lo; i < hi; i++ {
				if c.contains(int32(i), query, &need, &needPairs) {
					out = append(out, int32(i))
				}
			}
		default:
			out = c.scanAll(query, lo, hi, out)
		}
		return out
	}
	workers := runtime.GOMAXPROCS(0)
	if n < parallelFilterMin || workers < 2 {
		return part(0, n, out)
	}
	for len(sc.parts) < workers {
		sc.parts = append(sc.parts, nil)
	}
	parts := sc.parts
	chunk := (n + workers - 1) / workers
	var wg sync.WaitGroup
	for w := 1; w < workers; w++ {
		lo, hi := min(w*chunk, n), min((w+1)*chunk, n)
		wg.Add(1)
		go func() {
			defer wg.Done()
			parts[w] = part(lo, hi, parts[w][:0])
		}()
	}
	out = part(0, min(chunk, n), out)
	wg.Wait()
	for _, p := range parts[1:] {
		out = append(out, p...)
	}
	return out
}
