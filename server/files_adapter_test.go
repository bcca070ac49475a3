package server

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.uber.org/zap/zaptest"
)

// TestFilesBeforeAndAfterTheBuild: until the workspace index is built the
// server answers file queries from an opened, unbuilt fileref index, so
// the rules of SPEC §3 hold from the first keystroke: a directory symlink
// is never followed (a link to ~/.ssh once offered link/id_rsa), ignore
// files are honoured, an explicitly named ignored directory is listed
// marked ignored. The answers before and after the build are the same.
func TestFilesBeforeAndAfterTheBuild(t *testing.T) {
	ws := t.TempDir()
	outside := t.TempDir()
	t.Setenv("HOME", t.TempDir()) // keep the user's git configuration out
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	for _, f := range []string{"a.txt", "src/main.go", "src/util.go", ".env", "node_modules/x/index.js",
		"docs/guide.md", "secret.txt", "build/out.bin", ".gitignore"} {
		p := filepath.Join(ws, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(ws, ".gitignore"), []byte("secret.txt\nbuild/\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "id_rsa"), []byte("PRIVATE"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(ws, "link")); err != nil {
		t.Fatal(err)
	}
	interim := openInterimFiles(ws, []string{".git", "node_modules"}, zaptest.NewLogger(t))
	built, err := NewFilerefFactory(zaptest.NewLogger(t))(context.Background(), ws, []string{".git", "node_modules"})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		query string
		want  string // paths joined by |, ignored ones marked with !
	}{
		{"", "docs|src|a.txt"},
		{"node_modules/", "node_modules/x!"},
		{"src/", "src/main.go|src/util.go"},
		{"src/ma", "src/main.go"},
		{".e", ".env|.gitignore"},
		{"main", "src/main.go"},
		{"index", ""},  // inside an excluded directory
		{"secret", ""}, // .gitignore
		{"out", ""},    // inside an ignored directory
		{"build/", "build/out.bin!"},
		{"link/", ""},  // a directory symlink is not entered
		{"id_rsa", ""}, // nor walked
		{"link", ""},   // nor offered
		{"../", ""},
		{"nope/", ""},
	}
	for name, files := range map[string]Files{"before the build": interim, "after the build": built} {
		for _, tt := range tests {
			got, _, err := files.Search(context.Background(), tt.query, 20)
			if err != nil {
				t.Fatalf("%s: %q: %v", name, tt.query, err)
			}
			var paths []string
			for _, c := range got {
				p := c.Path
				if c.Ignored {
					p += "!"
				}
				paths = append(paths, p)
			}
			if strings.Join(paths, "|") != tt.want {
				t.Errorf("%s: Search(%q) = %q, want %q", name, tt.query, paths, tt.want)
			}
		}
		if got, capped, _ := files.Search(context.Background(), "", 2); len(got) != 2 || !capped {
			t.Errorf("%s: limit 2: %d results, capped %v", name, len(got), capped)
		}
	}
	if _, ok := interim.(applier); ok {
		t.Error("the interim file source takes change notifications; it reads the disk on every query")
	}
	if n := interim.Count(); n != 0 {
		t.Errorf("interim source counts %d indexed files, want 0", n)
	}
	if got, _, _ := openInterimFiles(filepath.Join(ws, "absent"), nil, zaptest.NewLogger(t)).Search(context.Background(), "", 20); !slices.Equal(got, []FileCandidate{}) {
		t.Errorf("unusable root: %v, want nothing", got)
	}
}
