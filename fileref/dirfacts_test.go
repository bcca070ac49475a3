package fileref

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"
)

func TestDirFactsTreeAndIgnoredNames(t *testing.T) {
	root, _ := factsTree(t)
	ix := buildTest(t, root)
	measured(t, ix)
	facts, err := ix.DirFacts(context.Background(), "src/", DirFactsOptions{Depth: 2, Width: 3})
	if err != nil {
		t.Fatal(err)
	}
	if facts.Totals != totalsOf(t, ix, "src") || facts.Partial || facts.Ignored {
		t.Errorf("facts %+v, want the totals of DirTotals, whole", facts)
	}
	// Ignored directly in src: build/ (.gitignore), node_modules/
	// (excluded), run.log (.gitignore), skip.txt (.dshignore); never
	// the symlinks the index leaves out for other reasons.
	if want := []string{"build/", "node_modules/", "run.log", "skip.txt"}; !slices.Equal(facts.IgnoredHere, want) || facts.IgnoredCount != 4 {
		t.Errorf("ignored here %q (%d), want %q", facts.IgnoredHere, facts.IgnoredCount, want)
	}
	// Biggest first, by tokens: a.go and link.go (10 bytes, 3 tokens;
	// tied, by name), deep/ (10 bytes over two files, 3 tokens: fewer
	// bytes? no, equal: more files first), then the rest summed.
	var names []string
	for _, n := range facts.Tree {
		names = append(names, n.Name)
	}
	if want := []string{"deep", "a.go", "link.go"}; !slices.Equal(names, want) {
		t.Errorf("first level %q, want %q", names, want)
	}
	if r := facts.Rest; r.Count != 4 || r.Totals.Files != 3 || r.Totals.Dirs != 1 || r.Totals.Bytes != 5+8+2 {
		t.Errorf("rest %+v, want b.txt, logo.PNG, .hidden and empty/ summed", r)
	}
	deep := facts.Tree[0]
	if !deep.Dir || deep.Totals != (Totals{Files: 2, Dirs: 1, Bytes: 10}) || len(deep.Children) != 2 {
		t.Fatalf("deep %+v, want a directory of 2 files with its 2 entries", deep)
	}
	if c := deep.Children; c[0].Name != "c.go" || c[1].Name != "er" || !c[1].Dir || len(c[1].Children) != 0 {
		t.Errorf("deep's children %+v, want c.go then er/ (no third level)", c)
	}

	// Depth 0: totals only.
	flat, err := ix.DirFacts(context.Background(), "src", DirFactsOptions{})
	if err != nil || len(flat.Tree) != 0 || flat.Totals != facts.Totals {
		t.Errorf("depth 0: %+v, %v", flat, err)
	}
	// The root lists its ignored build/ and node_modules/, not .git.
	if err := os.Mkdir(filepath.Join(root, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	top, err := ix.DirFacts(context.Background(), "", DirFactsOptions{Depth: 1, Width: 10})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"build/", "node_modules/"}; !slices.Equal(top.IgnoredHere, want) {
		t.Errorf("ignored at the root %q, want %q", top.IgnoredHere, want)
	}
}

func TestDirFactsOfWhatIsNoIndexedDirectory(t *testing.T) {
	root, _ := factsTree(t)
	ix := buildTest(t, root)
	for _, rel := range []string{"build", "src/build", "node_modules/pkg"} {
		f, err := ix.DirFacts(context.Background(), rel, DirFactsOptions{Depth: 2, Width: 8})
		if err != nil || !f.Ignored || f.Files != 0 || len(f.Tree) != 0 {
			t.Errorf("DirFacts(%q) = %+v, %v; want ignored, nothing counted", rel, f, err)
		}
	}
	for _, rel := range []string{"src/deeplink", "src/a.go", "missing", "../x", "/src"} {
		if f, err := ix.DirFacts(context.Background(), rel, DirFactsOptions{}); !errors.Is(err, ErrNotIndexedDir) {
			t.Errorf("DirFacts(%q) = %+v, %v; want ErrNotIndexedDir", rel, f, err)
		}
	}
}

func TestDirFactsCapBeforeTheBuild(t *testing.T) {
	root := t.TempDir()
	manyDirs(t, root, 200)
	ix, err := Open(Options{Root: root, Logger: zaptest.NewLogger(t), GitEnv: isolatedEnv(t), Parallelism: 1})
	if err != nil {
		t.Fatal(err)
	}
	whole, err := ix.DirFacts(context.Background(), "d", DirFactsOptions{Cap: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	files := whole.Files
	if _, err := ix.DirFacts(canceled(), "d", DirFactsOptions{}); !errors.Is(err, context.Canceled) {
		t.Errorf("DirFacts with a cancelled context: %v", err)
	}
	if whole.Partial || whole.Unmeasured != 0 || whole.Bytes != int64(3*files) || files == 0 {
		t.Fatalf("uncapped facts before the build %+v, want every file measured", whole)
	}
	cut, err := ix.DirFacts(context.Background(), "d", DirFactsOptions{Cap: time.Nanosecond})
	if err != nil {
		t.Fatal(err)
	}
	if !cut.Partial || cut.Files >= files || cut.Unmeasured != cut.Files || cut.Bytes != 0 {
		t.Errorf("facts capped at once %+v, want a partial count (< %d files) with no size read", cut, files)
	}
}

func TestDirFactsCapMeasuresWhatItCanAfterTheBuild(t *testing.T) {
	root := t.TempDir()
	manyDirs(t, root, 60)
	ix := buildTest(t, root)
	files := ix.Files()
	cut, err := ix.DirFacts(context.Background(), "d", DirFactsOptions{Cap: time.Nanosecond})
	if err != nil {
		t.Fatal(err)
	}
	if cut.Partial || cut.Files != files || cut.Unmeasured != files {
		t.Errorf("capped at once after the build: %+v, want all %d files counted, none measured", cut, files)
	}
	whole, err := ix.DirFacts(context.Background(), "d", DirFactsOptions{Cap: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if !whole.Exact() || whole.Bytes != int64(3*files) {
		t.Errorf("facts %+v, want all %d files measured", whole, files)
	}
	// What the hover measured stays measured.
	if n := ix.Unmeasured(); n != 0 {
		t.Errorf("%d files unmeasured after a whole count", n)
	}
}

// canceled is a context that has ended.
func canceled() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}
