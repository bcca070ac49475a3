package words

import (
	"strings"
	"testing"
)

func TestIndex(t *testing.T) {
	for _, tc := range []struct {
		text, word string
		want       bool
	}{
		{"rate limiting", "rate", true},
		{"shipped rate limiting", "rate", true},
		{"half-migrated", "rate", false},
		{"generated code", "rate", false},
		{"half-rated", "rate", true}, // after a hyphen
		{"(rate)", "rate", true},
		{"ratelimit", "rate", true},
		{"x2rate", "rate", false},
		{"修复登录测试", "登录", true}, // every CJK character may begin a word
		{"登录失败", "登录", true},
		{"api登录", "登录", true},      // a CJK run begins after Latin letters
		{"登录api", "api", true},     // and Latin after CJK
		{"cat .env", ".env", true}, // a word that begins with punctuation
		{"foo.env", ".env", true},
		{"ééé", "é", true}, // the first
	} {
		i := strings.Index(tc.text, tc.word)
		got := Index(tc.text, tc.word, 0) >= 0
		if got != tc.want {
			t.Errorf("%q in %q (first at %d): word start %v, want %v", tc.word, tc.text, i, got, tc.want)
		}
	}
	// A later occurrence at a word start is found past an earlier one
	// inside a word.
	if i := Index("generated rate", "rate", 0); i != len("generated ") {
		t.Errorf("indexWordStart = %d, want %d", i, len("generated "))
	}
}
