package fileref

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.uber.org/zap/zaptest"

	"github.com/dsh-refls/dsh-refls/fileref/ignore"
)

// mkTree creates files under root. A key ending in "/" is a directory; a
// value starting with "->" makes a symlink to the rest of the value.
func mkTree(t testing.TB, root string, tree map[string]string) {
	t.Helper()
	for p, content := range tree {
		abs := filepath.Join(root, filepath.FromSlash(p))
		if strings.HasSuffix(p, "/") {
			if err := os.MkdirAll(abs, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
			t.Fatal(err)
		}
		if target, ok := strings.CutPrefix(content, "->"); ok {
			if err := os.Symlink(target, abs); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.WriteFile(abs, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// isolatedEnv keeps the user's git configuration out of tests.
func isolatedEnv(t testing.TB) *ignore.Env {
	d := t.TempDir()
	return &ignore.Env{Home: d, XDGConfigHome: filepath.Join(d, "xdg"), NoSystem: true}
}

// buildTest indexes root with an isolated git environment.
func buildTest(t testing.TB, root string) *Index {
	t.Helper()
	ix, err := Build(context.Background(), Options{Root: root, Logger: zaptest.NewLogger(t), GitEnv: isolatedEnv(t)})
	if err != nil {
		t.Fatal(err)
	}
	return ix
}

// sortedPaths returns the index content, sorted.
func sortedPaths(ix *Index) []string {
	p := ix.Paths()
	slices.Sort(p)
	return p
}

// search runs a query and fails the test on error.
func search(t testing.TB, ix *Index, q string, limit int) []Candidate {
	t.Helper()
	res, _, err := ix.Search(context.Background(), q, limit)
	if err != nil {
		t.Fatalf("Search(%q): %v", q, err)
	}
	return res
}

func candPaths(cs []Candidate) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Path
		if c.Kind == KindDirectory {
			out[i] += "/"
		}
		if c.Ignored {
			out[i] += " (ignored)"
		}
	}
	return out
}
