package fileref

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"go.uber.org/zap/zaptest"

	"github.com/dsh-refls/dsh-refls/fileref/ignore"
)

// namePool mixes ordinary names with spaces, unicode, dots and names that
// the pattern pool below targets.
var namePool = []string{
	"a", "b", "src", "lib", "build", "out", "tmp", "cache", "doc", "gen", "keep.log",
	"main.go", "x.log", "y.o", "important.o", "notes.txt", "foo1", "fooz", "ab.tmp",
	"cd.tmp", "name with space", "café", "日本語.md", "#hash", "!bang", ".hidden",
	".env", "sub", "deep", "x", "README", "trailing", "data.json", "Makefile",
	strings.Repeat("a", 24) + "c", // for the star-heavy patterns below
}

// patternPool exercises negation, anchoring, "**", directory-only
// patterns, classes, escapes and trailing spaces.
var patternPool = []string{
	"*.log", "!keep.log", "build/", "/out", "**/tmp", "doc/**/*.txt", "a/**/b",
	"*.o", "!important.o", "foo?", "[abc]*.tmp", "name with space", "trailing   ",
	"\\#hash", "\\!bang", "sub/", "*/gen", "**/cache/", "!cache/", "x/**", "café",
	"!x/keep", "deep/*", "!deep/b", "/src/*.json", "lib/**", "!lib/a/", ".env",
	"*.md", "!日本語.md", "# a comment", "", "b/", "gen", "/a/b/", "d[!o]c",
	"**/sub/**", "fo[[:digit:]]*", "\\ ", "README ", "*", "!*.go", "!*/",
	// Star-heavy patterns past the matcher's backtracking budget, so
	// that its memoised path is held to git's answers too.
	"*a*a*a*a*a*a*a*a*b", "!*a*a*a*a*a*a*a*c", "**/**/**/a*a*a*a*a*a*c", "**/**/**/a*a*a*a*a*a*a*a*b",
}

