package recall

import (
	"math/rand/v2"
	"testing"
)

// spaceMasksByByte is what spaceMasks must write, one byte at a time
// through byteClass, and whether s is all ASCII without a NUL.
func spaceMasksByByte(s []byte) (masks []uint64, ascii bool) {
	masks = make([]uint64, 2*(len(s)/64))
	for i, c := range s[:64*(len(s)/64)] {
		if c >= 0x80 || c == 0 {
			return nil, false
		}
		if byteClass[c] == classSpace {
			masks[2*(i/64)] |= 1 << (i % 64)
		}
		if c == ' ' {
			masks[2*(i/64)+1] |= 1 << (i % 64)
		}
	}
	return masks, true
}

// checkSpaceMasks compares spaceMasks, and the same through
// spaceMasks64Go, with spaceMasksByByte on s.
func checkSpaceMasks(t *testing.T, s []byte) {
	t.Helper()
	want, wantASCII := spaceMasksByByte(s)
	for _, f := range []struct {
		name string
		run  func([]byte, []uint64) bool
	}{{"spaceMasks", spaceMasks}, {"spaceMasks64Go", func(s []byte, masks []uint64) bool {
		return len(s) < 64 || spaceMasks64Go(&s[0], len(s)/64, &masks[0])
	}}} {
		got := make([]uint64, 2*(len(s)/64))
		ascii := f.run(s[:64*(len(s)/64)], got)
		if ascii != wantASCII {
			t.Fatalf("%s(%q) reports ASCII %v, want %v", f.name, s, ascii, wantASCII)
		}
		if !ascii {
			continue
		}
		for w := range want {
			if got[w] != want[w] {
				t.Fatalf("%s(%q): word %d is %#x, want %#x", f.name, s, w, got[w], want[w])
			}
		}
	}
}

func TestSpaceMasksEveryByte(t *testing.T) {
	// Every byte value at every position of a run, among letters.
	for c := 0; c < 256; c++ {
		for at := 0; at < 64; at++ {
			s := make([]byte, 128)
			for i := range s {
				s[i] = 'a'
			}
			s[at] = byte(c)
			s[64+63-at] = byte(c)
			checkSpaceMasks(t, s)
		}
	}
}

func TestSpaceMasksRandomText(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 31))
	alphabet := []byte(" \t\n\v\f\r\x00\x08\x0e\x1f!azAZ09~\x7f")
	for range 2000 {
		s := make([]byte, 64*r.IntN(6)+r.IntN(64))
		for i := range s {
			s[i] = alphabet[r.IntN(len(alphabet))]
		}
		if r.IntN(8) == 0 && len(s) > 0 {
			s[r.IntN(len(s))] = byte(0x80 + r.IntN(128))
		}
		checkSpaceMasks(t, s)
	}
}

func FuzzSpaceMasks(f *testing.F) {
	f.Add([]byte("the quick brown fox\tjumps over\nthe lazy dog, and again: the quick brown fox jumps"))
	f.Fuzz(func(t *testing.T, s []byte) { checkSpaceMasks(t, s) })
}

// lowerASCIIByByte is what lowerASCII must copy of s: its runs of 16
// bytes up to the first holding a byte of 0x80 or more, each byte
// lowered when it is 'A' to 'Z'.
func lowerASCIIByByte(s []byte) []byte {
	var out []byte
	for n := 0; n+16 <= len(s); n += 16 {
		run := s[n : n+16]
		for _, c := range run {
			if c >= 0x80 {
				return out
			}
		}
		for _, c := range run {
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			out = append(out, c)
		}
	}
	return out
}

// checkLowerASCII compares lowerASCII, and the same through
// lowerASCII16Go, with lowerASCIIByByte on s.
func checkLowerASCII(t *testing.T, s []byte) {
	t.Helper()
	want := lowerASCIIByByte(s)
	for _, f := range []struct {
		name string
		run  func([]byte, []byte) int
	}{
		{"lowerASCII", func(dst, src []byte) int { return lowerASCII(dst, string(src)) }},
		{"lowerASCII16Go", func(dst, src []byte) int {
			if len(src) < 16 {
				return 0
			}
			return lowerASCII16Go(&dst[0], &src[0], len(src)/16)
		}},
	} {
		dst := make([]byte, len(s)&^15+1)
		dst[len(dst)-1] = 0xee // past the room given: must stay as it is
		n := f.run(dst[:len(s)&^15], s)
		if got := dst[:n]; string(got) != string(want) {
			t.Fatalf("%s(%q) copied %q, want %q", f.name, s, got, want)
		}
		if dst[len(dst)-1] != 0xee {
			t.Fatalf("%s(%q) wrote past its room", f.name, s)
		}
	}
}

func TestLowerASCIIEveryByte(t *testing.T) {
	for c := 0; c < 256; c++ {
		for at := 0; at < 16; at++ {
			s := []byte("Hello, WORLD: a Zebra @ [Aa] `Zz` {0123456789}!!")
			s[at] = byte(c)
			s[len(s)-1-at] = byte(c)
			checkLowerASCII(t, s)
		}
	}
}

func TestLowerASCIIRandomText(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 5))
	for range 2000 {
		s := make([]byte, r.IntN(100))
		for i := range s {
			s[i] = byte(r.IntN(0x80))
		}
		if r.IntN(4) == 0 && len(s) > 0 {
			s[r.IntN(len(s))] = byte(0x80 + r.IntN(128))
		}
		checkLowerASCII(t, s)
	}
}

func FuzzLowerASCII(f *testing.F) {
	f.Add([]byte("The Quick BROWN fox JUMPS over the lazy dog, AGAIN and again and AGAIN"))
	f.Fuzz(func(t *testing.T, s []byte) { checkLowerASCII(t, s) })
}

// indexPair finds what a loop over the places finds, in runs of 16
// places, for bytes at every distance and either order, and so does
// indexPair16Go.
func TestIndexPairIsByteByByte(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 9))
	for range 5000 {
		s := make([]byte, r.IntN(120))
		for i := range s {
			s[i] = "abpl "[r.IntN(5)]
		}
		a, b := r.IntN(8), r.IntN(8)
		ca, cb := "abpl "[r.IntN(5)], "abpl "[r.IntN(5)]
		places := len(s) - max(a, b)
		if places <= 0 {
			continue
		}
		got, covered := indexPair(string(s), places, a, b, ca, cb)
		if covered != places&^15 {
			t.Fatalf("indexPair of %d places covered %d", places, covered)
		}
		want := -1
		for i := range covered {
			if s[i+a] == ca && s[i+b] == cb {
				want = i
				break
			}
		}
		if got != want {
			t.Fatalf("indexPair(%q, %d, %d, %d, %q, %q) = %d, place by place %d", s, places, a, b, ca, cb, got, want)
		}
		if covered > 0 {
			if got := indexPair16Go(&s[0], covered/16, a, b, ca, cb); got != want {
				t.Fatalf("indexPair16Go(%q, %d, %d, %d, %q, %q) = %d, place by place %d", s, covered/16, a, b, ca, cb, got, want)
			}
		}
	}
}
