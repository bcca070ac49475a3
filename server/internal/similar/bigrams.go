package similar

import "strings"

// Bigrams are the letter pairs of a text as a multiset: how many times
// each pair occurs.
type Bigrams map[string]int

// BigramsOf returns the letter pairs of s, folded to lower case, with its
// runs of white space as one space.
func BigramsOf(s string) Bigrams {
	r := []rune(strings.ToLower(strings.Join(strings.Fields(s), " ")))
	out := Bigrams{}
	for i := 0; i+1 < len(r); i++ {
		out[string(r[i:i+2])]++
	}
	return out
}

// Dice is the Sørensen–Dice coefficient of two bigram multisets, from 0
// (no pair in common, or no pairs at all) to 1 (the same pairs).
func Dice(a, b Bigrams) float64 {
	total, common := 0, 0
	for k, n := range a {
		total += n
		common += min(n, b[k])
	}
	for _, n := range b {
		total += n
	}
	if total == 0 {
		return 0
	}
	return 2 * float64(common) / float64(total)
}
