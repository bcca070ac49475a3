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
// repeated inside itself, in texts long enough for indexPair's runs of 16
// places and the places left after them.
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
		s := gen(r.IntN(120))
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
// a digit before a letter, a letter before the space; and on the rarest
// at another offset: "l" of "session poll".
func TestFinderAnchorsOnTheRarestByte(t *testing.T) {
	for term, want := range map[string][2]byte{"session poll": {'p', 'l'}, "v2 release": {'2', 'v'}, "a b": {'b', 'a'}, "ll": {'l', 'l'}, "é": {"é"[0], "é"[1]}} {
		f := newFinder(term)
		if f.rare != want[0] || term[f.at] != want[0] {
			t.Errorf("finder of %q anchors on %q at %d, want %q", term, f.rare, f.at, want[0])
		}
		if f.rare2 != want[1] || f.at2 == f.at || term[f.at2] != want[1] {
			t.Errorf("finder of %q anchors second on %q at %d, want %q", term, f.rare2, f.at2, want[1])
		}
	}
	if f := newFinder("x"); f.at2 != -1 {
		t.Errorf("finder of a term of one byte has a second anchor at %d", f.at2)
	}
}

// BenchmarkFinder finds every hit of phrases of common words in dshgen
// text, folded, by a finder and by strings.Index.
func BenchmarkFinder(b *testing.B) {
	sessions, _ := stageText(b)
	f := newFolder()
	var text []byte
	for _, msgs := range sessions {
		for _, m := range msgs {
			text = f.appendFold(text, m.Text)
		}
	}
	s := string(text)
	for _, term := range []string{"session poll", "title rollback", "inline file"} {
		fd := newFinder(term)
		for _, index := range []struct {
			name string
			f    func(string) int
		}{
			{"finder", func(s string) int { return fd.index(s, false) }},
			{"strings.Index", func(s string) int { return strings.Index(s, term) }},
		} {
			b.Run(index.name+"/"+term, func(b *testing.B) {
				b.SetBytes(int64(len(s)))
				for b.Loop() {
					for p := 0; ; {
						k := index.f(s[p:])
						if k < 0 {
							break
						}
						p += k + 1
					}
				}
			})
		}
	}
}
