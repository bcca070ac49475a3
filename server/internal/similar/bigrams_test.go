package similar

import (
	"maps"
	"testing"
)

// TestBigrams: the letter pairs of a title, folded to lower case, with
// its runs of white space as one space.
func TestBigrams(t *testing.T) {
	for _, tt := range []struct {
		s    string
		want map[string]int
	}{
		{"", map[string]int{}},
		{"a", map[string]int{}},
		{"Ab  c", map[string]int{"ab": 1, "b ": 1, " c": 1}},
		{"  aaa\t", map[string]int{"aa": 2}},
		{"ÉtÉ", map[string]int{"ét": 1, "té": 1}},
	} {
		if got := BigramsOf(tt.s); !maps.Equal(got, tt.want) {
			t.Errorf("BigramsOf(%q) = %v, want %v", tt.s, got, tt.want)
		}
	}
}

// TestDice: the Sørensen–Dice coefficient of bigram multisets: 1 for the
// same title, 0 for titles with no pair in common or no pairs at all, and
// repeated pairs counted as often as both have them.
func TestDice(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		want float64
	}{
		{"rate limits", "Rate  Limits", 1},
		{"abc", "xyz", 0},
		{"", "", 0},
		{"a", "abc", 0},
		{"night", "nacht", 0.25}, // "ht" of 4 + 4 pairs
		{"aaaa", "aa", 0.5},      // "aa" ×3 and ×1: 2·1 / 4
	} {
		if got := Dice(BigramsOf(tt.a), BigramsOf(tt.b)); got != tt.want {
			t.Errorf("Dice(%q, %q) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
}
