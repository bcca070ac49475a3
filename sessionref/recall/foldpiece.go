package recall

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// foldPiece is about how much of a message's text is folded at once: a
// long message's folding is then not a second copy of it beside the text
// (issue 31 item 5: a 32 MiB message, folded whole, held its text and its
// folding at once).
const foldPiece = 1 << 20

// gramOverlap is how many bytes of a long token's folding a piece carries
// into the next, so that the trigrams across the cut are added too.
const gramOverlap = gramLen - 1

// addText adds the tokens of one message's text to w.ts, and the trigrams
// of its long tokens to w.gs, folding it foldPiece bytes at a time, and
// returns the size of its folding. It finds what folding the whole text
// at once finds: a piece ends after ASCII white space when there is some
// within foldPiece bytes; else it ends at a rune boundary inside a token,
// and the folding of the token's start is carried into the next piece
// (all of it while it is short, its last gramOverlap bytes once it is
// longer than maxTokenBytes and its trigrams so far are added).
func (w *worker) addText(s string) int {
	n := 0
	var carry [maxTokenBytes]byte
	carried, long := 0, false
	for len(s) > 0 {
		end, open := pieceEnd(s, foldPiece)
		w.folded = w.f.appendFold(append(w.folded[:0], carry[:carried]...), s[:end])
		n += len(w.folded) - carried
		s = s[end:]
		folded := w.folded
		if long {
			// The first token continues a long one: trigrams, whatever
			// its length here.
			k := tokenEnd(folded)
			w.gs.add(folded[:k])
			w.ts.gap = gapBroken
			folded = folded[k:]
			if !open || k < len(w.folded) {
				long = false
			}
		}
		carried = 0
		if open && !long {
			start := lastTokenStart(folded)
			w.ts.add(folded[:start], w.gs)
			folded = folded[start:]
			if len(folded) > maxTokenBytes {
				w.ts.sawLong()
				w.gs.add(folded)
				long = true
				folded = folded[len(folded)-gramOverlap:]
			}
			carried = copy(carry[:], folded)
			continue
		}
		if open {
			// Still inside the long token: carry its last bytes.
			carried = copy(carry[:], w.folded[len(w.folded)-gramOverlap:])
			continue
		}
		w.ts.add(folded, w.gs)
	}
	return n
}

// asciiSpace is the ASCII white space that ends a token (byteClass).
const asciiSpace = " \t\n\v\f\r"

// pieceEnd is the length of the piece of s folded next: all of s when it
// is at most limit bytes, else up to the last ASCII white space byte
// within limit. When there is none, the piece ends at the last rune
// boundary within limit, and open says that it may end inside a token.
func pieceEnd(s string, limit int) (end int, open bool) {
	if len(s) <= limit {
		return len(s), false
	}
	if i := strings.LastIndexAny(s[:limit], asciiSpace); i >= 0 {
		return i + 1, false
	}
	end = limit
	for end > limit-utf8.UTFMax && end > 1 && !utf8.RuneStart(s[end]) {
		end--
	}
	return end, true
}

// tokenEnd is the length of the token folded starts with: up to its first
// white space, or all of it.
func tokenEnd(folded []byte) int {
	for i := 0; i < len(folded); {
		if spaceAt(folded, i) > 0 {
			return i
		}
		_, sz := utf8.DecodeRune(folded[i:])
		i += sz
	}
	return len(folded)
}

// lastTokenStart is where the last token of folded starts: after its last
// white space, or at 0.
func lastTokenStart(folded []byte) int {
	for i := len(folded); i > 0; {
		r, sz := utf8.DecodeLastRune(folded[:i])
		if r < utf8.RuneSelf && byteClass[r] == classSpace || r >= utf8.RuneSelf && r != utf8.RuneError && unicode.IsSpace(r) {
			return i
		}
		i -= sz
	}
	return 0
}
