package layout

import (
	"strings"
	"testing"
)

func FuzzEncodeSegment(f *testing.F) {
	for _, seed := range []string{
		"a", ".", "..", "...", "a/b", "é", "😀", "~", "~002E", "\x00", "a\xffb", "\xed\xa0\x80", "/home/a b/proj",
		strings.Repeat("é", 130),
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if s != "" {
			seg := EncodeSegment(s)
			got, err := DecodeSegment(seg)
			if want := string([]rune(s)); err != nil || got != want {
				t.Fatalf("DecodeSegment(EncodeSegment(%q) = %q) = %q, %v; want %q", s, seg, got, err, want)
			}
			if seg == "." || seg == ".." || strings.ContainsAny(seg, "/\\\x00") {
				t.Fatalf("EncodeSegment(%q) = %q is not a safe directory name", s, seg)
			}
		}
		// Whatever a directory is called, a successful decode is exact.
		if id, err := DecodeSegment(s); err == nil && EncodeSegment(id) != s {
			t.Fatalf("DecodeSegment(%q) = %q, which encodes to %q", s, id, EncodeSegment(id))
		}
		key := ProjectKey(s)
		slug, ok := strings.CutPrefix(key, "--")
		if !ok || !strings.HasSuffix(slug, "--") || len(slug)-2 > projectKeyMaxUnits || len(slug) < 3 {
			t.Fatalf("ProjectKey(%q) = %q has the wrong shape", s, key)
		}
		slug = strings.TrimSuffix(slug, "--")
		if slug[0] == '-' {
			t.Fatalf("ProjectKey(%q) = %q keeps a leading '-'", s, key)
		}
		for i := 0; i < len(slug); i++ {
			if c := slug[i]; !isSafeUnit(uint16(c)) && c != '~' && !(c >= 'A' && c <= 'F') {
				t.Fatalf("ProjectKey(%q) = %q holds %q", s, key, c)
			}
		}
	})
}
