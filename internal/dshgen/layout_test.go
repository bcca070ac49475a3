package dshgen

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestEncodeSegment(t *testing.T) {
	tests := []struct{ in, want string }{
		{"a/b", "a~002Fb"},
		{"é", "~00E9"},
		{".", "~002E"},
		{"..", "~002E~002E"},
		{"...", "..."},
		{"a.b_c-D9", "a.b_c-D9"},
		{"~", "~007E"},
		{"😀", "~D83D~DE00"},
		{"228b7b82-84ed-49b7-a567-981c03b28c77", "228b7b82-84ed-49b7-a567-981c03b28c77"},
	}
	for _, tc := range tests {
		if got := encodeSegment(tc.in); got != tc.want {
			t.Errorf("encodeSegment(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestProjectKey(t *testing.T) {
	long := "/" + strings.Repeat("x", 300)
	tests := []struct{ in, want string }{
		{"/home/a b/proj", "--home-a~0020b-proj--"},
		{"/", "--root--"},
		{"", "--root--"},
		{`C:\Users\dev`, "--C-Users-dev--"},
		{"//srv//data/", "--srv-data---"},
		{"/home/dev/gamma dir/ünï", "--home-dev-gamma~0020dir-~00FCn~00EF--"},
		{"--x", "--x--"},
		{long, "--" + strings.Repeat("x", 251) + "--"},
	}
	for _, tc := range tests {
		if got := projectKey(tc.in); got != tc.want {
			t.Errorf("projectKey(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if got := projectDir("/x", false); got != "_no-cwd" {
		t.Errorf("projectDir without cwd = %q", got)
	}
}

// TestLayoutMatchesFixtureDirectories checks the layout functions against
// the directories dsh itself created.
func TestLayoutMatchesFixtureDirectories(t *testing.T) {
	root := fixturesOrSkip(t)
	raw, err := os.ReadFile(filepath.Join(root, "expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct {
		SessionID   string  `json:"sessionId"`
		Cwd         *string `json:"cwd"`
		RelativeDir string  `json:"relativeDir"`
	}
	if err := json.Unmarshal(raw, &cases); err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		cwd := ""
		if c.Cwd != nil {
			cwd = *c.Cwd
		}
		got := filepath.Join(projectDir(cwd, c.Cwd != nil), encodeSegment(c.SessionID))
		if got != c.RelativeDir {
			t.Errorf("%s: %s, want %s", c.SessionID, got, c.RelativeDir)
		}
	}
}
