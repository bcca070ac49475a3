package recall

// frequencySketch estimates how often each block was asked for lately, in
// a fixed table whatever the number of blocks: a count-min sketch, four
// rows of saturating 8-bit counters, each key counted once in each row at
// a place its hash picks; a key's estimate is the least of its four
// counters (others' keys can only add to a counter). Every sketchAging
// counts, every counter is halved, so what was asked for long ago weighs
// less than what is asked for now. It allocates nothing as it counts.
type frequencySketch struct {
	rows    [sketchDepth][sketchWidth]uint8
	counted int
}

const (
	sketchDepth = 4
	sketchWidth = 1 << 12 // a power of two: places are cut from the hash by a mask
	// sketchAging is the number of counts after which every counter is
	// halved: ten per place in a row, as in TinyLFU (Einziger, Friedman
	// and Manes, 2017), where a cache of W entries ages every 10·W.
	sketchAging = 10 * sketchWidth
)

// add counts one more request for k.
func (s *frequencySketch) add(k cacheKey) {
	h := hashKey(k)
	for i := range s.rows {
		c := &s.rows[i][h>>(16*i)&(sketchWidth-1)]
		if *c < 255 {
			*c++
		}
	}
	if s.counted++; s.counted == sketchAging {
		s.age()
	}
}

// estimate is how many requests for k were counted lately: never fewer
// than were, more only where other keys share all four of its counters.
func (s *frequencySketch) estimate(k cacheKey) uint8 {
	h := hashKey(k)
	least := uint8(255)
	for i := range s.rows {
		least = min(least, s.rows[i][h>>(16*i)&(sketchWidth-1)])
	}
	return least
}

// age halves every counter.
func (s *frequencySketch) age() {
	for i := range s.rows {
		for j := range s.rows[i] {
			s.rows[i][j] >>= 1
		}
	}
	s.counted = 0
}

// hashKey mixes a block's file and offset into 64 bits, of which each row
// of the sketch takes its own 16 (the finaliser of MurmurHash3, whose
// every output bit depends on every input bit).
func hashKey(k cacheKey) uint64 {
	h := k.file*0x9e3779b97f4a7c15 ^ uint64(k.off)
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return h
}
