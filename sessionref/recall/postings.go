package recall

import (
	"math/bits"
	"slices"
)

// gramLen is the length, in bytes of folded UTF-8, of the grams the index
// posts. Three bytes hold one CJK character, so a one-character CJK query
// is already served by the postings.
const gramLen = 3

// postings map every gram of the folded text of a fixed set of sessions
// (the slots 0..n-1) to the slots holding it: a sorted list of slots, or a
// bitset when that is smaller (a gram in more than one slot in 32). They
// never change once built; sessions that change later get new slots in an
// overlay (view) until the next merge. The keys of the token postings are
// the dictionary's ids, numbered from 0: they are dense, and held by key
// rather than in a map. At 890,000 tokens, a map of list and bitset
// headers kept 42 bytes more per token than a slice of them, and a
// build's lookups in it and copies of it took a third of its CPU; one
// list header per token, the few bitsets aside, took 24 bytes less again,
// and frozen postings keep every list in one array (24 more).
type postings struct {
	n int
	// By key, when m is nil, the slots of key k are
	// slots[offs[k]:offs[k+1]] in frozen postings (offs set), lists[k] in
	// a step's, which share the builders' arrays (none: empty), unless bit
	// k of isBits is set, when bits[k] is its bitset (the tokens in more
	// than one slot in 32, the common words, are few). Otherwise m holds
	// the postings by key.
	lists  [][]uint32
	offs   []uint32
	slots  []uint32
	isBits []uint64
	bits   map[uint32][]uint64
	m      map[uint32]plist
	// bytes is the memory the lists and bitsets hold.
	bytes int64
}

// plist is the posting of one gram: list or bits, never both. A bitset may
// be shorter than the slots: missing words are zero.
type plist struct {
	list []uint32
	bits []uint64
}

// empty reports whether pl is no posting: what a builder by key holds for
// a key no slot has.
func (pl plist) empty() bool { return pl.list == nil && pl.bits == nil }

// emptyPostings are postings by map (sparse keys: grams) of no slot;
// emptyDensePostings by key (dense keys: token ids).
func emptyPostings() *postings      { return &postings{m: map[uint32]plist{}} }
func emptyDensePostings() *postings { p := &postings{}; p.initDense(0, false); return p }

// initDense makes p a postings by key, for keys below n, with none, as
// a step's (lists); frozen adds offs.
func (p *postings) initDense(n int, frozen bool) {
	p.isBits, p.bits, p.m = make([]uint64, (n+63)/64), map[uint32][]uint64{}, nil
	if frozen {
		p.offs = make([]uint32, n+1)
		return
	}
	p.lists = make([][]uint32, n)
}

// keys is how many keys a postings by key has room for.
func (p *postings) keys() int {
	if p.offs != nil {
		return len(p.offs) - 1
	}
	return len(p.lists)
}

// setBits sets the posting of key x of a postings by key to the bitset
// bs; setList, of a step's postings, to the list l. Frozen postings take
// their lists in slots, in the order of their keys, each key x closed by
// offs[x+1].
func (p *postings) setBits(x uint32, bs []uint64) {
	p.isBits[x/64] |= 1 << (x % 64)
	p.bits[x] = bs
}

func (p *postings) setList(x uint32, l []uint32) { p.lists[x] = l }

// get returns the posting of key x, and whether there is one.
func (p *postings) get(x uint32) (plist, bool) {
	switch {
	case p.m != nil:
		pl, ok := p.m[x]
		return pl, ok
	case int64(x) >= int64(p.keys()):
		return plist{}, false
	case p.isBits[x/64]&(1<<(x%64)) != 0:
		return plist{bits: p.bits[x]}, true
	case p.offs != nil:
		from, to := p.offs[x], p.offs[x+1]
		return plist{list: p.slots[from:to:to]}, to > from
	}
	return plist{list: p.lists[x]}, p.lists[x] != nil
}

// each calls fn with every posting of p and its key: in increasing order
// of keys when p is by key, in no order otherwise.
func (p *postings) each(fn func(x uint32, pl plist)) {
	if p.m != nil {
		for x, pl := range p.m {
			fn(x, pl)
		}
		return
	}
	for x := range p.keys() {
		if pl, ok := p.get(uint32(x)); ok {
			fn(uint32(x), pl)
		}
	}
}

// size is how many keys have a posting.
func (p *postings) size() int {
	if p.m != nil {
		return len(p.m)
	}
	n := 0
	p.each(func(uint32, plist) { n++ })
	return n
}

// gramOf packs the gram starting at s[i].
func gramOf(s string, i int) uint32 {
	return uint32(s[i])<<16 | uint32(s[i+1])<<8 | uint32(s[i+2])
}

