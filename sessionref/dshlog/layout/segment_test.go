package layout

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dsh-refls/dsh-refls/internal/testfixtures"
)

func TestEncodeSegment(t *testing.T) {
	tests := []struct {
		name, id, want string
	}{
		{"uuid copied", "228b7b82-84ed-49b7-a567-981c03b28c77", "228b7b82-84ed-49b7-a567-981c03b28c77"},
		{"safe set copied", "Az09._-", "Az09._-"},
		{"slash", "a/b", "a~002Fb"},
		{"latin small e acute", "é", "~00E9"},
		{"dot alone", ".", "~002E"},
		{"dot dot alone", "..", "~002E~002E"},
		{"three dots copied", "...", "..."},
		{"dot inside copied", "a.b", "a.b"},
		{"leading dot copied", ".hidden", ".hidden"},
		{"tilde escaped", "a~b", "a~007Eb"},
		{"space", "a b", "a~0020b"},
		{"backslash and colon", `c:\x`, "c~003A~005Cx"},
		{"control char", "\x00\n", "~0000~000A"},
		{"uppercase hex digits", "\u00ff\u0abc", "~00FF~0ABC"},
		{"CJK", "会话", "~4F1A~8BDD"},
		{"astral is two units", "😀", "~D83D~DE00"},
		{"astral musical symbol", "a𝄞", "a~D834~DD1E"},
		{"line separator", "\u2028", "~2028"},
		{"replacement char", "\ufffd", "~FFFD"},
		{"invalid byte read as U+FFFD", "a\xffb", "a~FFFDb"},
		{"truncated sequence byte by byte", "\xe2\x82", "~FFFD~FFFD"},
		{"empty", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := EncodeSegment(tt.id); got != tt.want {
				t.Errorf("EncodeSegment(%q) = %q, want %q", tt.id, got, tt.want)
			}
		})
	}
}

func TestDecodeSegment(t *testing.T) {
	tests := []struct {
		name, seg, want string
		wantErr         string
	}{
		{"plain", "abc-1.2_3", "abc-1.2_3", ""},
		{"slash", "a~002Fb", "a/b", ""},
		{"e acute", "~00E9", "é", ""},
		{"dot", "~002E", ".", ""},
		{"dot dot", "~002E~002E", "..", ""},
		{"astral pair", "~D83D~DE00", "😀", ""},
		{"CJK", "~4F1A~8BDD", "会话", ""},
		{"empty", "", "", "empty name"},
		{"literal dot", ".", "", "not canonical"},
		{"literal dot dot", "..", "", "not canonical"},
		{"escaped safe unit", "~0061", "", "not canonical"},
		{"escaped dot inside", "a~002Eb", "", "not canonical"},
		{"dot escape with more", "~002Ea", "", "not canonical"},
		{"lowercase hex", "~00e9", "", "malformed escape"},
		{"short escape", "~00E", "", "malformed escape"},
		{"tilde at end", "a~", "", "malformed escape"},
		{"non-hex digit", "~00G9", "", "malformed escape"},
		{"raw space", "a b", "", "must be escaped"},
		{"raw slash", "a/b", "", "must be escaped"},
		{"raw non-ASCII", "é", "", "must be escaped"},
		{"lone high surrogate", "~D83D", "", "lone surrogate"},
		{"lone low surrogate", "~DE00", "", "lone surrogate"},
		{"high then plain", "~D83Da", "", "lone surrogate"},
		{"reversed pair", "~DE00~D83D", "", "lone surrogate"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DecodeSegment(tt.seg)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("DecodeSegment(%q) = %q, %v; want error containing %q", tt.seg, got, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("DecodeSegment(%q) = %q, %v; want %q", tt.seg, got, err, tt.want)
			}
			if back := EncodeSegment(got); back != tt.seg {
				t.Errorf("EncodeSegment(%q) = %q, want %q", got, back, tt.seg)
			}
		})
	}
}

