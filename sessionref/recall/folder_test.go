package recall

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"
)

// The ASCII run of appendFold, eight bytes at a time, lowers exactly
// 'A'..'Z' and keeps every other byte, at every alignment and length and
// next to bytes that are not ASCII; appendFolding reports ASCII exactly
// when no byte is above 0x7f.
func TestFoldLowersASCIIAsBytes(t *testing.T) {
	var every []byte
	for c := 0; c < 128; c++ {
		every = append(every, byte(c))
	}
	r := rand.New(rand.NewPCG(1, 2))
	inputs := [][]byte{every}
	for i := 0; i < 300; i++ {
		b := make([]byte, r.IntN(40))
		for k := range b {
			b[k] = byte(r.IntN(128))
			if r.IntN(20) == 0 {
				b[k] = 0xc3 // a lone lead byte: kept as it is
			}
		}
		inputs = append(inputs, b)
	}
	f := newFolder()
	for _, in := range inputs {
		for at := 0; at < min(9, len(in)+1); at++ {
			s := string(in[at:])
			want := make([]byte, 0, len(s))
			wantASCII := true
			for k := 0; k < len(s); k++ {
				c := s[k]
				if 'A' <= c && c <= 'Z' {
					c += 'a' - 'A'
				}
				wantASCII = wantASCII && c < 0x80
				want = append(want, c)
			}
			got, ascii := f.appendFolding([]byte("x"), s)
			if !bytes.Equal(got[1:], want) || got[0] != 'x' {
				t.Fatalf("fold %q = %q, want %q", s, got[1:], want)
			}
			if ascii != wantASCII {
				t.Fatalf("fold %q reported ASCII %v, want %v", s, ascii, wantASCII)
			}
		}
	}
}

// appendFold grows dst once for what it appends: appending a long ASCII
// run eight bytes at a time let append double dst over and over, and the
// garbage of a 32 MiB message left the server ~2 MiB above its idle RSS
// after it released memory.
func TestAppendFoldGrowsOnce(t *testing.T) {
	s := strings.Repeat("Some ASCII text, Folded. ", 1<<12) // 100 KB
	f := newFolder()
	// One allocation; two under the race detector, which keeps
	// slices.Grow's make apart from its append. Byte by byte it was 24.
	if n := testing.AllocsPerRun(20, func() { f.appendFold(nil, s) }); n > 2 {
		t.Errorf("appendFold of %d ASCII bytes into nil allocated %v times, want 1", len(s), n)
	}
	dst := make([]byte, 0, len(s)+3)
	if n := testing.AllocsPerRun(20, func() { f.appendFold(dst[:3], s) }); n != 0 {
		t.Errorf("appendFold into a slice with room allocated %v times, want 0", n)
	}
}
