package dshlog

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestResolveRoot(t *testing.T) {
	cwd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	home := func() (string, error) { return "/home/u", nil }
	noHome := func() (string, error) { return "", errors.New("no home") }
	tests := []struct {
		name    string
		flag    string
		env     map[string]string
		home    func() (string, error)
		want    string
		wantErr bool
	}{
		{"flag wins", "/srv/sessions", map[string]string{"DSH_HOME": "/opt/dsh"}, home, "/srv/sessions", false},
		{"relative flag made absolute", "rel/sessions", nil, home, filepath.Join(cwd, "rel/sessions"), false},
		{"DSH_HOME", "", map[string]string{"DSH_HOME": "/opt/dsh"}, home, "/opt/dsh/sessions", false},
		{"blank DSH_HOME is unset", "", map[string]string{"DSH_HOME": "  \t"}, home, "/home/u/.dsh/sessions", false},
		{"empty DSH_HOME is unset", "", map[string]string{"DSH_HOME": ""}, home, "/home/u/.dsh/sessions", false},
		{"home", "", nil, home, "/home/u/.dsh/sessions", false},
		{"no home", "", nil, noHome, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := resolveRoot(tt.flag, func(k string) string { return tt.env[k] }, tt.home)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error %v", err, tt.wantErr)
			}
			if got != tt.want {
				t.Errorf("root = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestJoinListed joins as filepath.Join does for clean directories and
// listed names, the filesystem root included.
func TestJoinListed(t *testing.T) {
	sep := string(filepath.Separator)
	for _, dir := range []string{sep, sep + "a", sep + filepath.Join("a", "--b c--")} {
		for _, name := range []string{"x", "0123-abc", "--p--", "é"} {
			if got, want := joinListed(dir, name), filepath.Join(dir, name); got != want {
				t.Errorf("joinListed(%q, %q) = %q, want %q", dir, name, got, want)
			}
		}
	}
}