// gramSet is a reusable set of grams of one text.
type gramSet struct {
	// seen has 1<<24 bits (2 MB), made at the first add: only tokens
	// longer than maxTokenBytes are added, and a worker that meets none
	// never needs it.
	seen  []uint64
	grams []uint32
}

func newGramSet() *gramSet { return &gramSet{} }

// reset empties the set.
func (g *gramSet) reset() {
	for _, x := range g.grams {
		g.seen[x/64] = 0
	}
	g.grams = g.grams[:0]
}

// add adds the grams of s, the folding of one message.
func (g *gramSet) add(s []byte) {
	if g.seen == nil && len(s) >= gramLen {
		g.seen = make([]uint64, 1<<24/64)
	}
	for i := 0; i+gramLen <= len(s); i++ {
		x := uint32(s[i])<<16 | uint32(s[i+1])<<8 | uint32(s[i+2])
		if g.seen[x/64]&(1<<(x%64)) != 0 {
			continue
		}
		g.seen[x/64] |= 1 << (x % 64)
		g.grams = append(g.grams, x)
	}
}

// appendSorted appends the grams of g, sorted, to the array of dst,
// which it empties first.
func (g *gramSet) appendSorted(dst []uint32) []uint32 {
	out := append(dst[:0], g.grams...)
	slices.Sort(out)
	return out
}

// builder grows postings slot by slot; slots are added in increasing order.
type builder struct {
	n int
	// dense: the postings are by key (d), for keys numbered from 0 (token
	// ids); else by map (m).
	dense bool
	d     []plist
	m     map[uint32]*plist
	// words is the length a bitset is made with: the slots the builder
	// is expected to reach (seeded and to be read), so that bitsets are
	// not grown by doubling (which left a quarter to half of their
	// arrays unused: 5.6 MB of bitsets for 4.6 MB of bits at 100,000
	// sessions).
	words int
}

// newBuilder grows postings by map (grams); newDenseBuilder by key (token
// ids).
func newBuilder() *builder      { return &builder{m: map[uint32]*plist{}} }
func newDenseBuilder() *builder { return &builder{dense: true} }

// at returns the posting of key x being built, valid until the next call.
func (b *builder) at(x uint32) *plist {
	if b.dense {
		if int64(x) >= int64(len(b.d)) {
			b.d = append(b.d, make([]plist, int(x)+1-len(b.d))...)
		}
		return &b.d[x]
	}
	p := b.m[x]
	if p == nil {
		p = &plist{}
		b.m[x] = p
	}
	return p
}

// add posts grams for slot, which must be at least every slot added so far.
func (b *builder) add(slot int, grams []uint32) {
	b.n = max(b.n, slot+1)
	for _, x := range grams {
		b.addSlot(b.at(x), slot)
	}
}

// expect sets the slots the builder is expected to reach.
func (b *builder) expect(slots int) { b.words = (slots + 63) / 64 }

func (b *builder) addSlot(p *plist, slot int) {
	if p.bits != nil {
		w := slot / 64
		for len(p.bits) <= w {
			p.bits = append(p.bits, 0)
		}
		p.bits[w] |= 1 << (slot % 64)
		return
	}
	p.list = append(p.list, uint32(slot))
	// A list longer than the bitset of the slots so far becomes a bitset.
	if len(p.list) >= 64 && len(p.list)*32 > slot+1 {
		p.bits = make([]uint64, slot/64+1, max(slot/64+1, b.words))
		for _, s := range p.list {
			p.bits[s/64] |= 1 << (s % 64)
		}
		p.list = nil
	}
}

// seed adds the slots of p that stay current, renumbered by remap (-1:
// dropped), as the first slots of b. remap must keep the order of slots.
func (b *builder) seed(p *postings, remap []int32) {
	p.each(func(x uint32, pl plist) {
		pl.each(func(s int) {
			if ns := remap[s]; ns >= 0 {
				b.addSlot(b.at(x), int(ns))
			}
		})
	})
	for _, ns := range remap {
		b.n = max(b.n, int(ns)+1)
	}
}

// each calls fn with every slot of p in increasing order.
func (p plist) each(fn func(int)) {
	if p.bits == nil {
		for _, s := range p.list {
			fn(int(s))
		}
		return
	}
	for w, word := range p.bits {
		for word != 0 {
			fn(w*64 + bits.TrailingZeros64(word))
			word &= word - 1
		}
	}
}

