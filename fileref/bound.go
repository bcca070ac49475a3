package fileref

// A fuzzy query over a large tree matches most paths while it is short,
// and scoring every match is what a keystroke costs. The ranking keeps
// only the best few, so a path whose score cannot reach the worst kept
// one need not be scored. scoreBound gives such a ceiling from three
// character masks computed once per path, without looking at its bytes.
//
// The ceiling follows from the scoring of scoreWindowASCII: a matched
// character earns scoreMatch plus a bonus of at most bonusBoundaryDelimiter
// (the first one twice), unmatched characters inside the window only cost,
// and the word-end and base-name bonuses come on top. A matched character
// earns a bonus only at a position where bonusFor is positive (a boundary)
// or inside a run of consecutive matches (at most bonusConsecutive, unless
// the run contains a boundary). So when no query character occurs at a
// boundary position the bonuses are at most bonusConsecutive, and when
// the first query character occurs at none the first bonus is zero.

// bonusMax is the largest bonus one matched character can earn.
const bonusMax = bonusBoundaryDelimiter

// pathBounds are the character masks of one ASCII path that scoreBound
// reads, folded to 32 bits by fold32.
type pathBounds struct {
	// boundary and baseBoundary: characters at positions where bonusFor
	// is positive, in the whole path and in its base name.
	boundary, baseBoundary uint32
	// wordEnd and baseWordEnd: characters that end a word (wordEndASCII),
	// in the whole path and in its base name.
	wordEnd, baseWordEnd uint32
	// baseChars: the characters of the base name.
	baseChars uint32
	// basePairs: the pairs of adjacent characters (ignoring case) of the
	// base name, hashed by pairBit, as two halves (so that an entry stays
	// 48 bytes).
	basePairs [2]uint32
}

// pairMask returns basePairs as one mask.
func (b *pathBounds) pairMask() uint64 {
	return uint64(b.basePairs[1])<<32 | uint64(b.basePairs[0])
}

// allPairs stands for a text whose pairs are not known.
const allPairs = ^uint64(0)

// pairBit is the bit of the adjacent lower-case bytes a, b in a pair
// mask. Pairs share bits, so a mask tells for sure only that a pair is
// absent.
func pairBit(a, b byte) uint64 {
	return 1 << ((uint32(a)<<8 | uint32(b)) * 0x9E3779B1 >> 26)
}

// fold32 folds a character mask (see maskBit) into 32 bits: the letters
// keep their bits, the ten digits share one, and so do the other ASCII
// and the non-ASCII characters. A folded mask holds at least the folded
// characters of the unfolded one, so the tests of scoreBound stay true
// where they were and the ceiling stays a ceiling.
func fold32(m uint64) uint32 {
	r := uint32(m & (1<<26 - 1))
	if m>>maskDigit0&(1<<10-1) != 0 {
		r |= 1 << 26
	}
	r |= uint32(m>>maskDot&0xf) << 27 // '.', '-', '_', ' '
	if m>>maskOther != 0 {
		r |= 1 << 31
	}
	return r
}

// boundsOf returns, in one pass over a path whose base name starts at
// byte base, its character mask (see maskBit), whether it has ASCII
// upper-case letters, and its pathBounds (of use only when it is ASCII).
func boundsOf(path string, base int) (b pathBounds, mask uint64, upper bool) {
	var boundary, baseBoundary, wordEnd, baseWordEnd, baseChars uint64
	prev := classDelimiter // a path starts a segment
	var prevLow byte
	var pairs uint64
	for i := 0; i < len(path); i++ {
		c := path[i]
		upper = upper || c >= 'A' && c <= 'Z'
		cl := c
		if c >= 'A' && c <= 'Z' {
			cl += 'a' - 'A'
		}
		if i > base {
			pairs |= pairBit(prevLow, cl)
		}
		prevLow = cl
		cls := asciiClass[c&0x7f]
		bit := maskBit(rune(c))
		mask |= bit
		isBoundary := bonusFor(prev, cls) > 0
		isWordEnd := i+1 == len(path) || asciiClass[path[i+1]&0x7f] <= classDelimiter
		if isBoundary {
			boundary |= bit
		}
		if isWordEnd {
			wordEnd |= bit
		}
		if i >= base {
			baseChars |= bit
			if isBoundary {
				baseBoundary |= bit
			}
			if isWordEnd {
				baseWordEnd |= bit
			}
		}
		prev = cls
	}
	b.boundary, b.baseBoundary = fold32(boundary), fold32(baseBoundary)
	b.wordEnd, b.baseWordEnd, b.baseChars = fold32(wordEnd), fold32(baseWordEnd), fold32(baseChars)
	b.basePairs = [2]uint32{uint32(pairs), uint32(pairs >> 32)}
	return b, mask, upper
}

