package recall

import (
	"encoding/binary"
	"slices"
	"unicode/utf8"

	"golang.org/x/text/cases"
)

// folder folds text rune by rune with Unicode full case folding
// (golang.org/x/text/cases.Fold), so "Straße" matches "STRASSE" and "ΟΣ"
// matches "ος". Folding rune by rune, rather than a whole string at once,
// keeps every folded byte traceable to the rune it came from, which is how
// an excerpt of the original text is cut around a hit found in the folded
// text. Bytes that are not UTF-8 (lone surrogates of WTF-8 text, damaged
// input) are kept as they are. A folder is not safe for concurrent use.
type folder struct {
	cache map[rune]string
	caser cases.Caser
	// u16s and excerpt are excerptOf's scratch space, kept across the
	// excerpts of a search and the searches that share a blockScratch.
	u16s    []int32
	excerpt []byte
}

func newFolder() *folder {
	return &folder{cache: map[rune]string{}, caser: cases.Fold()}
}

// rune returns the folding of r.
func (f *folder) rune(r rune) string {
	if s, ok := f.cache[r]; ok {
		return s
	}
	s := f.caser.String(string(r))
	f.caser.Reset()
	f.cache[r] = s
	return s
}

// appendFold appends the folding of s to dst.
func (f *folder) appendFold(dst []byte, s string) []byte {
	dst, _ = f.appendFolding(dst, s)
	return dst
}

// appendFolding is appendFold that also reports whether s was all ASCII,
// which it learns on the way: a block read back for a search tells its
// excerpts so, and a second pass over the text to find out (isASCII) took
// a fifth of the CPU of a search for a phrase of common words.
func (f *folder) appendFolding(dst []byte, s string) (_ []byte, ascii bool) {
	ascii = true
	// Room for s at once: a folding is as long as s but for the few runes
	// whose folding is longer, and appending eight bytes at a time would
	// otherwise grow dst by doubling through a long run.
	dst = slices.Grow(dst, len(s))
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			// A run of ASCII is lowered sixteen bytes at a time
			// (lowerASCII), then eight (lowerASCII8), then byte by byte
			// to its end.
			dst = slices.Grow(dst, len(s)-i)
			k := lowerASCII(dst[len(dst):len(dst)+(len(s)-i)&^15], s[i:])
			dst = dst[:len(dst)+k]
			j := i + k
			for ; j+8 <= len(s); j += 8 {
				x := uint64(s[j]) | uint64(s[j+1])<<8 | uint64(s[j+2])<<16 | uint64(s[j+3])<<24 |
					uint64(s[j+4])<<32 | uint64(s[j+5])<<40 | uint64(s[j+6])<<48 | uint64(s[j+7])<<56
				if x&0x8080808080808080 != 0 {
					break
				}
				dst = binary.LittleEndian.AppendUint64(dst, lowerASCII8(x))
			}
			for ; j < len(s) && s[j] < utf8.RuneSelf; j++ {
				c := s[j]
				if 'A' <= c && c <= 'Z' {
					c += 'a' - 'A'
				}
				dst = append(dst, c)
			}
			i = j
			continue
		}
		ascii = false
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			dst = append(dst, c)
			i++
			continue
		}
		dst = append(dst, f.rune(r)...)
		i += n
	}
	return dst, ascii
}

// lowerASCII8 lowers the eight ASCII bytes of x (every high bit clear):
// a byte b gets 0x20 added when 'A' <= b <= 'Z', found by the high bits of
// b + (0x80 - 'A') (set from 'A' on) and of b + (0x80 - 'Z' - 1) (set past
// 'Z'); no sum carries into the next byte. Folding took 1.2-1.5 CPU-s per
// GB of projected text byte by byte.
func lowerASCII8(x uint64) uint64 {
	const (
		fromA   = 0x3f3f3f3f3f3f3f3f // 0x80 - 'A' in every byte
		pastZ   = 0x2525252525252525 // 0x80 - 'Z' - 1
		highBit = 0x8080808080808080
	)
	upper := (x + fromA) &^ (x + pastZ) & highBit
	return x | upper>>2
}

// fold returns the folding of s.
func (f *folder) fold(s string) string {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf || ('A' <= c && c <= 'Z') {
			return string(f.appendFold(make([]byte, 0, len(s)+8), s))
		}
	}
	return s
}

// mapper maps offsets in the folding of s back to s. Its calls must come
// with offsets that never decrease; it walks s once.
type mapper struct {
	f *folder
	s string
	// ascii is set when s is all ASCII: its folding then has the same
	// offsets, and nothing needs to be walked.
	ascii bool
	// i is the offset in s of the rune whose folding starts at pos.
	i, pos int
}

// isASCII reports whether s holds only ASCII bytes.
func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// runeAt returns the bytes [start, end) of s whose folding holds the
// folded offset fo; past the end it returns len(s), len(s).
func (m *mapper) runeAt(fo int) (start, end int) {
	if m.ascii {
		if fo >= len(m.s) {
			return len(m.s), len(m.s)
		}
		return fo, fo + 1
	}
	for m.i < len(m.s) {
		c := m.s[m.i]
		n, width := 1, 1
		if c >= utf8.RuneSelf {
			r, sz := utf8.DecodeRuneInString(m.s[m.i:])
			n = sz
			if !(r == utf8.RuneError && sz == 1) {
				width = len(m.f.rune(r))
			}
		}
		if m.pos+width > fo {
			return m.i, m.i + n
		}
		m.pos += width
		m.i += n
	}
	return len(m.s), len(m.s)
}
