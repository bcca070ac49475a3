package recall

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/dsh-refls/dsh-refls/internal/words"
)

// A finder finds what strings.Index finds, and with wordStart what
// words.Index finds, for terms whose rarest byte is anywhere in them, in
// text of every script, with the term at either end of the text and
// repeated inside itself.
func TestFinderIsIndex(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	alphabet := []string{"a", "b", "s", "p", " ", "q", "z", "1", "-", "é", "ß", "登", "录", "\n", "ab", "aba"}
	gen := func(n int) string {
		var b strings.Builder
		for range n {
			b.WriteString(alphabet[r.IntN(len(alphabet))])
		}
		return b.String()
	}
	for range 20000 {
		s := gen(r.IntN(40))
		term := gen(1 + r.IntN(4))
		if r.IntN(3) == 0 && len(s) > 0 {
			// A piece of s itself: a hit, often more than one.
			i := r.IntN(len(s))
			term = s[i:min(len(s), i+1+r.IntN(6))]
		}
		f := newFinder(term)
		if got, want := f.index(s, false), strings.Index(s, term); got != want {
			t.Fatalf("finder of %q in %q = %d, strings.Index %d", term, s, got, want)
		}
		if got, want := f.index(s, true), words.Index(s, term, 0); got != want {
			t.Fatalf("finder of %q in %q at a word start = %d, words.Index %d", term, s, got, want)
		}
	}
}

// A finder anchors on the rarest byte of its term: "p" of "session poll",
// a digit before a letter, a letter before the space.
func TestFinderAnchorsOnTheRarestByte(t *testing.T) {
	for term, want := range map[string]byte{"session poll": 'p', "v2 release": '2', "a b": 'b', "é": "é"[0]} {
		if f := newFinder(term); f.rare != want || term[f.at] != want {
			t.Errorf("finder of %q anchors on %q at %d, want %q", term, f.rare, f.at, want)
		}
	}
}
