package titles

import (
	"math/bits"
	"strings"
	"sync"
)

// pairIndex is the snapshot's pair sets transposed: one bitmap over the
// sessions per pair bit, bit i of a row set when session i's search text
// holds a byte pair of that bit. ANDing the rows of a query's pairs gives
// the sessions that may contain it, in snapshot order, without touching
// the others; a sparse query is then matched by testing those alone
// instead of searching the whole text.
type pairIndex struct {
	words int      // uint64 words per row
	rows  []uint64 // row b is rows[b*words : (b+1)*words]
}

// lazyPairs builds a snapshot's pair index once, on first use.
type lazyPairs struct {
	once  sync.Once
	index *pairIndex
}

// pairRows returns the snapshot's pair index, or nil for a snapshot built
// without orders.
func (s *Snapshot) pairRows() *pairIndex {
	if s.orders == nil {
		return nil
	}
	lp := &s.orders.pairs
	lp.once.Do(func() { lp.index = buildPairIndex(&s.search) })
	return lp.index
}

func buildPairIndex(c *searchColumns) *pairIndex {
	n := c.len()
	px := &pairIndex{words: (n + 63) / 64}
	px.rows = make([]uint64, 512*px.words)
	for i, set := range c.pairs {
		word, bit := i>>6, uint64(1)<<(i&63)
		for w, v := range set {
			for v != 0 {
				b := w<<6 | bits.TrailingZeros64(v)
				px.rows[b*px.words+word] |= bit
				v &= v - 1
			}
		}
	}
	return px
}

// pairsUsable reports whether the pair index can narrow query: it has a
// pair and no NUL (a NUL pair would span two sessions' texts).
func pairsUsable(query string) bool {
	return len(query) > 1 && strings.IndexByte(query, 0) < 0
}

// candidates ANDs the rows of query's pair bits into acc (resized) and
// returns how many sessions remain.
func (px *pairIndex) candidates(query string, acc []uint64) ([]uint64, int) {
	acc = acc[:0]
	need := pairSetOf(query)
	first := true
	for w, v := range need {
		for v != 0 {
			b := w<<6 | bits.TrailingZeros64(v)
			v &= v - 1
			row := px.rows[b*px.words : (b+1)*px.words]
			if first {
				acc = append(acc, row...)
				first = false
				continue
			}
			for k := range acc {
				acc[k] &= row[k]
			}
		}
	}
	count := 0
	for _, x := range acc {
		count += bits.OnesCount64(x)
	}
	return acc, count
}

// appendIDs appends the sessions set in acc, ascending.
func appendIDs(ids []int32, acc []uint64) []int32 {
	for k, x := range acc {
		for x != 0 {
			ids = append(ids, int32(k<<6|bits.TrailingZeros64(x)))
			x &= x - 1
		}
	}
	return ids
}
