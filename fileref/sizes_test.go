package fileref

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// factsTree is a workspace with every kind of path directory facts must
// tell apart. Counted: src/a.go (10), src/b.txt (5), src/deep/c.go (7),
// src/deep/er/d.md (3), src/logo.PNG (8, binary), src/link.go (a symlink
// to src/a.go: 10), src/.hidden (2), notes.md (4). Not counted: what the
// .gitignore and .dshignore ignore, node_modules, the directory symlink,
// the symlink out of the workspace.
func factsTree(t *testing.T) (root string, outside string) {
	t.Helper()
	root = t.TempDir()
	outside = t.TempDir()
	mkTree(t, outside, map[string]string{"secret.txt": strings.Repeat("s", 1000)})
	mkTree(t, root, map[string]string{
		".gitignore":                "build/\n*.log\n",
		".dshignore":                "src/skip.txt\n",
		"notes.md":                  "four",
		"src/a.go":                  "0123456789",
		"src/b.txt":                 "fivee",
		"src/deep/c.go":             "seven77",
		"src/deep/er/d.md":          "thr",
		"src/logo.PNG":              "\x89PNG\r\n\x1a\n",
		"src/link.go":               "->a.go",
		"src/.hidden":               "hi",
		"src/skip.txt":              strings.Repeat("x", 500),
		"src/run.log":               strings.Repeat("l", 500),
		"src/build/out.o":           strings.Repeat("o", 500),
		"src/node_modules/m/i.js":   strings.Repeat("n", 500),
		"src/out.txt":               "->" + filepath.Join(outside, "secret.txt"),
		"src/deeplink":              "->deep",
		"src/empty/":                "",
		"build/bundle.js":           strings.Repeat("b", 500),
		"node_modules/pkg/index.js": strings.Repeat("p", 500),
	})
	return root, outside
}

