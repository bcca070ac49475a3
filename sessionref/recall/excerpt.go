package recall

import (
	"cmp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/dsh-refls/dsh-refls/internal/words"
)

// Bounds of an excerpt: up to excerptBefore runes before the first hit and
// excerptAfter runes from its start, so an excerpt holds at most
// excerptBefore+excerptAfter runes plus two ellipses, whatever the message
// (an 8 MB line included).
const (
	excerptBefore = 40
	excerptAfter  = 120
	maxRanges     = 16
	ellipsis      = "…"
)

// excerptOf cuts the window of text around the hit at folded offset hit
// and marks every term's hits inside it (those at a word start only, with
// wordStart).
//
// The excerpt is safe to show in any host: control characters, line and
// paragraph separators and bidirectional formatting characters become a
// space, runs of white space become one space, and bytes that are not
// UTF-8 (the lone surrogates WTF-8 text may hold) become U+FFFD. "<" is
// kept as text; JSON answers write it as \u003c (tag-safe as in §2.3.4),
// and hosts that render Markdown must escape it (see the server).
func excerptOf(f *folder, text, folded string, ascii bool, hit int, terms []string, wordStart bool) Match {
	m := mapper{f: f, s: text, ascii: ascii}
	start, _ := m.runeAt(hit)
	wStart, wEnd := start, start
	if ascii {
		// One byte per rune.
		wStart, wEnd = max(0, start-excerptBefore), min(len(text), start+excerptAfter)
	} else {
		for n := 0; n < excerptBefore && wStart > 0; n++ {
			_, size := utf8.DecodeLastRuneInString(text[:wStart])
			wStart -= size
		}
		for n := 0; n < excerptAfter && wEnd < len(text); n++ {
			_, size := utf8.DecodeRuneInString(text[wEnd:])
			wEnd += size
		}
	}
	// u16s[i-wStart] is the UTF-16 offset in the excerpt of the text's
	// byte i (its rune's, for a byte inside a rune); one more for wEnd.
	u16s := slices.Grow(f.u16s[:0], wEnd-wStart+1)[:wEnd-wStart+1]
	f.u16s = u16s
	b := slices.Grow(f.excerpt[:0], wEnd-wStart+2*len(ellipsis))
	u16 := int32(0)
	if wStart > 0 {
		b = append(b, ellipsis...)
		u16++
	}
	lastSpace := false
	for i := wStart; i < wEnd; {
		if c := text[i]; c < utf8.RuneSelf {
			u16s[i-wStart] = u16
			i++
			if unsafeRune(rune(c)) {
				if lastSpace {
					continue
				}
				c, lastSpace = ' ', true
			} else {
				lastSpace = false
			}
			b = append(b, c)
			u16++
			continue
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		for k := 0; k < size; k++ {
			u16s[i-wStart+k] = u16
		}
		i += size
		if unsafeRune(r) {
			if lastSpace {
				continue
			}
			r, lastSpace = ' ', true
		} else {
			lastSpace = false
		}
		b = utf8.AppendRune(b, r) // RuneError for a byte that is not UTF-8
		u16 += int32(utf16.RuneLen(r))
	}
	u16s[wEnd-wStart] = u16
	if wEnd < len(text) {
		b = append(b, ellipsis...)
	}
	f.excerpt = b
	toU16 := func(orig int) int { return int(u16s[min(max(orig-wStart, 0), wEnd-wStart)]) }
	var ranges [][2]int
	for _, t := range terms {
		starts, ends := mapper{f: f, s: text, ascii: ascii}, mapper{f: f, s: text, ascii: ascii}
		from, hay := 0, folded
		if ascii {
			// Offsets are the text's: only the window needs searching.
			from, hay = wStart, folded[:min(len(folded), wEnd+len(t)-1)]
		}
		for from <= len(hay)-len(t) {
			i := strings.Index(hay[from:], t)
			if i < 0 {
				break
			}
			i += from
			from = i + 1
			if wordStart && !words.StartAt(folded, i) {
				continue
			}
			s, _ := starts.runeAt(i)
			_, e := ends.runeAt(i + len(t) - 1)
			if s >= wEnd {
				break
			}
			if e <= wStart {
				continue
			}
			s, e = max(s, wStart), min(e, wEnd)
			if a, z := toU16(s), toU16(e); z > a {
				ranges = append(ranges, [2]int{a, z})
			}
		}
	}
	return Match{Excerpt: string(b), Ranges: mergeRanges(ranges)}
}

// unsafeRune reports the runes an excerpt shows as a space.
func unsafeRune(r rune) bool {
	if r < utf8.RuneSelf {
		return r < 0x20 || r == 0x7f || r == ' '
	}
	switch {
	case unicode.IsSpace(r), unicode.IsControl(r):
		return true
	case r == '\u2028', r == '\u2029':
		return true
	case r >= '\u202a' && r <= '\u202e', r >= '\u2066' && r <= '\u2069', r == '\u200e', r == '\u200f', r == '\u061c':
		return true
	}
	return false
}

// mergeRanges sorts ranges, joins overlapping ones and keeps maxRanges.
func mergeRanges(rs [][2]int) [][2]int {
	if len(rs) == 0 {
		return [][2]int{}
	}
	slices.SortFunc(rs, func(a, b [2]int) int { return cmp.Compare(a[0], b[0]) })
	out := rs[:1]
	for _, r := range rs[1:] {
		last := &out[len(out)-1]
		if r[0] <= last[1] {
			last[1] = max(last[1], r[1])
			continue
		}
		out = append(out, r)
	}
	if len(out) > maxRanges {
		out = out[:maxRanges]
	}
	return out
}