func TestSegmentRoundTrip(t *testing.T) {
	ids := []string{"a", ".", "..", "...", "~", "~002E", "a/b/../c", "é😀会", "\u2028\u2029", "\x00", "-", "_"}
	for _, id := range ids {
		seg := EncodeSegment(id)
		got, err := DecodeSegment(seg)
		if err != nil || got != id {
			t.Errorf("DecodeSegment(EncodeSegment(%q) = %q) = %q, %v", id, seg, got, err)
		}
	}
}

func TestProjectKey(t *testing.T) {
	long := strings.Repeat("x", 300)
	tests := []struct {
		name, cwd, want string
	}{
		{"spec example", "/home/a b/proj", "--home-a~0020b-proj--"},
		{"simple", "/home/dev/alpha", "--home-dev-alpha--"},
		{"root only", "/", "--root--"},
		{"empty", "", "--root--"},
		{"separators only", `/\:/`, "--root--"},
		{"dashes only", "---", "--root--"},
		{"leading dash stripped with separators", "/-x", "--x--"},
		{"run of separators is one dash", "/a//b\\\\c::d", "--a-b-c-d--"},
		{"mixed run", `C:\Users\me`, "--C-Users-me--"},
		{"trailing separator kept", "/a/", "--a---"},
		{"dot copied", "/a/./b", "--a-.-b--"},
		{"lone dot not special", ".", "--.--"},
		{"tilde escaped", "/~/x", "--~007E-x--"},
		{"non-ASCII", "/home/dev/gamma dir/ünï", "--home-dev-gamma~0020dir-~00FCn~00EF--"},
		{"astral two units", "/😀", "--~D83D~DE00--"},
		{"invalid byte", "/a\xff", "--a~FFFD--"},
		{"251 units kept", "/" + long, "--" + long[:251] + "--"},
		{"exactly 251", "/" + long[:251], "--" + long[:251] + "--"},
		{"truncation cuts an escape", "/" + strings.Repeat("a", 249) + "é", "--" + strings.Repeat("a", 249) + "~0--"},
		{"truncation counts escapes in units", "/" + strings.Repeat("é", 60), "--" + strings.Repeat("~00E9", 50) + "~--"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ProjectKey(tt.cwd); got != tt.want {
				t.Errorf("ProjectKey(%q) = %q, want %q", tt.cwd, got, tt.want)
			}
		})
	}
}

func TestProjectDir(t *testing.T) {
	tests := []struct {
		cwd    string
		hasCwd bool
		want   string
	}{
		{"/home/dev/alpha", true, "--home-dev-alpha--"},
		{"", true, "--root--"},
		{"", false, NoCwdDir},
		{"/ignored", false, "_no-cwd"},
	}
	for _, tt := range tests {
		if got := ProjectDir(tt.cwd, tt.hasCwd); got != tt.want {
			t.Errorf("ProjectDir(%q, %v) = %q, want %q", tt.cwd, tt.hasCwd, got, tt.want)
		}
	}
}

func TestSegmentsMatchRecordedStore(t *testing.T) {
	fixtures := testfixtures.Dir(t)
	for _, fx := range testfixtures.LoadExpected(t, fixtures) {
		t.Run(fx.Name, func(t *testing.T) {
			cwd := ""
			if fx.Cwd != nil {
				cwd = *fx.Cwd
			}
			got := ProjectDir(cwd, fx.Cwd != nil) + "/" + EncodeSegment(fx.SessionID)
			if got != fx.RelativeDir {
				t.Errorf("layout of %q = %q, dsh wrote %q", fx.SessionID, got, fx.RelativeDir)
			}
			// The directory really exists in both recorded stores.
			for _, store := range []string{"raw", "zstd"} {
				dir := filepath.Join(fixtures, store, "sessions", filepath.FromSlash(got))
				if _, err := os.Stat(dir); err != nil {
					t.Errorf("%s store: %v", store, err)
				}
			}
			id, err := DecodeSegment(filepath.Base(fx.RelativeDir))
			if err != nil || id != fx.SessionID {
				t.Errorf("DecodeSegment(%q) = %q, %v; want %q", filepath.Base(fx.RelativeDir), id, err, fx.SessionID)
			}
		})
	}
}