func measured(t *testing.T, ix *Index) {
	t.Helper()
	if err := ix.MeasureSizes(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := ix.Unmeasured(); n != 0 {
		t.Fatalf("after MeasureSizes %d files are unmeasured", n)
	}
}

func totalsOf(t *testing.T, ix *Index, rel string) Totals {
	t.Helper()
	tt, ok := ix.DirTotals(rel)
	if !ok {
		t.Fatalf("DirTotals(%q) found nothing", rel)
	}
	return tt
}

func TestDirTotalsCountWhatTheIndexHolds(t *testing.T) {
	root, _ := factsTree(t)
	ix := buildTest(t, root)
	if _, ok := ix.DirTotals("src"); ok {
		t.Fatal("DirTotals answered before the sizes were measured")
	}
	if n, files := ix.Unmeasured(), ix.Files(); n != files || n == 0 {
		t.Fatalf("after Build %d of %d files unmeasured, want all", n, files)
	}
	measured(t, ix)

	src := Totals{Files: 7, Dirs: 3, Bytes: 10 + 5 + 7 + 3 + 8 + 10 + 2, BinaryFiles: 1, BinaryBytes: 8}
	if got := totalsOf(t, ix, "src"); got != src {
		t.Errorf("src totals %+v, want %+v", got, src)
	}
	for _, rel := range []string{"src/", "./src", "src//", ""} {
		if _, ok := ix.DirTotals(rel); !ok {
			t.Errorf("DirTotals(%q) found nothing", rel)
		}
	}
	// The root adds notes.md and the ignore files themselves.
	wantRoot := src
	wantRoot.Files += 3
	wantRoot.Dirs++
	wantRoot.Bytes += 4 + int64(len("build/\n*.log\n")) + int64(len("src/skip.txt\n"))
	if got := totalsOf(t, ix, ""); got != wantRoot {
		t.Errorf("root totals %+v, want %+v", got, wantRoot)
	}
	if got, want := totalsOf(t, ix, "src/deep"), (Totals{Files: 2, Dirs: 1, Bytes: 10}); got != want {
		t.Errorf("src/deep totals %+v, want %+v", got, want)
	}
	if got, want := totalsOf(t, ix, "src/empty"), (Totals{}); got != want {
		t.Errorf("src/empty totals %+v, want %+v", got, want)
	}
	for _, rel := range []string{"build", "src/build", "node_modules", "src/deeplink", "src/a.go", "missing", "../x", "/src"} {
		if tt, ok := ix.DirTotals(rel); ok {
			t.Errorf("DirTotals(%q) = %+v, want nothing (not an indexed directory)", rel, tt)
		}
	}
	if got := src.Tokens(); got != (src.Bytes-8+3)/4 {
		t.Errorf("tokens %d, want the text bytes / 4 rounded up", got)
	}
}

func TestTotalsTokensRoundUpAndSkipBinary(t *testing.T) {
	for _, c := range []struct {
		t    Totals
		want int64
	}{
		{Totals{}, 0},
		{Totals{Files: 1, Bytes: 1}, 1},
		{Totals{Files: 1, Bytes: 4}, 1},
		{Totals{Files: 1, Bytes: 5}, 2},
		{Totals{Files: 2, Bytes: 1000, BinaryFiles: 1, BinaryBytes: 600}, 100},
	} {
		if got := c.t.Tokens(); got != c.want {
			t.Errorf("%+v.Tokens() = %d, want %d", c.t, got, c.want)
		}
	}
}

func TestBinaryName(t *testing.T) {
	for name, want := range map[string]bool{
		"a.png": true, "A.PNG": true, "x.tar.gz": true, "m.safetensors": true, "lib.so": true,
		"a.go": false, "Makefile": false, ".png": false, "a.": false, "a.pngx": false, "a.png.txt": false,
		"x." + strings.Repeat("z", 40): false,
	} {
		if got := binaryName(name); got != want {
			t.Errorf("binaryName(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestDirTotalsFollowApply(t *testing.T) {
	root := t.TempDir()
	mkTree(t, root, map[string]string{"src/a.go": "0123456789"})
	ix := buildTest(t, root)
	measured(t, ix)
	want := func(rel string, files int, bytes int64) {
		t.Helper()
		got := totalsOf(t, ix, rel)
		if got.Files != files || got.Bytes != bytes || !got.Exact() {
			t.Errorf("%s totals %+v, want %d files, %d bytes, exact", rel, got, files, bytes)
		}
	}
	want("src", 1, 10)

	// A created file: its size comes with the change, nothing to measure.
	mkTree(t, root, map[string]string{"src/b.go": "12345"})
	ix.Apply([]Change{{Path: filepath.Join(root, "src/b.go")}})
	if n := ix.Unmeasured(); n != 0 {
		t.Errorf("a created file left %d unmeasured", n)
	}
	want("src", 2, 15)
	want("", 2, 15)

	// A grown file.
	mkTree(t, root, map[string]string{"src/b.go": "1234567890"})
	ix.Apply([]Change{{Path: filepath.Join(root, "src/b.go")}})
	want("src", 2, 20)

	// A created directory: walked, its sizes measured afterwards.
	mkTree(t, root, map[string]string{"src/new/x.go": "xx", "src/new/y/z.go": "zzz"})
	ix.Apply([]Change{{Path: filepath.Join(root, "src/new")}})
	if n := ix.Unmeasured(); n != 2 {
		t.Errorf("a walked directory left %d unmeasured, want 2", n)
	}
	if got := totalsOf(t, ix, "src"); got.Files != 4 || got.Unmeasured != 2 || got.Exact() {
		t.Errorf("src totals before measuring %+v, want 4 files of which 2 unmeasured", got)
	}
	measured(t, ix)
	want("src", 4, 25)
	want("src/new", 2, 5)

	// Removed: a file, then a directory.
	if err := os.Remove(filepath.Join(root, "src/a.go")); err != nil {
		t.Fatal(err)
	}
	ix.Apply([]Change{{Path: filepath.Join(root, "src/a.go")}})
	want("src", 3, 15)
	if err := os.RemoveAll(filepath.Join(root, "src/new")); err != nil {
		t.Fatal(err)
	}
	ix.Apply([]Change{{Path: filepath.Join(root, "src/new")}})
	want("src", 1, 10)
	if _, ok := ix.DirTotals("src/new"); ok {
		t.Error("a removed directory still has totals")
	}

	// A file becoming ignored leaves the count.
	mkTree(t, root, map[string]string{".gitignore": "*.go\n"})
	ix.Apply([]Change{{Path: filepath.Join(root, ".gitignore")}})
	want("src", 0, 0)
}

// TestMeasuredSizesCarryOverApply: sizes measured in a snapshot that an
// Apply replaced are not measured again.
func TestMeasuredSizesCarryOverApply(t *testing.T) {
	root := t.TempDir()
	mkTree(t, root, map[string]string{"a/1.go": "1", "a/2.go": "22", "b/3.go": "333"})
	ix := buildTest(t, root)
	old := ix.snap.Load()
	if err := ix.measure(context.Background(), old); err != nil {
		t.Fatal(err)
	}
	mkTree(t, root, map[string]string{"c/4.go": "4444"})
	ix.Apply([]Change{{Path: filepath.Join(root, "c")}})
	if n := ix.Unmeasured(); n != 1 {
		t.Fatalf("after the Apply %d files unmeasured, want only c/4.go", n)
	}
	measured(t, ix)
	if got := totalsOf(t, ix, ""); got.Bytes != 10 || got.Files != 4 {
		t.Errorf("root totals %+v, want 4 files, 10 bytes", got)
	}
}

func TestDirTotalsHugeFile(t *testing.T) {
	root := t.TempDir()
	mkTree(t, root, map[string]string{"d/small.txt": "abc"})
	f, err := os.Create(filepath.Join(root, "d", "huge.bin"))
	if err != nil {
		t.Fatal(err)
	}
	// Sparse: 5 GiB of size, no blocks.
	if err := f.Truncate(5 << 30); err != nil {
		f.Close()
		t.Skipf("this filesystem cannot hold a sparse 5 GiB file: %v", err)
	}
	f.Close()
	ix := buildTest(t, root)
	measured(t, ix)
	got := totalsOf(t, ix, "d")
	if got.Huge != 1 || got.Exact() || got.Bytes != 3+maxRecordedSize || got.BinaryFiles != 1 {
		t.Errorf("totals %+v, want one huge binary file counted as %d bytes, not exact", got, int64(maxRecordedSize))
	}
}

// manyDirs makes n directories of one 3-byte file each under root/d.
func manyDirs(t *testing.T, root string, n int) {
	t.Helper()
	tree := map[string]string{}
	for i := range n {
		tree[fmt.Sprintf("d/%04d/f.txt", i)] = "abc"
	}
	mkTree(t, root, tree)
}

func TestMeasureSizesStopsWithItsContext(t *testing.T) {
	root := t.TempDir()
	manyDirs(t, root, 2000)
	ix := buildTest(t, root)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := ix.MeasureSizes(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("MeasureSizes with a cancelled context: %v", err)
	}
	if _, ok := ix.DirTotals("d"); ok {
		t.Error("a cancelled measuring published totals")
	}
}