// genTree writes a random tree under dir and returns the directories it
// created (root-relative, "" first).
func genTree(t *testing.T, rng *rand.Rand, dir string) []string {
	t.Helper()
	dirs := []string{""}
	var mk func(rel string, depth int)
	mk = func(rel string, depth int) {
		n := 4 + rng.IntN(10)
		for i := 0; i < n; i++ {
			name := namePool[rng.IntN(len(namePool))]
			p := filepath.Join(dir, rel, name)
			if _, err := os.Lstat(p); err == nil {
				continue
			}
			if depth < 4 && rng.IntN(3) == 0 {
				if err := os.Mkdir(p, 0o755); err != nil {
					t.Fatal(err)
				}
				child := filepath.ToSlash(filepath.Join(rel, name))
				dirs = append(dirs, child)
				mk(child, depth+1)
				continue
			}
			if err := os.WriteFile(p, []byte(name), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	mk("", 0)
	return dirs
}

func randomPatterns(rng *rand.Rand) string {
	var b strings.Builder
	n := 1 + rng.IntN(6)
	for i := 0; i < n; i++ {
		p := patternPool[rng.IntN(len(patternPool))]
		if p == "*" && rng.IntN(4) != 0 {
			continue // a bare "*" hides everything; keep it rare
		}
		b.WriteString(p)
		if rng.IntN(8) == 0 {
			b.WriteString("\r")
		}
		b.WriteString("\n")
	}
	return b.String()
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// gitEnv isolates git from the user's configuration.
type gitEnv struct {
	home, xdg string
}

func (g gitEnv) environ() []string {
	env := []string{"HOME=" + g.home, "XDG_CONFIG_HOME=" + g.xdg, "GIT_CONFIG_NOSYSTEM=1", "PATH=" + os.Getenv("PATH"), "LC_ALL=C"}
	return env
}

func (g gitEnv) ignoreEnv() *ignore.Env {
	return &ignore.Env{Home: g.home, XDGConfigHome: g.xdg, NoSystem: true}
}

func runGit(t *testing.T, g gitEnv, dir string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = g.environ()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %v in %s: %v: %s", args, dir, err, stderr.String())
	}
	return out
}

// gitFiles lists what git shows in dir (tracked or untracked and not
// ignored), descending into nested repositories the way the index does.
func gitFiles(t *testing.T, g gitEnv, dir, prefix string) []string {
	out := runGit(t, g, dir, "ls-files", "--cached", "--others", "--exclude-standard", "-z")
	var files []string
	for _, p := range strings.Split(string(out), "\x00") {
		if p == "" {
			continue
		}
		if strings.HasSuffix(p, "/") {
			files = append(files, gitFiles(t, g, filepath.Join(dir, p), prefix+p)...)
			continue
		}
		files = append(files, prefix+p)
	}
	return files
}

func indexedFiles(ix *Index) []string {
	var files []string
	for _, p := range ix.Paths() {
		if !strings.HasSuffix(p, "/") {
			files = append(files, p)
		}
	}
	slices.Sort(files)
	return files
}

func requireGit(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed; the oracle comparison needs it")
	}
}

// oracleSeeds is how many random trees a normal test run compares.
const oracleSeeds = 12

// TestIndexMatchesGit compares the indexed files of random trees with
// random ignore files against git ls-files.
func TestIndexMatchesGit(t *testing.T) {
	requireGit(t)
	seeds := uint64(oracleSeeds)
	if v, err := strconv.ParseUint(os.Getenv("FILEREF_ORACLE_SEEDS"), 10, 32); err == nil && v > 0 {
		seeds = v // longer runs on demand; the default keeps the suite fast
	}
	for seed := uint64(1); seed <= seeds; seed++ {
		t.Run(fmt.Sprintf("seed%d", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, seed*7919))
			base := t.TempDir()
			g := gitEnv{home: filepath.Join(base, "home"), xdg: filepath.Join(base, "xdg")}
			root := filepath.Join(base, "ws")
			for _, d := range []string{g.home, g.xdg, root} {
				if err := os.MkdirAll(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			dirs := genTree(t, rng, root)
			runGit(t, g, root, "init", "-q")
			// Nested repository with its own rules in some trees.
			var nested string
			if len(dirs) > 2 && seed%2 == 0 {
				nested = dirs[1+rng.IntN(len(dirs)-1)]
				nd := filepath.Join(root, nested)
				runGit(t, g, nd, "init", "-q")
				writeFile(t, filepath.Join(nd, ".git", "info", "exclude"), randomPatterns(rng))
			}
			for _, d := range dirs {
				if rng.IntN(2) == 0 {
					writeFile(t, filepath.Join(root, d, ".gitignore"), randomPatterns(rng))
				}
			}
			writeFile(t, filepath.Join(root, ".git", "info", "exclude"), randomPatterns(rng))
			// Global excludes: the XDG default, or core.excludesFile set in
			// the global config with "~/".
			global := randomPatterns(rng)
			switch seed % 3 {
			case 0:
				writeFile(t, filepath.Join(g.xdg, "git", "ignore"), global)
			case 1:
				writeFile(t, filepath.Join(g.home, ".gitconfig"), "[core]\n\texcludesFile = ~/my excludes\n")
				writeFile(t, filepath.Join(g.home, "my excludes"), global)
			case 2:
				writeFile(t, filepath.Join(g.xdg, "git", "config"), "[Core]\n\tExcludesFile = \""+filepath.Join(g.home, "gx")+"\" ; comment\n")
				writeFile(t, filepath.Join(g.home, "gx"), global)
			}

			want := gitFiles(t, g, root, "")
			slices.Sort(want)
			ix, err := Build(context.Background(), Options{Root: root, ExcludedNames: []string{}, Logger: zaptest.NewLogger(t), GitEnv: g.ignoreEnv()})
			if err != nil {
				t.Fatal(err)
			}
			got := indexedFiles(ix)
			t.Logf("%d files indexed, %d paths on disk", len(got), countFiles(t, root))
			if !slices.Equal(got, want) {
				t.Errorf("index differs from git (nested=%q)\n%s", nested, diffSets(got, want))
				dumpIgnores(t, root, g)
				return
			}

			// A workspace that is a subdirectory of the repository: the
			// rules above it (and info/exclude) still apply.
			var subdirs []string
			for _, p := range want {
				if i := strings.LastIndexByte(p, '/'); i > 0 && !slices.Contains(subdirs, p[:i]) {
					subdirs = append(subdirs, p[:i])
				}
			}
			if len(subdirs) == 0 {
				return
			}
			sub := subdirs[rng.IntN(len(subdirs))]
			subWant := gitFiles(t, g, filepath.Join(root, sub), "")
			slices.Sort(subWant)
			subIx, err := Build(context.Background(), Options{Root: filepath.Join(root, sub), ExcludedNames: []string{}, Logger: zaptest.NewLogger(t), GitEnv: g.ignoreEnv()})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("workspace %q inside the repository: %d files", sub, len(subWant))
			if subGot := indexedFiles(subIx); !slices.Equal(subGot, subWant) {
				t.Errorf("workspace %q inside the repository differs from git\n%s", sub, diffSets(subGot, subWant))
				dumpIgnores(t, root, g)
			}
		})
	}
}

func diffSets(got, want []string) string {
	var b strings.Builder
	for _, p := range got {
		if !slices.Contains(want, p) {
			fmt.Fprintf(&b, "  only in index: %q\n", p)
		}
	}
	for _, p := range want {
		if !slices.Contains(got, p) {
			fmt.Fprintf(&b, "  only in git:   %q\n", p)
		}
	}
	return b.String()
}

func dumpIgnores(t *testing.T, root string, g gitEnv) {
	_ = filepath.Walk(filepath.Dir(root), func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return nil
		}
		name := fi.Name()
		if name == ".gitignore" || name == "exclude" || name == "ignore" || name == "gx" || name == "my excludes" {
			data, _ := os.ReadFile(p)
			t.Logf("%s:\n%s", p, data)
		}
		return nil
	})
}

// countFiles counts regular files outside .git directories.
func countFiles(t *testing.T, root string) int {
	n := 0
	_ = filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return nil
		}
		if fi.IsDir() && fi.Name() == ".git" {
			return filepath.SkipDir
		}
		if fi.Mode().IsRegular() {
			n++
		}
		return nil
	})
	return n
}
