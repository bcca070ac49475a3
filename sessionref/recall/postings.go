package recall

import (
	"runtime"
	"sync"
)

// gramLen is the length, in bytes of folded UTF-8, of the grams the index
// posts. Three bytes hold one CJK character, so a one-character CJK query
// is already served by the postings.
const gramLen = 3

// denseDivisor decides when a posting list is kept as a bitset: a gram
// found in more than one session in denseDivisor takes n/8 bytes as a
// bitset instead of 4 bytes per session as a list.
const denseDivisor = 32

// postings map every gram of the folded text of a fixed set of documents
// (the slots) to the slots holding it. They are built once and never
// change; documents that change later are searched beside them.
type postings struct {
	docs  []*doc
	slot  map[*doc]int32
	lists map[uint32][]uint32
	bits  map[uint32][]uint64
	// bytes is the memory the lists and bitsets hold.
	bytes int64
}

// gramOf packs the gram starting at s[i].
func gramOf(s string, i int) uint32 {
	return uint32(s[i])<<16 | uint32(s[i+1])<<8 | uint32(s[i+2])
}

// gramSet is a reusable set of grams of one text.
type gramSet struct {
	seen  []uint64 // 1<<24 bits
	grams []uint32
}

func newGramSet() *gramSet { return &gramSet{seen: make([]uint64, 1<<24/64)} }

// of returns the distinct grams of s that hold no NUL (the separator of
// messages), in first-seen order. The result is valid until the next call.
func (g *gramSet) of(s string) []uint32 {
	for _, x := range g.grams {
		g.seen[x/64] = 0
	}
	g.grams = g.grams[:0]
	for i := 0; i+gramLen <= len(s); i++ {
		if s[i] == 0 || s[i+1] == 0 || s[i+2] == 0 {
			continue
		}
		x := gramOf(s, i)
		if g.seen[x/64]&(1<<(x%64)) != 0 {
			continue
		}
		g.seen[x/64] |= 1 << (x % 64)
		g.grams = append(g.grams, x)
	}
	return g.grams
}

// buildPostings indexes docs, reading their grams with up to workers
// goroutines.
func buildPostings(docs []*doc, workers int) *postings {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	p := &postings{docs: docs, slot: make(map[*doc]int32, len(docs)), lists: map[uint32][]uint32{}}
	for i, d := range docs {
		p.slot[d] = int32(i)
	}
	// Workers take chunks of consecutive slots and hand back their grams;
	// the merger appends chunks in slot order, so every list stays sorted.
	const chunk = 64
	nChunks := (len(docs) + chunk - 1) / chunk
	results := make([]chan [][]uint32, nChunks)
	for i := range results {
		results[i] = make(chan [][]uint32, 1)
	}
	next := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < min(workers, max(1, nChunks)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			gs := newGramSet()
			for c := range next {
				end := min(len(docs), (c+1)*chunk)
				out := make([][]uint32, 0, end-c*chunk)
				for _, d := range docs[c*chunk : end] {
					out = append(out, append([]uint32(nil), gs.of(d.folded)...))
				}
				results[c] <- out
			}
		}()
	}
	go func() {
		// Feed at most a few chunks ahead of the merger, so the grams of
		// the whole store are never held at once.
		for c := 0; c < nChunks; c++ {
			next <- c
		}
		close(next)
	}()
	for c := 0; c < nChunks; c++ {
		for k, grams := range <-results[c] {
			s := uint32(c*chunk + k)
			for _, x := range grams {
				p.lists[x] = append(p.lists[x], s)
			}
		}
	}
	wg.Wait()
	p.compact()
	return p
}

// compact turns the lists of common grams into bitsets and trims the rest.
func (p *postings) compact() {
	n := len(p.docs)
	words := (n + 63) / 64
	p.bits = map[uint32][]uint64{}
	for x, l := range p.lists {
		if len(l) > n/denseDivisor && len(l)*32 > words*64 {
			b := make([]uint64, words)
			for _, s := range l {
				b[s/64] |= 1 << (s % 64)
			}
			p.bits[x] = b
			delete(p.lists, x)
			p.bytes += int64(words * 8)
			continue
		}
		if cap(l) > len(l) {
			l = append([]uint32(nil), l...)
			p.lists[x] = l
		}
		p.bytes += int64(len(l) * 4)
	}
}

// candidates returns the slots holding every gram in grams, as a bitset
// over the slots; ok is false when grams is empty (every slot qualifies).
func (p *postings) candidates(grams []uint32) (set []uint64, ok bool) {
	if len(grams) == 0 {
		return nil, false
	}
	words := (len(p.docs) + 63) / 64
	// Start from the shortest list, if any, then intersect.
	best := -1
	for i, x := range grams {
		l, isList := p.lists[x]
		if !isList {
			if _, isBits := p.bits[x]; !isBits {
				return make([]uint64, words), true // a gram no document holds
			}
			continue
		}
		if best < 0 || len(l) < len(p.lists[grams[best]]) {
			best = i
		}
	}
	set = make([]uint64, words)
	if best >= 0 {
		for _, s := range p.lists[grams[best]] {
			set[s/64] |= 1 << (s % 64)
		}
	} else {
		copy(set, p.bits[grams[0]])
	}
	for i, x := range grams {
		if i == best {
			continue
		}
		if b, isBits := p.bits[x]; isBits {
			for w := range set {
				set[w] &= b[w]
			}
			continue
		}
		// A sorted list: keep the set's bits that the list holds.
		l := p.lists[x]
		next := make([]uint64, words)
		for _, s := range l {
			if set[s/64]&(1<<(s%64)) != 0 {
				next[s/64] |= 1 << (s % 64)
			}
		}
		set = next
	}
	return set, true
}
