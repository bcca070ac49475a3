package recall

import (
	"slices"
	"strings"
	"testing"
)

// TestAddTextInPiecesFindsWhatTheWholeFoldingFinds: a message longer than
// foldPiece, folded piece by piece, gives the tokens, the trigrams of its
// long tokens and the folded size that folding it whole gives, across
// every cut: words around each limit, upper case and non-ASCII letters on
// both sides, Unicode spaces (token ends where no piece ends), a token
// longer than a piece, and text with no white space at all.
func TestAddTextInPiecesFindsWhatTheWholeFoldingFinds(t *testing.T) {
	words := func(ws []string, seps []string, size int) string {
		var b strings.Builder
		for i := 0; b.Len() < size; i++ {
			b.WriteString(ws[i%len(ws)])
			b.WriteString(seps[i%len(seps)])
		}
		return b.String()
	}
	mixed := []string{"Alpha", "ΒΗΤΑ", "straße", "Gamma-Delta", "登录失败", "x", "Ünïcode\u00a0space",
		strings.Repeat("Lengthy", 12)} // 84 bytes: a long token now and then
	for _, c := range []struct {
		name, text string
		wantLong   bool
	}{
		{"words, ASCII white space", words(mixed, []string{" ", "\n", "\t", "  "}, 2*foldPiece+foldPiece/2) +
			strings.Repeat("LONGtokenÄ", foldPiece/10+7) + " tail WORDS\r\nend", true},
		{"one token, no white space", strings.Repeat("0123456789ABCDEF", (3*foldPiece)/16+5), true},
		{"one token with trigrams only at the cuts", marksAtCuts(3*foldPiece+5, "XYZ", "QRS"), true},
		{"one token of varied runes", variedRunes(foldPiece*2/3 + 5), true},
		{"one token of two-byte runes", strings.Repeat("Ä", foldPiece+foldPiece/3+1), true},
		{"Unicode spaces only", words(mixed, []string{"\u00a0", "\u3000", "\u2028"}, 2*foldPiece+77), true},
		{"short words, Unicode spaces only", words([]string{"Ab", "ÇD", "ef"}, []string{"\u00a0"}, 2*foldPiece+3), false},
		{"a long token across a cut, then words", strings.Repeat("Ä", foldPiece/2-40) + "\u00a0" +
			strings.Repeat("Zy", foldPiece) + " after it" + strings.Repeat(" w", 10), true},
		{"a short token across a cut", strings.Repeat("Ä\u00a0", foldPiece/4-1) + "ABCDEFGHIJ\u00a0" + strings.Repeat("k\u00a0", foldPiece), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if len(c.text) <= foldPiece {
				t.Fatalf("the text is %d bytes, not longer than one piece of %d", len(c.text), foldPiece)
			}
			pieces := bareWorker()
			n := pieces.addText(c.text)

			whole := bareWorker()
			whole.folded = whole.f.appendFold(nil, c.text)
			whole.ts.add(whole.folded, whole.gs)

			if n != len(whole.folded) {
				t.Errorf("the pieces fold to %d bytes, the whole text to %d", n, len(whole.folded))
			}
			got, want := pieces.ts.tokens(), whole.ts.tokens()
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("tokens in pieces: %d %q, whole: %d %q", len(got), first(got, 12), len(want), first(want, 12))
			}
			if pieces.ts.long != c.wantLong || whole.ts.long != c.wantLong {
				t.Errorf("a long token seen: in pieces %v, whole %v; want %v", pieces.ts.long, whole.ts.long, c.wantLong)
			}
			g, w := pieces.gs.appendSorted(nil), whole.gs.appendSorted(nil)
			if !slices.Equal(g, w) {
				t.Errorf("trigrams in pieces: %d, whole: %d", len(g), len(w))
			}
			if c.wantLong && len(w) == 0 {
				t.Errorf("no trigrams from the whole folding: the comparison proves little")
			}
			if cap(pieces.folded) > 2*foldPiece {
				t.Errorf("the pieces' folding buffer grew to %d bytes, more than two pieces", cap(pieces.folded))
			}
		})
	}
}

func TestPieceEnd(t *testing.T) {
	for _, c := range []struct {
		s        string
		limit    int
		want     int
		wantOpen bool
	}{
		{"short", 10, 5, false},
		{"ab cd ef", 4, 3, false},      // after the last space within the limit
		{"abcdefgh ij", 4, 4, true},    // a token past the limit: cut inside it
		{"ab\ncd", 4, 3, false},        // any ASCII white space
		{"ab\u00a0cdef g", 3, 2, true}, // a Unicode space is not a cut; nor the middle of a rune
		{"ÄÄÄÄ", 5, 4, true},           // back to the rune's start
	} {
		end, open := pieceEnd(c.s, c.limit)
		if end != c.want || open != c.wantOpen {
			t.Errorf("pieceEnd(%q, %d) = %d, %v; want %d, %v", c.s, c.limit, end, open, c.want, c.wantOpen)
		}
	}
}

// marksAtCuts is n bytes of "a" but for one mark across each multiple of
// foldPiece (where a text with no white space is cut): their trigrams
// are found nowhere else.
func marksAtCuts(n int, marks ...string) string {
	b := []byte(strings.Repeat("a", n))
	for i, m := range marks {
		copy(b[(i+1)*foldPiece-1:], m)
	}
	return string(b)
}

// variedRunes is n runes of CJK and Latin letters in a fixed
// pseudo-random order, with no white space.
func variedRunes(n int) string {
	var b strings.Builder
	x := uint32(2463534242)
	for range n {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		if x%4 == 0 {
			b.WriteRune(rune('A' + x%26))
		} else {
			b.WriteRune(rune(0x4e00 + x%0x5000))
		}
	}
	return b.String()
}

func bareWorker() *worker {
	return &worker{f: newFolder(), gs: newGramSet(), ts: newTokenSet()}
}

func first(s []string, n int) []string { return s[:min(n, len(s))] }
