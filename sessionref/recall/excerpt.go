package recall

import (
	"sort"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
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
// and marks every term's hits inside it.
//
// The excerpt is safe to show in any host: control characters, line and
// paragraph separators and bidirectional formatting characters become a
// space, runs of white space become one space, and bytes that are not
// UTF-8 (the lone surrogates WTF-8 text may hold) become U+FFFD. "<" is
// kept as text; JSON answers write it as \u003c (tag-safe as in §2.3.4),
// and hosts that render Markdown must escape it (see the server).
func excerptOf(f *folder, text, folded string, hit int, terms []string) Match {
	m := mapper{f: f, s: text}
	start, _ := m.runeAt(hit)
	wStart := start
	for n := 0; n < excerptBefore && wStart > 0; n++ {
		_, size := utf8.DecodeLastRuneInString(text[:wStart])
		wStart -= size
	}
	wEnd := start
	for n := 0; n < excerptAfter && wEnd < len(text); n++ {
		_, size := utf8.DecodeRuneInString(text[wEnd:])
		wEnd += size
	}
	var b strings.Builder
	type pos struct{ orig, u16 int }
	positions := make([]pos, 0, wEnd-wStart+1)
	u16 := 0
	if wStart > 0 {
		b.WriteString(ellipsis)
		u16++
	}
	lastSpace := false
	for i := wStart; i < wEnd; {
		r, size := utf8.DecodeRuneInString(text[i:])
		positions = append(positions, pos{i, u16})
		i += size
		switch {
		case r == utf8.RuneError && size == 1:
			r = utf8.RuneError
		case unsafeRune(r):
			r = ' '
		}
		if r == ' ' {
			if lastSpace {
				continue
			}
			lastSpace = true
		} else {
			lastSpace = false
		}
		b.WriteRune(r)
		u16 += utf16.RuneLen(r)
	}
	positions = append(positions, pos{wEnd, u16})
	if wEnd < len(text) {
		b.WriteString(ellipsis)
	}
	toU16 := func(orig int) int {
		k := sort.Search(len(positions), func(k int) bool { return positions[k].orig >= orig })
		return positions[min(k, len(positions)-1)].u16
	}
	var ranges [][2]int
	for _, t := range terms {
		starts, ends := mapper{f: f, s: text}, mapper{f: f, s: text}
		for from := 0; from <= len(folded)-len(t); {
			i := strings.Index(folded[from:], t)
			if i < 0 {
				break
			}
			i += from
			from = i + 1
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
	return Match{Excerpt: b.String(), Ranges: mergeRanges(ranges)}
}

// unsafeRune reports the runes an excerpt shows as a space.
func unsafeRune(r rune) bool {
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
	sort.Slice(rs, func(i, j int) bool { return rs[i][0] < rs[j][0] })
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