// prefix returns postings over the slots below n, a multiple of 64 that b
// reached, sharing b's arrays: b only sets bits of words from n/64 on and
// appends slots of n and more, so what the postings hold never changes
// while b goes on growing. A gram no slot below n holds is left out.
func (b *builder) prefix(n int) *postings {
	p := &postings{n: n}
	below := func(pl *plist) plist {
		var c plist
		if pl.bits != nil {
			w := min(len(pl.bits), n/64)
			c.bits = pl.bits[:w:w]
		} else {
			k, _ := slices.BinarySearch(pl.list, uint32(n))
			c.list = pl.list[:k:k]
		}
		if len(c.list)+len(c.bits) == 0 {
			return plist{}
		}
		p.bytes += int64(len(c.list)*4 + len(c.bits)*8)
		return c
	}
	if b.dense {
		p.initDense(len(b.d), false)
		for x := range b.d {
			switch c := below(&b.d[x]); {
			case c.bits != nil:
				p.setBits(uint32(x), c.bits)
			case c.list != nil:
				p.setList(uint32(x), c.list)
			}
		}
		return p
	}
	p.m = make(map[uint32]plist, len(b.m))
	for x, pl := range b.m {
		if c := below(pl); !c.empty() {
			p.m[x] = c
		}
	}
	return p
}

// postings freezes b: dense lists become bitsets, the rest are trimmed
// (copied to arrays of their length when their arrays are longer).
func (b *builder) postings() *postings {
	p := &postings{n: b.n}
	words := (b.n + 63) / 64
	// asBits: a list of n slots is frozen as a bitset, which is smaller.
	asBits := func(n int) bool { return n*32 > words*64 }
	frozen := func(pl plist) plist {
		switch {
		case pl.bits != nil && len(pl.list) == 0:
			if cap(pl.bits) > len(pl.bits) {
				pl.bits = append(make([]uint64, 0, len(pl.bits)), pl.bits...)
			}
			p.bytes += int64(len(pl.bits) * 8)
		case asBits(len(pl.list)):
			bs := make([]uint64, words)
			for _, s := range pl.list {
				bs[s/64] |= 1 << (s % 64)
			}
			pl = plist{bits: bs}
			p.bytes += int64(words * 8)
		default:
			if cap(pl.list) > len(pl.list) {
				pl.list = append(make([]uint32, 0, len(pl.list)), pl.list...)
			}
			p.bytes += int64(len(pl.list) * 4)
		}
		return pl
	}
	if b.dense {
		// One array for every list: a key's list is copied there, not
		// trimmed in an array of its own.
		total := 0
		for _, pl := range b.d {
			if pl.bits == nil && !asBits(len(pl.list)) {
				total += len(pl.list)
			}
		}
		p.initDense(len(b.d), true)
		p.slots = make([]uint32, 0, total)
		for x, pl := range b.d {
			switch {
			case pl.empty():
			case pl.bits != nil || asBits(len(pl.list)):
				p.setBits(uint32(x), frozen(pl).bits)
			default:
				p.slots = append(p.slots, pl.list...)
			}
			p.offs[x+1] = uint32(len(p.slots))
		}
		p.bytes += int64(len(p.slots)*4 + len(p.offs)*4)
		return p
	}
	p.m = make(map[uint32]plist, len(b.m))
	for x, pl := range b.m {
		p.m[x] = frozen(*pl)
	}
	return p
}

// candidates returns the slots holding every gram in grams, as a bitset
// over the slots; ok is false when grams is empty (every slot qualifies).
func (p *postings) candidates(grams []uint32) (set []uint64, ok bool) {
	if len(grams) == 0 {
		return nil, false
	}
	words := (p.n + 63) / 64
	// Start from the shortest list, if any, then intersect.
	best := -1
	shortest := 0
	for i, x := range grams {
		pl, found := p.get(x)
		if !found {
			return make([]uint64, words), true // a gram no session holds
		}
		if pl.bits == nil && (best < 0 || len(pl.list) < shortest) {
			best, shortest = i, len(pl.list)
		}
	}
	set = make([]uint64, words)
	first := best
	if first < 0 {
		first = 0
	}
	pl, _ := p.get(grams[first])
	pl.each(func(s int) { set[s/64] |= 1 << (s % 64) })
	for i, x := range grams {
		if i == first {
			continue
		}
		pl, _ := p.get(x)
		if pl.bits != nil {
			for w := range set {
				if w < len(pl.bits) {
					set[w] &= pl.bits[w]
				} else {
					set[w] = 0
				}
			}
			continue
		}
		// A sorted list: keep the set's bits that the list holds.
		next := make([]uint64, words)
		for _, s := range pl.list {
			if set[s/64]&(1<<(s%64)) != 0 {
				next[s/64] |= 1 << (s % 64)
			}
		}
		set = next
	}
	return set, true
}

// holdsAll reports whether the sorted grams of one session hold every gram
// in want.
func holdsAll(sorted, want []uint32) bool {
	for _, x := range want {
		if _, ok := slices.BinarySearch(sorted, x); !ok {
			return false
		}
	}
	return true
}
