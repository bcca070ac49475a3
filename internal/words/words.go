// Package words says where words start in text, the one rule completion
// ranks by: a typed word that starts a word of a title, a file name or a
// session's text is a match a person means; one inside a word ("rate" in
// "generated") is noise.
//
// A word starts at the start of the text, after a rune that is neither a
// letter nor a digit, or where a run of CJK text begins. CJK text has no
// spaces to find its words by, so a run of Han, Hiragana, Katakana or
// Hangul (a phrase or a sentence) counts as one word: 登录 starts a word in
// 登录失败 and after "API" in API登录, not inside 修复登录. A word that
// itself begins with a rune that is neither letter nor digit (".env",
// "#42") starts a word wherever it stands.
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
	if !isWordRune(cur) {
		return true
	}
	prev, _ := utf8.DecodeLastRuneInString(s[:i])
	return !isWordRune(prev) || isCJK(prev) != isCJK(cur)
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
