package similar

import "testing"

// TestEditDistance: the Levenshtein distance in runes, folded to lower
// case, symmetric.
func TestEditDistance(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"", "abc", 3},
		{"kitten", "sitting", 3},
		{"README.md", "readme.md", 0},
		{"héllo", "hello", 1},
		{"😀a", "a", 1},
		{"api/rate.go", "api/ratelimit.go", 5},
	} {
		if got := EditDistance(tt.a, tt.b); got != tt.want {
			t.Errorf("EditDistance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
		if got := EditDistance(tt.b, tt.a); got != tt.want {
			t.Errorf("EditDistance(%q, %q) = %d, want %d", tt.b, tt.a, got, tt.want)
		}
	}
}
