package recall

import (
	"encoding/binary"
	"slices"
	"strings"
	"unicode"
)

// A phrase of common words is in most sessions word by word, so the
// postings leave it to the text, and in dshgen text (every word of a
// small vocabulary in every block) `"session poll"` lay in 36 of the 340
// blocks its search read: a search decoded every block of a session that
// did not hold it, and every block of one that held it fewer than three
// times. Each block therefore carries a filter of the pairs of adjacent
// tokens in it, for tokens separated by exactly one ASCII space (the only
// separator a phrase typed with one space matches): a Bloom filter of the
// last eight bytes of the first token (its tail) with the first four of
// the second (its head). At each of its spaces a phrase needs the pair of
// the tail of the piece before it and the head of the piece after it: a
// first piece may end a longer token and a last one begin one, and when
// such a piece is shorter than the edge, the tails or heads of the
// dictionary's tokens that it ends or begins are looked up. Eight bytes
// of tail tell "session" from "version"; four of head make "poll",
// "poll," and "polling" one head, where whole tokens made the last piece
// of `"session poll"` three lookups, each letting 15% of the absent pairs
// through. A block whose filter holds none is not decoded. A filter never
// says no to a pair the block holds; it may say yes to one it does not
// hold (filterBitsPer32).
//
// A block holding a token longer than maxTokenBytes has no filter: such a
// token is handled by the trigram postings, outside the tokeniser that
// makes the pairs.

// Bounds of a block's pair filter.
const (
	// filterBitsPer32 is the filter's bits per 32 bytes of the block's
	// text (filterWords); each pair sets 2 bits of one word (pairBits):
	// with b bits per pair, a pair the block does not hold passes about
	// (1 - e^(-2/b))^2 of the time, 15% for 4 bits, a little more as the
	// pairs fall unevenly on words. Sized by their pairs, filters of 5
	// bits per pair of dshgen text took the index to 51.7% of the
	// projected text on disk, over the half it may take, and of 4 bits to
	// 48.0%; these, 48.7-48.8%.
	filterBitsPer32 = 17
	// minPairToken is the shortest token a pair is recorded for: the
	// pairs of "a", "of", "to" and the like are not (a phrase is then
	// decided at its other spaces, or in the text). They are a sixth of
	// dshgen's pairs and a larger share of English text's.
	minPairToken = 3
	// maxPairProbes bounds the pairs a search looks up at one space of a
	// phrase (a first piece of three bytes may end the tails of hundreds
	// of tokens): past it that space decides nothing.
	maxPairProbes = 64
)

// Gap states between the tokens of one message, across the pieces it is
// tokenised in (tokenSet.gap).
const (
	// gapBroken: no token yet in the message, or more than one space
	// (or another separator) since the last one.
	gapBroken = iota
	// gapNone: the last token ended where the text handed so far ended.
	gapNone
	// gapSpace: the last token was followed by exactly one ' '.
	gapSpace
)

// edgeKeys returns the tail and head of tok for the pair filter: its
// last eight and its first four bytes (the whole of a shorter token),
// little endian; in is false for a token shorter than minPairToken,
// which is in no pair.
func edgeKeys(tok []byte) (tail, head uint64, in bool) {
	if len(tok) < minPairToken {
		return 0, 0, false
	}
	return edgeOf(tok[max(0, len(tok)-tailBytes):]), edgeOf(tok[:min(headBytes, len(tok))]), true
}

// The bytes of a token's edges in the pair filter.
const (
	tailBytes = 8
	headBytes = 4
)

// edgeOf is up to eight bytes as a little-endian number.
func edgeOf(b []byte) uint64 {
	var x uint64
	for i := len(b) - 1; i >= 0; i-- {
		x = x<<8 | uint64(b[i])
	}
	return x
}

// pairOf hashes the pair of the tail of a token and the head of the
// next.
func pairOf(tail, head uint64) uint64 {
	p := (tail*0x9e3779b97f4a7c15 + head) * 0xbf58476d1ce4e5b9
	return p ^ p>>32
}

// filterWords is the size in 64-bit words of the pair filter of a block
// of n bytes of text: filterBitsPer32 bits per 32 bytes, at least one
// word. It is sized by the text, known before the block is tokenised, so
// that each pair sets its bits as it is found: collecting the pairs to
// count them first took 5-7% of a first build's CPU (CPU profiles).
// dshgen text has a pair (of tokens of minPairToken bytes or more, one
// space apart) every 7.7 bytes, English prose about every 10: 4.1 and
// 5.3 bits per pair.
func filterWords(n int) int { return max(1, (n*filterBitsPer32/32+63)/64) }

