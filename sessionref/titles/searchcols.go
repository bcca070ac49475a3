package titles

import (
	"math"
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
// before the NUL that precedes the display title. Offsets are 32-bit (20
// bytes a session instead of 40): the columns' text stays below 4 GiB, as
// matchSet's offsets need too (maxColumnsText).
type searchSpan struct {
	start, end               uint32
	idLen, titleLen, dispLen uint32
}

// maxColumnsText bounds the length of a columns' text: its offsets are
// 32-bit. It is ~40,000 times what 100,000 sessions take.
const maxColumnsText = math.MaxUint32

// fullTextsMax is how much text the columns hold in full (builders past
// it keep a session's id alone, see push): the gigabyte between it and
// maxColumnsText holds the ids of millions of sessions.
const fullTextsMax = maxColumnsText - 1<<30

// newSearchSpan is the span of a search text of allLen bytes at start
// whose id, title and display title are idLen, titleLen and dispLen bytes
// long; the columns' text must end below maxColumnsText.
func newSearchSpan(start, allLen, idLen, titleLen, dispLen int) searchSpan {
	return searchSpan{start: uint32(start), end: uint32(start + allLen), idLen: uint32(idLen), titleLen: uint32(titleLen), dispLen: uint32(dispLen)}
}

// at returns the search text of session i, as substrings of the columns.
func (c *searchColumns) at(i int32) searchText {
	sp := &c.spans[i]
	all := c.text[sp.start:sp.end]
	titleEnd := len(all) - int(sp.dispLen) - 1
	return searchText{all: all, id: all[:sp.idLen], title: all[titleEnd-int(sp.titleLen) : titleEnd],
		display: all[len(all)-int(sp.dispLen):], bytes: c.bytes[i], pairs: c.pairs[i]}
}

// idAt returns the folded id of session i: at(i).id without the copy of
// its filters.
func (c *searchColumns) idAt(i int32) string {
	sp := &c.spans[i]
	return c.text[sp.start : sp.start+sp.idLen]
}

// columnsBuilder appends search texts to new columns.
type columnsBuilder struct {
	text strings.Builder
	cols searchColumns
	// fullMax is fullTextsMax but in tests.
	fullMax int
}

func newColumnsBuilder(n, textBytes int) *columnsBuilder {
	b := &columnsBuilder{cols: searchColumns{spans: make([]searchSpan, 0, n), bytes: make([]byteSet, 0, n), pairs: make([]pairSet, 0, n)}, fullMax: fullTextsMax}
	b.text.Grow(min(textBytes, fullTextsMax))
	return b
}

func (b *columnsBuilder) add(st *searchText) {
	if push(b, st.all, len(st.id), len(st.title), len(st.display)) {
		b.cols.bytes = append(b.cols.bytes, st.bytes)
		b.cols.pairs = append(b.cols.pairs, st.pairs)
	}
}

// writeText appends s to w without converting it.
func writeText[T ~string | ~[]byte](w *strings.Builder, s T) {
	switch v := any(s).(type) {
	case string:
		w.WriteString(v)
	case []byte:
		w.Write(v)
	default:
		w.WriteString(string(s))
	}
}

// push appends the search text all, whose id, title and display title are
// its first idLen, and its titleLen and last dispLen bytes, and its span,
// and reports true; the caller then appends its byte and pair summaries.
// When all would take the text past fullMax (a store of titles of many
// megabytes each), it appends the session's id alone with empty parts
// ("id\x00\x00\x00") and its summaries, and reports false: a query then
// finds that session by its id only, and the columns' offsets stay 32-bit.
func push[T ~string | ~[]byte](b *columnsBuilder, all T, idLen, titleLen, dispLen int) bool {
	start := b.text.Len()
	if start+len(all)+1 <= b.fullMax {
		writeText(&b.text, all)
		b.text.WriteByte(0)
		b.cols.spans = append(b.cols.spans, newSearchSpan(start, len(all), idLen, titleLen, dispLen))
		return true
	}
	writeText(&b.text, all[:idLen])
	b.text.WriteString("\x00\x00\x00\x00")
	b.cols.spans = append(b.cols.spans, newSearchSpan(start, idLen+3, idLen, 0, 0))
	short := b.text.String()[start : start+idLen+3]
	b.cols.bytes = append(b.cols.bytes, byteSetOf(short))
	b.cols.pairs = append(b.cols.pairs, pairSetOf(short))
	return false
}

func (b *columnsBuilder) done() searchColumns {
	b.cols.text = b.text.String()
	return b.cols
}

// len is the number of sessions.
func (c *searchColumns) len() int { return len(c.spans) }

// matchSet is the result of matching one query: the matching sessions in
// order and, when hasOcc, every occurrence of the query in the search
// text (its offset and session, ascending). A query that extends this one
// at its end then only compares the added bytes at each occurrence.
type matchSet struct {
	ids    []int32
	off    []uint32
	ent    []int32
	hasOcc bool
}

func (m *matchSet) reset() {
	m.ids, m.off, m.ent, m.hasOcc = m.ids[:0], m.off[:0], m.ent[:0], false
}

// copyFrom makes m a copy of o, reusing m's buffers.
func (m *matchSet) copyFrom(o *matchSet) {
	m.ids = append(m.ids[:0], o.ids...)
	m.off = append(m.off[:0], o.off...)
	m.ent = append(m.ent[:0], o.ent...)
	m.hasOcc = o.hasOcc
}

// addOcc records an occurrence at off in session i.
func (m *matchSet) addOcc(off int, i int32) {
	if n := len(m.ids); n == 0 || m.ids[n-1] != i {
		m.ids = append(m.ids, i)
	}
	m.off = append(m.off, uint32(off))
	m.ent = append(m.ent, i)
}

// maxOccPerSession bounds the occurrences a match set keeps, as a multiple
// of the sessions: a query occurring more often than that (a common
// letter pair) is narrowed session by session instead.
const maxOccPerSession = 4

// occurrences reports whether occurrences of query can be kept: it holds
// no NUL (so none spans two sessions), is longer than one byte (one-byte
// queries are answered by byte sets) and the text fits the offsets.
func (c *searchColumns) occurrences(query string) bool {
	return len(query) > 1 && strings.IndexByte(query, 0) < 0 && len(c.text) <= maxColumnsText
}

// scanAll adds to out every occurrence of query in the sessions [lo, hi),
// searching the whole range as one string: query holds no NUL, so no
// occurrence spans two sessions' texts.
func (c *searchColumns) scanAll(query string, lo, hi int, out *matchSet) {
	if lo >= hi {
		return
	}
	text := c.text[:c.spans[hi-1].end]
	off, i := int(c.spans[lo].start), lo
	for {
		j := strings.Index(text[off:], query)
		if j < 0 {
			return
		}
		pos := off + j
		// The first session at or after i whose text ends after pos holds
		// the occurrence.
		k, top := i, hi
		for k < top {
			mid := int(uint(k+top) >> 1)
			if int(c.spans[mid].end) <= pos {
				k = mid + 1
			} else {
				top = mid
			}
		}
		out.addOcc(pos, int32(k))
		i, off = k, pos+1
	}
}

// occurrencesIn adds to out every occurrence of query in session i.
func (c *searchColumns) occurrencesIn(i int32, query string, out *matchSet) {
	sp := &c.spans[i]
	for off := int(sp.start); ; {
		j := strings.Index(c.text[off:sp.end], query)
		if j < 0 {
			return
		}
		out.addOcc(off+j, i)
		off += j + 1
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

// extend sets out to the occurrences of query among those of prev, a
// prefix of query whose occurrences base holds: only the bytes query adds
// are compared.
func (c *searchColumns) extend(query string, prevLen int, base, out *matchSet) {
	out.reset()
	out.hasOcc = true
	added := query[prevLen:]
	for k, off := range base.off {
		at := int(off) + prevLen
		if at+len(added) <= len(c.text) && c.text[at:at+len(added)] == added {
			out.addOcc(int(off), base.ent[k])
		}
	}
}

// parallelFilterMin is the number of sessions above which a query is
// matched on every core: below it, starting goroutines costs more than it
// saves.
const parallelFilterMin = 4096

// denseBase is the fraction (1/denseBase) of all sessions above which the
// previous matches are not narrowed one by one but the whole text searched.
const denseBase = 4

// match sets out to the sessions whose search text contains the
// lowercased, non-empty query, in order (with the occurrences when they
// can be kept): among base when base is not nil, else among all sessions.
// Large inputs are split across GOMAXPROCS goroutines. paired says that
// base came from the pair index, so each member has the query's pair bits
// and only its text is searched.
func (c *searchColumns) match(query string, base []int32, paired bool, out *matchSet, sc *queryScratch) {
	need, needPairs := byteSetOf(query), pairSetOf(query)
	occ := c.occurrences(query)
	if base != nil && len(base) > c.len()/denseBase && occ {
		// Most sessions still match: one search over the whole text skips
		// the non-matching ones faster than testing each member.
		base = nil
	}
	n := c.len()
	if base != nil {
		n = len(base)
	}
	part := func(lo, hi int, out *matchSet) {
		out.reset()
		out.hasOcc = occ
		switch {
		case base != nil:
			for _, i := range base[lo:hi] {
				if paired {
					sp := &c.spans[i]
					if !strings.Contains(c.text[sp.start:sp.end], query) {
						continue
					}
				} else if !c.contains(i, query, &need, &needPairs) {
					continue
				}
				if occ {
					c.occurrencesIn(i, query, out)
				} else {
					out.ids = append(out.ids, i)
				}
			}
		case !occ:
			// One byte: the byte sets answer alone. A NUL (which no real
			// query holds) is searched per session.
			for i := lo; i < hi; i++ {
				if c.contains(int32(i), query, &need, &needPairs) {
					out.ids = append(out.ids, int32(i))
				}
			}
		default:
			c.scanAll(query, lo, hi, out)
		}
	}
	workers := runtime.GOMAXPROCS(0)
	if n < parallelFilterMin || workers < 2 {
		part(0, n, out)
	} else {
		for len(sc.parts) < workers-1 {
			sc.parts = append(sc.parts, matchSet{})
		}
		parts := sc.parts
		chunk := (n + workers - 1) / workers
		var wg sync.WaitGroup
		for w := 1; w < workers; w++ {
			lo, hi := min(w*chunk, n), min((w+1)*chunk, n)
			wg.Add(1)
			go func() {
				defer wg.Done()
				part(lo, hi, &parts[w-1])
			}()
		}
		part(0, min(chunk, n), out)
		wg.Wait()
		for w := range parts[:workers-1] {
			p := &parts[w]
			out.ids = append(out.ids, p.ids...)
			out.off = append(out.off, p.off...)
			out.ent = append(out.ent, p.ent...)
		}
	}
	if out.hasOcc && len(out.off) > maxOccPerSession*c.len() {
		out.off, out.ent, out.hasOcc = out.off[:0], out.ent[:0], false
	}
}