// queryBound holds what scoreBound needs of one folded ASCII query.
type queryBound struct {
	mask  uint32 // characters of the query (folded by fold32, as below)
	first uint32 // its first character
	last  uint32 // its last character
	n     int    // its length in bytes
	// next[i] is the pair bit of query bytes i and i+1 and nextChar[i]
	// the folded bit of byte i+1.
	next     []uint64
	nextChar []uint32
}

func newQueryBound(folded string, mask uint64) queryBound {
	qb := queryBound{mask: fold32(mask), n: len(folded)}
	if len(folded) > 0 {
		qb.first = fold32(maskBit(rune(folded[0])))
		qb.last = fold32(maskBit(rune(folded[len(folded)-1])))
	}
	for i := 0; i+1 < len(folded); i++ {
		qb.next = append(qb.next, pairBit(folded[i], folded[i+1]))
		qb.nextChar = append(qb.nextChar, fold32(maskBit(rune(folded[i+1]))))
	}
	return qb
}

// window is the ceiling of scoreWindowASCII plus wordEndASCII for a window
// of a text whose boundary and word-end characters are boundary and
// wordEnd, and whose pairs of adjacent characters are pairs.
//
// A query character matched right after the previous one forms a pair of
// the text; when that pair is absent, a gap (at least scoreGapStart)
// separates them and the character starts a new run, whose bonus is
// bonusFor at its position: zero unless it is a boundary character, and
// at most bonusBoundary in a text without "/" (pairs other than allPairs
// are only known of those).
func (qb queryBound) window(boundary, wordEnd uint32, pairs uint64) int {
	s := qb.n * scoreMatch
	if wordEnd&qb.last != 0 {
		s += bonusWordEnd
	}
	if boundary&qb.first != 0 {
		s += bonusMax * bonusFirstCharMult
	}
	run := bonusConsecutive
	if boundary&qb.mask != 0 {
		run = bonusMax
	}
	if pairs == allPairs {
		return s + len(qb.next)*run
	}
	for i, pb := range qb.next {
		switch {
		case pairs&pb != 0:
			s += run
		case boundary&qb.nextChar[i] != 0:
			// Pairs are known only of texts without "/" (base
			// names), where bonusFor never gives more than this.
			s += scoreGapStart + bonusBoundary
		default:
			s += scoreGapStart
		}
	}
	return s
}

// scoreBound is a ceiling of scoreASCII for e (an ASCII entry whose mask
// holds every query character), without the exact-name bonus.
func (qb queryBound) scoreBound(e *entry) int {
	b := &e.bounds
	if e.baseOff == 0 {
		return qb.window(b.boundary, b.wordEnd, b.pairMask()) + bonusBasename
	}
	s := qb.window(b.boundary, b.wordEnd, allPairs)
	if b.baseChars&qb.mask == qb.mask {
		s = max(s, qb.window(b.baseBoundary, b.baseWordEnd, b.pairMask())+bonusBasename)
	}
	return s
}

// fullBound is a ceiling of the whole-path window's score of e (with its
// word-end bonus, without the base-name bonus).
func (qb queryBound) fullBound(e *entry) int {
	return qb.window(e.bounds.boundary, e.bounds.wordEnd, allPairs)
}