// pairBits are the bits pair p sets in its word of a filter: two (at 4
// bits per pair a third would let 14.7% of the absent pairs through
// rather than 15.5%, by the formula above, for one more bit to set and
// test; the tokeniser measured no faster either way).
func pairBits(p uint64) uint64 {
	return 1<<(p&63) | 1<<(p>>6&63)
}

// filterMayHold reports whether the block whose filter is f, a whole
// number of words (little endian), may hold the pair p.
func filterMayHold(f []byte, p uint64) bool {
	w := 8 * ((p >> 32) * uint64(len(f)/8) >> 32)
	m := pairBits(p)
	return binary.LittleEndian.Uint64(f[w:])&m == m
}

// pairPlan is what a phrase needs of a block's pair filter: at each
// space (spaces), one of the pairs listed.
type pairPlan struct {
	spaces [][]uint64
}

// planPairs returns the pair plan of term, a spaced term, over the
// dictionary dict, of which ids[i] are the tokens holding the term's
// piece i (termPlan.pieces: a token that ends or begins with a piece is
// one of them, so the dictionary is not scanned again); ok is false
// when no space of it can be decided by a
// filter (a term with other white space than single spaces between its
// pieces, or with white space at either end, or whose every space has a
// piece shorter than minPairToken beside it, or a first or last piece of
// minPairToken bytes that too many tokens end or begin with).
func planPairs(dict []string, ids [][]uint32, term string) (_ pairPlan, ok bool) {
	pieces := strings.Split(term, " ")
	if len(pieces) < 2 || len(pieces) != len(ids) {
		return pairPlan{}, false
	}
	for _, p := range pieces {
		if p == "" || strings.IndexFunc(p, unicode.IsSpace) >= 0 {
			return pairPlan{}, false
		}
	}
	// tails[i] and heads[i] are what piece i may be the tail and the head
	// of: its own edges when it is a whole token (a middle piece) or as
	// long as the edge, else the tails of the tokens ending with it (a
	// first piece) or the heads of the tokens beginning with it (a last
	// piece). nil: undecided.
	tails := make([][]uint64, len(pieces))
	heads := make([][]uint64, len(pieces))
	for i, p := range pieces {
		tail, head, in := edgeKeys([]byte(p))
		if !in {
			continue
		}
		tails[i], heads[i] = []uint64{tail}, []uint64{head}
		if i == 0 && len(p) < tailBytes {
			tails[i] = edgesOf(dict, ids[i], p, true)
		}
		if i == len(pieces)-1 && len(p) < headBytes {
			heads[i] = edgesOf(dict, ids[i], p, false)
		}
	}
	var plan pairPlan
	for i := 0; i+1 < len(pieces); i++ {
		l, r := tails[i], heads[i+1]
		if l == nil || r == nil || len(l)*len(r) > maxPairProbes {
			continue
		}
		var need []uint64
		for _, a := range l {
			for _, b := range r {
				need = append(need, pairOf(a, b))
			}
		}
		plan.spaces = append(plan.spaces, need)
	}
	return plan, len(plan.spaces) > 0
}

// edgesOf returns the distinct tails of the tokens ids of dict that end
// with piece (tails) or the heads of those that begin with it, an empty
// non-nil list when there is none, nil when there are more than
// maxPairProbes.
func edgesOf(dict []string, ids []uint32, piece string, tails bool) []uint64 {
	out := []uint64{}
	for _, id := range ids {
		t := dict[id]
		if tails && !strings.HasSuffix(t, piece) || !tails && !strings.HasPrefix(t, piece) {
			continue
		}
		tail, head, _ := edgeKeys([]byte(t))
		k := head
		if tails {
			k = tail
		}
		if !slices.Contains(out, k) {
			if len(out) == maxPairProbes {
				return nil
			}
			out = append(out, k)
		}
	}
	return out
}

// excludes reports whether a block whose pair filter is f cannot hold the
// phrase: f is not empty and, at some space of the phrase, holds none of
// its pairs.
func (p *pairPlan) excludes(f []byte) bool {
	if len(f) == 0 {
		return false
	}
	for _, need := range p.spaces {
		hit := false
		for _, x := range need {
			if filterMayHold(f, x) {
				hit = true
				break
			}
		}
		if !hit {
			return true
		}
	}
	return false
}
