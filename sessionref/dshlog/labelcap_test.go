package dshlog

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCapLabel(t *testing.T) {
	cases := []struct {
		name, in string
		want     int // bytes of the result
	}{
		{"short", "Refactor config loader", 22},
		{"exactly the cap", strings.Repeat("a", MaxLabelBytes), MaxLabelBytes},
		{"one byte over", strings.Repeat("a", MaxLabelBytes+1), MaxLabelBytes},
		// 1021 bytes of prefix room: 340 three-byte runes fill 1020, the
		// 341st would cross it.
		{"three-byte runes", strings.Repeat("€", 2000), 340*3 + len(labelEllipsis)},
		// An ASCII byte shifts the boundary so a four-byte rune straddles it.
		{"four-byte runes", "x" + strings.Repeat("😀", 1000), 1 + 255*4 + len(labelEllipsis)},
	}
	for _, c := range cases {
		got := CapLabel(c.in)
		if len(got) != c.want || !utf8.ValidString(got) {
			t.Errorf("%s: %d bytes (valid UTF-8: %v), want %d", c.name, len(got), utf8.ValidString(got), c.want)
		}
		if len(c.in) > MaxLabelBytes {
			if !strings.HasSuffix(got, labelEllipsis) || !strings.HasPrefix(c.in, strings.TrimSuffix(got, labelEllipsis)) {
				t.Errorf("%s: %q is not a prefix of the input and the ellipsis", c.name, got[len(got)-10:])
			}
		} else if got != c.in {
			t.Errorf("%s: changed a label within the cap", c.name)
		}
	}
}
