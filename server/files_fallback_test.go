package server

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDirLister(t *testing.T) {
	ws := t.TempDir()
	for _, f := range []string{"a.txt", "src/main.go", "src/util.go", ".env", "node_modules/x/index.js", "docs/guide.md"} {
		p := filepath.Join(ws, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(ws, "src"), filepath.Join(ws, "link")); err != nil {
		t.Fatal(err)
	}
	files, err := openDirLister(context.Background(), ws, []string{"node_modules"})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		query string
		want  string // paths joined by |
	}{
		{"", "a.txt|docs|node_modules|src"},
		{"src/", "src/main.go|src/util.go"},
		{"src/ma", "src/main.go"},
		{".e", ".env"},
		{"main", "src/main.go"},
		{"index", ""}, // inside an excluded directory
		{"../", ""},
		{"nope/", ""},
	}
	for _, tt := range tests {
		got, _, err := files.Search(context.Background(), tt.query, 20)
		if err != nil {
			t.Fatalf("%q: %v", tt.query, err)
		}
		var paths []string
		for _, c := range got {
			paths = append(paths, c.Path)
			if c.Path == "node_modules" && !c.Ignored {
				t.Errorf("excluded directory listed without the ignored mark")
			}
		}
		if strings.Join(paths, "|") != tt.want {
			t.Errorf("Search(%q) = %q, want %q", tt.query, paths, tt.want)
		}
	}
	if got, capped, _ := files.Search(context.Background(), "", 2); len(got) != 2 || !capped {
		t.Errorf("limit 2: %d results, capped %v", len(got), capped)
	}
}
