package fileref

import (
	"math"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Scoring constants, as in fzf: a matched character is worth scoreMatch,
// gaps cost, and characters at word, path-segment or camelCase boundaries
// earn bonuses, so "srvgo" prefers "server/server.go" to "observer_log.go".
const (
	scoreMatch        = 16
	scoreGapStart     = -3
	scoreGapExtension = -1

	bonusBoundary          = scoreMatch / 2
	bonusNonWord           = scoreMatch / 2
	bonusCamel123          = bonusBoundary + scoreGapExtension
	bonusConsecutive       = -(scoreGapStart + scoreGapExtension)
	bonusFirstCharMult     = 2
	bonusBoundaryDelimiter = bonusBoundary + 1 // after "/" (or at the start): a path segment starts

	// bonusWordEnd rewards a match that ends where a word ends ("main"
	// in "main.go" rather than in "maintenance").
	bonusWordEnd = scoreMatch / 2

	// bonusBasename rewards a match that lies entirely in the file name,
	// which is what people type most of the time.
	bonusBasename = 2 * scoreMatch
)

// charClass groups characters for boundary bonuses.
type charClass uint8

const (
	classNonWord charClass = iota
	classDelimiter
	classLower
	classUpper
	classLetter
	classNumber
)

// asciiClass is precomputed for speed.
var asciiClass = func() (t [128]charClass) {
	for c := 0; c < 128; c++ {
		switch {
		case c >= 'a' && c <= 'z':
			t[c] = classLower
		case c >= 'A' && c <= 'Z':
			t[c] = classUpper
		case c >= '0' && c <= '9':
			t[c] = classNumber
		case c == '/':
			t[c] = classDelimiter
		default:
			t[c] = classNonWord
		}
	}
	return t
}()

func classOf[C char](c C) charClass {
	if c < utf8.RuneSelf {
		return asciiClass[c]
	}
	r := rune(c)
	switch {
	case unicode.IsLower(r):
		return classLower
	case unicode.IsUpper(r):
		return classUpper
	case unicode.IsLetter(r):
		return classLetter
	case unicode.IsNumber(r):
		return classNumber
	}
	return classNonWord
}

// bonusFor is the bonus for matching a character of class cur that follows
// one of class prev.
func bonusFor(prev, cur charClass) int {
	if cur > classDelimiter {
		switch prev {
		case classDelimiter:
			return bonusBoundaryDelimiter
		case classNonWord:
			return bonusBoundary
		}
	}
	if prev == classLower && cur == classUpper || prev != classNumber && cur == classNumber {
		return bonusCamel123
	}
	if cur == classNonWord || cur == classDelimiter {
		return bonusNonWord
	}
	return 0
}

// char is a byte for ASCII paths and a rune otherwise.
type char interface{ ~byte | ~rune }

func lower[C char](c C) C {
	if c < utf8.RuneSelf {
		if c >= 'A' && c <= 'Z' {
			return c + ('a' - 'A')
		}
		return c
	}
	return C(unicode.ToLower(rune(c)))
}

// fuzzyMatch scores query (already lower-cased) as a case-insensitive
// subsequence of text[from:], the way fzf's first algorithm does: the first
// occurrence is found forwards, then the window is tightened backwards from
// its end, and the window is scored. ok is false when query is not a
// subsequence.
func fuzzyMatch[C char](text []C, from int, query []C) (score int, ok bool) {
	if len(query) == 0 {
		return 0, true
	}
	qi := 0
	end := -1
	for i := from; i < len(text); i++ {
		if lower(text[i]) == query[qi] {
			qi++
			if qi == len(query) {
				end = i + 1
				break
			}
		}
	}
	if end < 0 {
		return 0, false
	}
	start := end
	qi = len(query) - 1
	for i := end - 1; i >= from; i-- {
		if lower(text[i]) == query[qi] {
			qi--
			if qi < 0 {
				start = i
				break
			}
		}
	}
	score = scoreWindow(text, start, end, query)
	if end == len(text) || classOf(text[end]) <= classDelimiter {
		score += bonusWordEnd
	}
	return score, true
}

// scoreWindow scores the greedy alignment of query inside text[start:end],
// which is known to contain it.
func scoreWindow[C char](text []C, start, end int, query []C) int {
	a := alignment{prev: classDelimiter} // the start of a path begins a segment
	if start > 0 {
		a.prev = classOf(text[start-1])
	}
	for i := start; i < end; i++ {
		c := text[i]
		if a.qi < len(query) && lower(c) == query[a.qi] {
			a.matched(classOf(c))
		} else {
			a.missed(classOf(c))
		}
	}
	return a.score
}

// alignment is the score of a greedy alignment, taken one character at a
// time by fzf's rules. scoreWindow and its ASCII fast path,
// scoreWindowASCII, share it: they differ only in how they read a
// character's class and compare it with the query.
type alignment struct {
	score, qi, consecutive, firstBonus int
	inGap                              bool
	prev                               charClass
}

// matched scores a character of class cls that matched query[a.qi].
func (a *alignment) matched(cls charClass) {
	a.score += scoreMatch
	bonus := bonusFor(a.prev, cls)
	if a.consecutive == 0 {
		a.firstBonus = bonus
	} else {
		if bonus >= bonusBoundary && bonus > a.firstBonus {
			a.firstBonus = bonus
		}
		bonus = max(bonus, a.firstBonus, bonusConsecutive)
	}
	if a.qi == 0 {
		a.score += bonus * bonusFirstCharMult
	} else {
		a.score += bonus
	}
	a.inGap = false
	a.consecutive++
	a.qi++
	a.prev = cls
}

// missed scores a character of class cls that the alignment passes over.
func (a *alignment) missed(cls charClass) {
	if a.inGap {
		a.score += scoreGapExtension
	} else {
		a.score += scoreGapStart
	}
	a.inGap = true
	a.consecutive = 0
	a.firstBonus = 0
	a.prev = cls
}

// scorePath scores a query against a whole path, preferring a match that
// lies entirely inside the base name (text[base:]).
func scorePath[C char](text []C, base int, query []C) (int, bool) {
	full, ok := fuzzyMatch(text, 0, query)
	if !ok {
		return 0, false
	}
	if base > 0 {
		if s, ok := fuzzyMatch(text, base, query); ok {
			return max(full, s+bonusBasename), true
		}
	} else {
		full += bonusBasename
	}
	return full, true
}

// Bits of a character mask: one per lower-case letter and digit, then a few
// punctuation bits, one for any other ASCII and one for non-ASCII. A path
// can only match a query whose mask is a subset of its own.
const (
	maskDigit0   = 26
	maskDot      = 36
	maskDash     = 37
	maskUnder    = 38
	maskSpace    = 39
	maskOther    = 62
	maskNonASCII = 63
)

func maskBit(c rune) uint64 {
	switch {
	case c >= 'a' && c <= 'z':
		return 1 << (c - 'a')
	case c >= 'A' && c <= 'Z':
		return 1 << (c - 'A')
	case c >= '0' && c <= '9':
		return 1 << (maskDigit0 + c - '0')
	case c == '.':
		return 1 << maskDot
	case c == '-':
		return 1 << maskDash
	case c == '_':
		return 1 << maskUnder
	case c == ' ':
		return 1 << maskSpace
	case c < utf8.RuneSelf:
		return 1 << maskOther
	}
	return 1 << maskNonASCII
}

// forwardASCII continues a greedy subsequence match of query (lower-case
// ASCII) in low from byte pos and returns the position after the last
// matched byte. Greedy forward matching is incremental: the end for a
// longer query continues from the end for its prefix.
func forwardASCII(low string, pos int, query string) (int, bool) {
	for i := 0; i < len(query); i++ {
		j := strings.IndexByte(low[pos:], query[i])
		if j < 0 {
			return 0, false
		}
		pos += j + 1
	}
	return pos, true
}

// backwardASCII tightens a match that ends at end: scanning backwards it
// finds the latest start of query, as fzf does. The match is known to
// exist in low[:end].
func backwardASCII(low string, end int, query string) int {
	pos := end - 1
	for i := len(query) - 1; i >= 0; i-- {
		c := query[i]
		for low[pos] != c {
			pos--
		}
		if i > 0 {
			pos--
		}
	}
	return pos
}

// scoreWindowASCII is scoreWindow for ASCII paths: path gives the
// character classes, low (its lower-case form) the comparisons.
func scoreWindowASCII(path, low string, start, end int, query string) int {
	a := alignment{prev: classDelimiter}
	if start > 0 {
		a.prev = asciiClass[path[start-1]&0x7f]
	}
	for i := start; i < end; i++ {
		if a.qi < len(query) && low[i] == query[a.qi] {
			a.matched(asciiClass[path[i]&0x7f])
		} else {
			a.missed(asciiClass[path[i]&0x7f])
		}
	}
	return a.score
}

// noBaseMatch marks a path whose base name does not contain the query.
const noBaseMatch = math.MaxUint16

// scoreASCIICeil is scoreASCII for a path whose whole-path window (with
// its word-end bonus) scores at most fullCeil: when the base name's score
// reaches that, the whole-path window is not scored.
func scoreASCIICeil(path, low string, base, end, bend int, query string, fullCeil int) int {
	if base == 0 || bend == noBaseMatch {
		s := backwardASCII(low, end, query)
		full := scoreWindowASCII(path, low, s, end, query) + wordEndASCII(path, end)
		if base == 0 {
			return full + bonusBasename
		}
		return full
	}
	bs := backwardASCII(low, bend, query)
	inBase := scoreWindowASCII(path, low, bs, bend, query) + wordEndASCII(path, bend) + bonusBasename
	if fullCeil <= inBase {
		return inBase
	}
	s := backwardASCII(low, end, query)
	return max(scoreWindowASCII(path, low, s, end, query)+wordEndASCII(path, end), inBase)
}

// wordEndASCII is bonusWordEnd when the match ending at end ends a word.
func wordEndASCII(path string, end int) int {
	if end == len(path) || asciiClass[path[end]&0x7f] <= classDelimiter {
		return bonusWordEnd
	}
	return 0
}
