package recall

import (
	"strings"
	"unicode/utf8"

	"github.com/dsh-refls/dsh-refls/internal/words"
)

// finder finds one term of a query in folded text. strings.Index looks
// for a term's first byte and checks the term at each one; the first byte
// of a phrase of common words ("s" of "session poll") is among the most
// frequent of the text, and the search of the blocks a phrase is checked
// in took 60% of its CPU. A finder looks for the term's two rarest bytes
// instead (by byteRank), at their distance, 16 places at a time
// (indexPair), and checks the term where both are; a term of one byte,
// and the last places of the text, by its rarest byte with
// strings.IndexByte. Looking for the rarest byte alone stopped at every
// "p" of the text for "session poll": 2.3 GB/s of dshgen text, 7.3 by
// both bytes, where strings.Index goes at 1.5 (BenchmarkFinder).
type finder struct {
	term string
	// at is the offset in term of its rarest byte, rare; at2 that of the
	// rarest at another offset, rare2 (for a term of two bytes or more).
	at, at2     int
	rare, rare2 byte
}

func newFinder(term string) finder {
	f := finder{term: term}
	for i := 0; i < len(term); i++ {
		if byteRank[term[i]] < byteRank[term[f.at]] {
			f.at = i
		}
	}
	if term == "" {
		return f
	}
	f.rare = term[f.at]
	f.at2 = -1
	for i := 0; i < len(term); i++ {
		if i != f.at && (f.at2 < 0 || byteRank[term[i]] < byteRank[term[f.at2]]) {
			f.at2 = i
		}
	}
	if f.at2 >= 0 {
		f.rare2 = term[f.at2]
	}
	return f
}

// index returns the offset of the first hit of the term in s (where a
// word starts, with wordStart: internal/words), -1 when there is none.
func (f *finder) index(s string, wordStart bool) int {
	n := len(f.term)
	if n == 0 {
		return 0
	}
	last := len(s) - n // the last place a hit may start at
	i := 0             // the first place not ruled out
	if f.at2 >= 0 {
		for i <= last {
			k, covered := indexPair(s[i:], last-i+1, f.at, f.at2, f.rare, f.rare2)
			if k < 0 {
				i += covered
				break
			}
			hit, next := f.hitAt(s, i+k, wordStart)
			if hit {
				return i + k
			}
			i = next
		}
	}
	// The places left: the rare byte of a hit starting at i is at i+at.
	for p := i + f.at; p <= last+f.at; {
		k := strings.IndexByte(s[p:last+f.at+1], f.rare)
		if k < 0 {
			return -1
		}
		hit, next := f.hitAt(s, p+k-f.at, wordStart)
		if hit {
			return p + k - f.at
		}
		p = next + f.at
	}
	return -1
}

// hitAt reports whether a hit of the term starts at i, where s holds
// enough bytes for one; when none does, next is the first place after i
// that may start one: i+1, or as words.Index goes on from a place whose
// text is the term but does not start a word, the next rune.
func (f *finder) hitAt(s string, i int, wordStart bool) (hit bool, next int) {
	switch {
	case s[i:i+len(f.term)] != f.term:
		return false, i + 1
	case !wordStart || words.StartAt(s, i):
		return true, i
	}
	_, size := utf8.DecodeRuneInString(s[i:])
	return false, i + max(size, 1)
}

// byteRank ranks bytes by how often they occur in folded conversation
// text, rarer bytes lower: control bytes and most punctuation, then
// digits and the punctuation of code, then the bytes of other scripts'
// UTF-8 (as frequent as letters there), then the letters and separators
// of English text and code by their frequency, the space last.
var byteRank = func() (r [256]uint8) {
	rank := uint8(1)
	for _, b := range []byte("0123456789-_/:;'\"()[]{}=<>*#+") {
		r[b], rank = rank, rank+1
	}
	for b := 0x80; b <= 0xf4; b++ {
		r[b] = rank
	}
	rank++
	for _, b := range []byte("zqjxkvbywgpfmucdlhrsnioate.,\n ") {
		r[b], rank = rank, rank+1
	}
	return r
}()
