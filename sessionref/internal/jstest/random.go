// Package jstest holds what the tests of JavaScript-exact text share: the
// code points where JavaScript's and Go's serialisers differ, and random
// strings of them.
package jstest

import (
	"math/rand/v2"
	"strings"
)

// TrickyRunes are the code points where JavaScript and Go serialisers
// differ or that stress UTF-8 and UTF-16 handling.
var TrickyRunes = []rune{
	'a', 'Z', '0', '-', '_', '.', '~', ' ', '/', '\\', ':', '"', '<', '>', '&', '\'',
	'\b', '\f', '\n', '\r', '\t', 0, 1, 0x1f, 0x7f, 0x80, 0xa0, 0xe9, 0x2028, 0x2029,
	0xfeff, 0xfffd, 0x4f1a, 0x8bdd, 0x1f600, 0x1d11e, 0x10ffff, '@', '[', ']', '(', ')',
}

// RandomString builds a deterministic pseudo-random string from TrickyRunes,
// sometimes with an invalid UTF-8 byte.
func RandomString(rng *rand.Rand, maxLen int) string {
	n := 1 + rng.IntN(maxLen)
	var b strings.Builder
	for range n {
		if rng.IntN(40) == 0 {
			b.WriteByte(0x80 + byte(rng.IntN(0x80)))
			continue
		}
		b.WriteRune(TrickyRunes[rng.IntN(len(TrickyRunes))])
	}
	return b.String()
}
