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

// checkSpaceMasks compares spaceMasks and spaceMasksGo with
// spaceMasksByByte on s.
func checkSpaceMasks(t *testing.T, s []byte) {
	t.Helper()
	want, wantASCII := spaceMasksByByte(s)
	for _, f := range []struct {
		name string
		run  func([]byte, []uint64) bool
	}{{"spaceMasks", spaceMasks}, {"spaceMasksGo", spaceMasksGo}} {
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
