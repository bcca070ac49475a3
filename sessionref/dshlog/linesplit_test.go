package dshlog

import (
	"bytes"
	"reflect"
	"testing"
)

// TestLineSplitterHoldsALongLineOnce writes a 3 MiB line in read-sized
// pieces. When the splitter knows how much follows, the line is held in one
// buffer of the size that remains of the input and handed to the owned callback; when it
// does not, it is joined from chunks and still handed over; without an
// owned callback the plain callback gets it and the last line is kept.
func TestLineSplitterHoldsALongLineOnce(t *testing.T) {
	line := bytes.Repeat([]byte("0123456789abcdef"), 3<<16)
	input := append(append([]byte("short\n"), line...), "\nend\n"...)
	for _, tc := range []struct {
		name        string
		known, owns bool
	}{{"size known", true, true}, {"size unknown", false, true}, {"no owned callback", true, false}} {
		t.Run(tc.name, func(t *testing.T) {
			var plain, owned [][]byte
			sp := &lineSplitter{max: MaxLineBytes, more: -1,
				fn: func(b []byte) error { plain = append(plain, bytes.Clone(b)); return nil }}
			if tc.owns {
				sp.owned = func(b []byte) error { owned = append(owned, b); return nil }
			}
			for off := 0; off < len(input); off += readBufferSize {
				end := min(off+readBufferSize, len(input))
				if tc.known {
					sp.more = int64(len(input) - end)
				}
				if _, err := sp.Write(input[off:end]); err != nil {
					t.Fatal(err)
				}
			}
			want := [][]byte{[]byte("short"), []byte("end")}
			if !tc.owns {
				want = [][]byte{[]byte("short"), line, []byte("end")}
			}
			if len(plain) != len(want) {
				t.Fatalf("%d plain lines, want %d", len(plain), len(want))
			}
			for i := range want {
				if !bytes.Equal(plain[i], want[i]) {
					t.Errorf("plain line %d differs", i)
				}
			}
			if !tc.owns {
				if string(sp.last) != "end" {
					t.Errorf("last line %q, want end", sp.last)
				}
				return
			}
			if len(owned) != 1 || !bytes.Equal(owned[0], line) {
				t.Fatalf("owned lines %d, want the long line once", len(owned))
			}
			// One buffer of the line's size plus what could still follow
			// it (the splitter cannot know where the line ends).
			if rest := len(input) - len("short\n"); tc.known && cap(owned[0]) != rest {
				t.Errorf("long line held in a buffer of %d bytes, want the %d from its start to the end", cap(owned[0]), rest)
			}
			if sp.last != nil {
				t.Errorf("last line kept (%d bytes) although lines are handed over", len(sp.last))
			}
		})
	}
}

// TestLineSplitterCap: lines longer than the cap are skipped and reported
// while they stream by, in any chunking; shorter lines are delivered.
func TestLineSplitterCap(t *testing.T) {
	stream := "short\n" + string(make([]byte, 50)) + "\nexactly-ten\n" + "0123456789\n" + string(make([]byte, 3000)) + "\nend\nunterminated"
	for _, chunk := range []int{1, 3, 7, 64, 1 << 20} {
		var got []string
		var skipped []int64
		sp := &lineSplitter{max: 10,
			fn:       func(l []byte) error { got = append(got, string(l)); return nil },
			overlong: func(n int64) error { skipped = append(skipped, n); return nil }}
		for i := 0; i < len(stream); i += chunk {
			if _, err := sp.Write([]byte(stream[i:min(len(stream), i+chunk)])); err != nil {
				t.Fatal(err)
			}
		}
		wantLines := []string{"short", "0123456789", "end"}
		wantSkips := []int64{50, 11, 3000}
		if !reflect.DeepEqual(got, wantLines) || !reflect.DeepEqual(skipped, wantSkips) {
			t.Errorf("chunk %d: lines %q skipped %v, want %q and %v", chunk, got, skipped, wantLines, wantSkips)
		}
		if want := int64(len(stream) - len("unterminated")); sp.complete != want || sp.atLineStart() {
			t.Errorf("chunk %d: complete %d (at line start %v), want %d and a held partial line", chunk, sp.complete, sp.atLineStart(), want)
		}
		if string(sp.last) != "end" {
			t.Errorf("chunk %d: last line %q", chunk, sp.last)
		}
	}
}
