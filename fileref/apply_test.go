package fileref

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestApply changes a workspace step by step, applies the notifications a
// watcher would send, and checks after every step that the index equals a
// fresh build of the same tree.
func TestApply(t *testing.T) {
	root := t.TempDir()
	mkTree(t, root, map[string]string{
		".git/HEAD":        "",
		".gitignore":       "*.log\n",
		"src/main.go":      "",
		"src/util/str.go":  "",
		"docs/readme.md":   "",
		"scratch/a.tmp":    "",
		"scratch/b.tmp":    "",
		"nested/.git/HEAD": "",
		"nested/keep.go":   "",
	})
	ix := buildTest(t, root)
	abs := func(p string) string { return filepath.Join(root, filepath.FromSlash(p)) }
	write := func(p, data string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(abs(p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(abs(p), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	steps := []struct {
		name    string
		do      func()
		changes []Change
		present []string // must be indexed after the step
		absent  []string // must not be indexed after the step
	}{
		{
			name:    "create file (absolute path)",
			do:      func() { write("src/new.go", "") },
			changes: []Change{{Path: abs("src/new.go")}},
			present: []string{"src/new.go"},
		},
		{
			name:    "create ignored file",
			do:      func() { write("src/debug.log", "") },
			changes: []Change{{Path: "src/debug.log"}},
			absent:  []string{"src/debug.log"},
		},
		{
			name:    "delete file (relative path)",
			do:      func() { os.Remove(abs("src/main.go")) },
			changes: []Change{{Path: "src/main.go"}},
			absent:  []string{"src/main.go"},
		},
		{
			name:    "rename directory",
			do:      func() { os.Rename(abs("src/util"), abs("src/strings")) },
			changes: []Change{{Path: "src/util"}, {Path: "src/strings"}},
			present: []string{"src/strings/", "src/strings/str.go"},
			absent:  []string{"src/util/", "src/util/str.go"},
		},
		{
			name: "new directory tree, only its top reported",
			do: func() {
				write("pkg/a/b/c/deep.go", "")
				write("pkg/a/x.go", "")
				write("pkg/a/b/trace.log", "")
			},
			changes: []Change{{Path: "pkg"}},
			present: []string{"pkg/", "pkg/a/", "pkg/a/b/c/deep.go", "pkg/a/x.go"},
			absent:  []string{"pkg/a/b/trace.log"},
		},
		{
			name:    "file in a new directory whose own event is missing",
			do:      func() { write("lib/inner/z.go", "") },
			changes: []Change{{Path: "lib/inner/z.go"}},
			present: []string{"lib/", "lib/inner/", "lib/inner/z.go"},
		},
		{
			name:    ".gitignore edited to hide more",
			do:      func() { write(".gitignore", "*.log\n*.tmp\npkg/a/b/\n") },
			changes: []Change{{Path: ".gitignore"}},
			absent:  []string{"scratch/a.tmp", "pkg/a/b/", "pkg/a/b/c/deep.go"},
			present: []string{"scratch/", "pkg/a/x.go"},
		},
		{
			name:    ".gitignore edited to re-include",
			do:      func() { write(".gitignore", "*.tmp\n!b.tmp\n") },
			changes: []Change{{Path: abs(".gitignore")}},
			present: []string{"scratch/b.tmp", "src/debug.log", "pkg/a/b/trace.log"},
			absent:  []string{"scratch/a.tmp"},
		},
		{
			name:    "nested .gitignore created",
			do:      func() { write("docs/.gitignore", "*.md\n") },
			changes: []Change{{Path: "docs/.gitignore"}},
			present: []string{"docs/.gitignore"},
			absent:  []string{"docs/readme.md"},
		},
		{
			name:    "info/exclude edited",
			do:      func() { write(".git/info/exclude", "lib/\n") },
			changes: []Change{{Path: ".git/info/exclude"}},
			absent:  []string{"lib/", "lib/inner/z.go"},
		},
		{
			name:    "nested repository info/exclude edited",
			do:      func() { write("nested/.git/info/exclude", "keep.go\n") },
			changes: []Change{{Path: "nested/.git/info/exclude"}},
			absent:  []string{"nested/keep.go"},
			present: []string{"nested/"},
		},
		{
			name:    ".dshignore created",
			do:      func() { write(".dshignore", "!a.tmp\nsrc/\n") },
			changes: []Change{{Path: ".dshignore"}},
			present: []string{"scratch/a.tmp"},
			absent:  []string{"src/", "src/new.go"},
		},
		{
			name:    "other .git changes are ignored, outside paths skipped",
			do:      func() { write(".git/index", "x") },
			changes: []Change{{Path: ".git/index"}, {Path: "/somewhere/else"}, {Path: "../up"}},
		},
		{
			name:    "directory removed",
			do:      func() { os.RemoveAll(abs("pkg")) },
			changes: []Change{{Path: "pkg/a/x.go"}, {Path: "pkg"}},
			absent:  []string{"pkg/", "pkg/a/x.go"},
		},
		{
			name: "symlinks: to a directory or outside are not followed",
			do: func() {
				os.Symlink("/etc", abs("etc-link"))
				os.Symlink("docs", abs("docs-link"))
				os.Symlink("top-target.txt", abs("file-link.txt"))
				write("top-target.txt", "")
			},
			changes: []Change{{Path: "etc-link"}, {Path: "docs-link"}, {Path: "file-link.txt"}, {Path: "top-target.txt"}},
			present: []string{"file-link.txt", "top-target.txt"},
			absent:  []string{"etc-link", "docs-link", "etc-link/passwd"},
		},
		{
			name:    "root reported",
			do:      func() { write("top.txt", "") },
			changes: []Change{{Path: root}},
			present: []string{"top.txt"},
		},
	}
	for _, st := range steps {
		st.do()
		ix.Apply(st.changes)
		got := sortedPaths(ix)
		want := sortedPaths(buildTest(t, root))
		if !slices.Equal(got, want) {
			t.Fatalf("%s: index %q\nfresh build %q", st.name, got, want)
		}
		for _, p := range st.present {
			if !slices.Contains(got, p) {
				t.Errorf("%s: %q missing", st.name, p)
			}
		}
		for _, p := range st.absent {
			if slices.Contains(got, p) {
				t.Errorf("%s: %q still indexed", st.name, p)
			}
		}
	}
}

// TestApplyInvalidatesNarrowing checks that a search after Apply sees the
// new snapshot even when an earlier, shorter query was cached, or the
// same query was answered before.
func TestApplyInvalidatesNarrowing(t *testing.T) {
	root := t.TempDir()
	mkTree(t, root, map[string]string{"alpha.go": ""})
	ix := buildTest(t, root)
	search(t, ix, "al", 5)
	search(t, ix, "alp", 5)
	if err := os.WriteFile(filepath.Join(root, "alpine.go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	ix.Apply([]Change{{Path: "alpine.go"}})
	for _, q := range []string{"alp", "alpi"} {
		got := candPaths(search(t, ix, q, 5))
		if !slices.Contains(got, "alpine.go") {
			t.Errorf("after Apply: %q gives %q, which lacks alpine.go", q, got)
		}
	}
}

// TestApplyThroughSymlinkedRoot accepts changes reported under the
// resolved root when the workspace was opened through a symlink.
func TestApplyThroughSymlinkedRoot(t *testing.T) {
	base := t.TempDir()
	real := filepath.Join(base, "real")
	mkTree(t, base, map[string]string{"real/a.go": "", "link": "->real"})
	ix := buildTest(t, filepath.Join(base, "link"))
	if err := os.WriteFile(filepath.Join(real, "b.go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	ix.Apply([]Change{{Path: filepath.Join(real, "b.go")}})
	if got, want := sortedPaths(ix), []string{"a.go", "b.go"}; !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}
