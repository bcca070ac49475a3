package dshlog

import (
	"math/rand/v2"
	"testing"
)

// stringRunByByte is what plainStringRun must return, one byte at a time.
func stringRunByByte(b []byte, j int) int {
	for ; j < len(b); j++ {
		if c := b[j]; c == '"' || c == '\\' || c < 0x20 {
			return j
		}
	}
	return j
}

// checkStringRun compares plainStringRun from every start, and
// stringRun16 and stringRun16Go over the runs of 16 bytes of b, with
// stringRunByByte.
func checkStringRun(t *testing.T, b []byte) {
	t.Helper()
	for j := 0; j <= len(b); j++ {
		if got, want := plainStringRun(b, j), stringRunByByte(b, j); got != want {
			t.Fatalf("plainStringRun(%q, %d) = %d, byte by byte %d", b, j, got, want)
		}
	}
	if blocks := len(b) / 16; blocks > 0 {
		want := min(stringRunByByte(b[:16*blocks], 0), 16*blocks)
		for _, f := range []struct {
			name string
			run  func(*byte, int) int
		}{{"stringRun16", stringRun16}, {"stringRun16Go", stringRun16Go}} {
			if got := f.run(&b[0], blocks); got != want {
				t.Fatalf("%s(%q, %d) = %d, byte by byte %d", f.name, b, blocks, got, want)
			}
		}
	}
}

func TestStringRunEveryByte(t *testing.T) {
	for c := 0; c < 256; c++ {
		for at := 0; at < 40; at++ {
			b := []byte("plain text of a message, with nothing to stop at")
			b[at] = byte(c)
			checkStringRun(t, b)
		}
	}
}

func TestStringRunRandomText(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 8))
	alphabet := []byte("ab \x00\x1f\x20\"\\\x7f\x80\xe2\xff/u")
	for range 3000 {
		b := make([]byte, r.IntN(100))
		for i := range b {
			b[i] = 'x'
			if r.IntN(20) == 0 {
				b[i] = alphabet[r.IntN(len(alphabet))]
			}
		}
		checkStringRun(t, b)
	}
}

func FuzzStringRun(f *testing.F) {
	f.Add([]byte(`a message of some length, \"quoted\", with a line\nand more`))
	f.Fuzz(func(t *testing.T, b []byte) { checkStringRun(t, b) })
}
