package server

import (
	"strings"
	"testing"
)

func TestMapperKnownColumns(t *testing.T) {
	// The marker sits after text whose width differs per encoding.
	tests := []struct {
		name   string
		before string
		utf16  int
	}{
		{"ascii", "abc ", 4},
		{"emoji is two units", "😀 ", 3},
		{"CJK is one unit each", "文件 ", 3},
		{"combining mark", "e\u0301 ", 3},
		{"flag is four units", "🇫🇷", 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text := "first line\r\n" + tt.before + "@x\n"
			at := strings.Index(text, "@")
			for _, enc := range []PositionEncoding{EncodingUTF16, EncodingUTF8} {
				m := NewMapper(text, enc)
				p := m.Position(at)
				want := tt.utf16
				if enc == EncodingUTF8 {
					want = len(tt.before)
				}
				if p.Line != 1 || p.Character != want {
					t.Errorf("%s: Position(%d) = %+v, want 1:%d", enc, at, p, want)
				}
				off, err := m.Offset(p)
				if err != nil || off != at {
					t.Errorf("%s: Offset(%+v) = %d, %v; want %d", enc, p, off, err, at)
				}
			}
		})
	}
}

func TestMapperClamps(t *testing.T) {
	m := NewMapper("😀x\nsecond", EncodingUTF16)
	// Inside the surrogate pair: back to the emoji start.
	if off, _ := m.Offset(Position{0, 1}); off != 0 {
		t.Errorf("offset inside surrogate pair = %d, want 0", off)
	}
	// Past the line end: clamped to the line end, before the newline.
	if off, _ := m.Offset(Position{0, 99}); off != len("😀x") {
		t.Errorf("offset past end = %d, want %d", off, len("😀x"))
	}
	if _, err := m.Offset(Position{5, 0}); err == nil {
		t.Error("line past the end gave no error")
	}
	if p := m.Position(1000); p != (Position{1, 6}) {
		t.Errorf("Position past end = %+v", p)
	}
}

// FuzzMapperRoundTrip checks that every character boundary survives
// offset → position → offset in both encodings, and that any position maps
// to a character boundary.
func FuzzMapperRoundTrip(f *testing.F) {
	for _, seed := range []string{"", "abc", "😀 @x", "文件\r\n@y", "e\u0301\u0302 z\n\n", "🇫🇷🇩🇪\n😀😀", "\xff\xfe bad"} {
		f.Add(seed, 3, 2)
	}
	f.Fuzz(func(t *testing.T, text string, line, char int) {
		for _, enc := range []PositionEncoding{EncodingUTF16, EncodingUTF8} {
			m := NewMapper(text, enc)
			bounds := boundaries(text)
			for off := 0; off <= len(text); off++ {
				if !bounds[off] {
					continue
				}
				if off > 0 && text[off-1] == '\r' && off < len(text) && text[off] == '\n' {
					continue // between \r and \n is not a position
				}
				p := m.Position(off)
				back, err := m.Offset(p)
				if err != nil || back != off {
					t.Fatalf("%s: %q offset %d → %+v → %d (%v)", enc, text, off, p, back, err)
				}
			}
			if line < 0 || char < 0 {
				return
			}
			if off, err := m.Offset(Position{line % (m.LineCount() + 1), char % 64}); err == nil {
				if !bounds[off] {
					t.Fatalf("%s: offset %d splits a character in %q", enc, off, text)
				}
			}
		}
	})
}

// boundaries marks the byte offsets where a character starts, as Go's range
// loop decodes them (an invalid byte is a character of its own), plus the end.
func boundaries(text string) map[int]bool {
	b := map[int]bool{len(text): true}
	for i := range text {
		b[i] = true
	}
	return b
}
