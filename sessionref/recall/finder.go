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
// in took 60% of its CPU. A finder looks for the term's rarest byte
// instead (by byteRank), with bytes.IndexByte's vector loop, and checks
// the term around each one.
type finder struct {
	term string
	// at is the offset in term of its rarest byte, rare.
	at   int
	rare byte
}

func newFinder(term string) finder {
	f := finder{term: term}
	for i := 0; i < len(term); i++ {
		if byteRank[term[i]] < byteRank[term[f.at]] {
			f.at = i
		}
	}
	if term != "" {
		f.rare = term[f.at]
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
	// The rare byte of a hit starting at i is at i+at, for i from 0 to
	// len(s)-n.
	last := len(s) - n + f.at
	for p := f.at; p <= last; {
		k := strings.IndexByte(s[p:last+1], f.rare)
		if k < 0 {
			return -1
		}
		p += k
		i := p - f.at
		if s[i:i+n] == f.term && (!wordStart || words.StartAt(s, i)) {
			return i
		}
		if wordStart && s[i:i+n] == f.term {
			// As words.Index goes on: from the next rune.
			_, size := utf8.DecodeRuneInString(s[i:])
			p = i + max(size, 1) + f.at
			continue
		}
		p++
	}
	return -1
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
