// Package words says where words start in text, the one rule completion
// ranks by: a typed word that starts a word of a title, a file name or a
// session's text is a match a person means; one inside a word ("rate" in
// "generated") is noise.
//
// A word starts at the start of the text, after a rune that is neither a
// letter nor a digit, at every character of CJK text, and where Latin (or
// other spaced) text follows CJK text. CJK text has no spaces to find its
// words by, and a word of it may stand anywhere in a run of Han, Hiragana,
// Katakana or Hangul (伏見稲荷 in 伏見稲荷大社に行く, 登录 in 修复登录测试), so
// every CJK character may begin one; a person typing CJK means it where it
// stands. (A first version counted a whole run as one word; on the ranking
// set, scripts/rankset, it lost 伏見稲荷, 嵐山 and 超支.) A word that itself
// begins with a rune that is neither letter nor digit (".env", "#42")
// starts a word wherever it stands.
package words

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// StartAt reports whether a word starts at byte i of s.
func StartAt(s string, i int) bool {
	if i == 0 {
		return true
	}
	cur, _ := utf8.DecodeRuneInString(s[i:])
	if !isWordRune(cur) || isCJK(cur) {
		return true
	}
	prev, _ := utf8.DecodeLastRuneInString(s[:i])
	return !isWordRune(prev) || isCJK(prev)
}

// Index is the byte offset of the first occurrence of t in s at or after
// from that starts a word, or -1.
func Index(s, t string, from int) int {
	for from <= len(s)-len(t) {
		i := strings.Index(s[from:], t)
		if i < 0 {
			return -1
		}
		at := from + i
		if StartAt(s, at) {
			return at
		}
		_, size := utf8.DecodeRuneInString(s[at:])
		from = at + max(size, 1)
	}
	return -1
}

func isWordRune(r rune) bool {
	if r < utf8.RuneSelf {
		return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
	}
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r)
}

// isCJK reports whether r is written without spaces between words: Han,
// Hiragana, Katakana (with the prolonged sound mark) or Hangul.
func isCJK(r rune) bool {
	if r < 0x1100 {
		return false
	}
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul) || r == 'ー'
}
