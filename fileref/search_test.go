package fileref

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

var rankingTree = map[string]string{
	"server/server.go":                "",
	"server/server_test.go":           "",
	"observer/log.go":                 "",
	"src/service/registry.go":         "",
	"docs/serving-vgo.md":             "",
	"README.md":                       "",
	"docs/readme-old/notes.txt":       "",
	"cmd/main.go":                     "",
	"maintenance/domain/chain.go":     "",
	"internal/fooBar/FooBarImpl.java": "",
	"internal/foobarx/z.txt":          "",
	"web/src/components/Button.tsx":   "",
	"web/src/components/button.css":   "",
	"tie/ab1":                         "",
	"tie/ab2":                         "",
	"dir with space/file name.txt":    "",
	"unicode/café/crème.txt":          "",
	"日本/設定.json":                      "",
}

func TestFuzzyRanking(t *testing.T) {
	root := t.TempDir()
	mkTree(t, root, rankingTree)
	ix := buildTest(t, root)
	tests := []struct {
		query string
		want  string // expected first result
	}{
		{"srvgo", "server/server.go"},
		{"server.go", "server/server.go"},
		{"readme", "README.md"},
		{"main", "cmd/main.go"},
		{"fbi", "internal/fooBar/FooBarImpl.java"},
		{"buttoncss", "web/src/components/button.css"},
		{"Buttontsx", "web/src/components/Button.tsx"},
		{"regis", "src/service/registry.go"},
		{"file name", "dir with space/file name.txt"},
		{"crème", "unicode/café/crème.txt"},
		{"CAFÉ", "unicode/café/"},
		{"設定", "日本/設定.json"},
	}
	for _, tc := range tests {
		t.Run(tc.query, func(t *testing.T) {
			res := candPaths(search(t, ix, tc.query, 5))
			if len(res) == 0 || res[0] != tc.want {
				t.Errorf("Search(%q) = %q, want %q first", tc.query, res, tc.want)
			}
		})
	}
}

func TestFuzzyRejectsNonSubsequences(t *testing.T) {
	root := t.TempDir()
	mkTree(t, root, rankingTree)
	ix := buildTest(t, root)
	for _, q := range []string{"zzz", "server.gox", "ogrevres"} {
		if res := search(t, ix, q, 50); len(res) != 0 {
			t.Errorf("Search(%q) = %q, want nothing", q, candPaths(res))
		}
	}
}

func TestTiesAreDeterministic(t *testing.T) {
	root := t.TempDir()
	mkTree(t, root, rankingTree)
	var first []string
	for _, par := range []int{1, 2, 7} {
		ix, err := Build(context.Background(), Options{Root: root, Parallelism: par, GitEnv: isolatedEnv(t)})
		if err != nil {
			t.Fatal(err)
		}
		got := candPaths(search(t, ix, "ab", 50))
		if first == nil {
			first = got
			i1, i2 := slices.Index(got, "tie/ab1"), slices.Index(got, "tie/ab2")
			if i1 < 0 || i2 < 0 || i1 > i2 {
				t.Fatalf("equal-score paths not in path order: %q", got)
			}
			continue
		}
		if !slices.Equal(got, first) {
			t.Errorf("parallelism %d: %q, want %q", par, got, first)
		}
	}
}

// TestNarrowingMatchesFreshSearch types queries one character at a time
// and checks every answer against a fresh index that never narrows.
func TestNarrowingMatchesFreshSearch(t *testing.T) {
	root := t.TempDir()
	tree := map[string]string{}
	words := []string{"server", "client", "Handler", "config", "util", "parse", "café", "x_y-z"}
	for i := 0; i < 400; i++ {
		p := fmt.Sprintf("%s/%s%d/%s_%s.go", words[i%5], words[(i/3)%8], i%7, words[(i/2)%8], words[i%8])
		tree[p] = ""
	}
	mkTree(t, root, tree)
	typed := buildTest(t, root)
	for _, q := range []string{"serverhandlerconfig", "cliutilgo", "cafésrv", "XYZgo", "hhhhhh"} {
		for i := 1; i <= len(q); i++ {
			prefix := q[:i]
			if !utf8Valid(prefix) {
				continue
			}
			fresh := buildTest(t, root)
			want := search(t, fresh, prefix, 30)
			got := search(t, typed, prefix, 30)
			if !slices.Equal(got, want) {
				t.Fatalf("typing %q: narrowed %v\nfresh %v", prefix, got, want)
			}
		}
	}
}

func utf8Valid(s string) bool {
	for _, r := range s {
		if r == '\uFFFD' {
			return false
		}
	}
	return true
}

func TestHiddenRule(t *testing.T) {
	root := t.TempDir()
	mkTree(t, root, map[string]string{
		".github/workflows/ci.yml": "",
		".env":                     "",
		"src/.cache.json":          "",
		"src/ci.go":                "",
	})
	ix := buildTest(t, root)
	tests := []struct {
		query string
		want  []string
	}{
		{"ci", []string{"src/ci.go"}},
		{".ci", []string{".github/workflows/ci.yml"}},
		{"", []string{"src/"}},
		{".env", []string{".env"}},
		{".github/", []string{".github/workflows/"}},
		{"src/", []string{"src/ci.go"}},
		{"src/.", []string{"src/.cache.json", "src/ci.go"}},
		{"src/.c", []string{"src/.cache.json"}},
	}
	for _, tc := range tests {
		got := candPaths(search(t, ix, tc.query, 20))
		if !slices.Equal(got, tc.want) {
			t.Errorf("Search(%q) = %q, want %q", tc.query, got, tc.want)
		}
	}
}

func TestDirectoryListing(t *testing.T) {
	root := t.TempDir()
	mkTree(t, root, map[string]string{
		".gitignore":                "build/\n*.log\n",
		".git/HEAD":                 "ref: refs/heads/main\n",
		"build/out.bin":             "",
		"build/gen/x.go":            "",
		"node_modules/pkg/index.js": "",
		"src/main.go":               "",
		"src/main_test.go":          "",
		"src/util/":                 "",
		"src/debug.log":             "",
		"src/Makefile":              "",
	})
	ix := buildTest(t, root)
	tests := []struct {
		query string
		want  []string
	}{
		{"", []string{"src/"}},
		{"src/", []string{"src/util/", "src/Makefile", "src/main.go", "src/main_test.go"}},
		{"src/mai", []string{"src/main.go", "src/main_test.go", "src/Makefile"}},
		{"src/mk", []string{"src/Makefile"}},
		{"./src/../", nil},
		{"src//util/", nil},
		{"build/", []string{"build/gen/ (ignored)", "build/out.bin (ignored)"}},
		{"build/gen/", []string{"build/gen/x.go (ignored)"}},
		{"node_modules/", []string{"node_modules/pkg/ (ignored)"}},
		{".git/", nil},
		{"src/.git/", nil},
		{"missing/", nil},
		{"src/main.go/", nil},
	}
	for _, tc := range tests {
		got := candPaths(search(t, ix, tc.query, 20))
		if len(got) == 0 && len(tc.want) == 0 {
			continue
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("Search(%q) = %q, want %q", tc.query, got, tc.want)
		}
	}
	// Fuzzy search never shows ignored paths.
	for _, q := range []string{"outbin", "indexjs", "debuglog"} {
		if res := search(t, ix, q, 20); len(res) != 0 {
			t.Errorf("Search(%q) = %q, want no ignored paths", q, candPaths(res))
		}
	}
}

func TestNoEscapeFromWorkspace(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "ws")
	mkTree(t, base, map[string]string{
		"outside/secret.txt": "secret",
		"ws/src/a.go":        "",
		"ws/etc":             "->/etc",
		"ws/out":             "->../outside",
		"ws/secret-link.txt": "->../outside/secret.txt",
		"ws/inside-link.go":  "->src/a.go",
		"ws/dangling":        "->nowhere",
		"ws/src/loop":        "->..",
	})
	ix := buildTest(t, root)
	want := []string{"inside-link.go", "src/", "src/a.go"}
	if got := sortedPaths(ix); !slices.Equal(got, want) {
		t.Errorf("indexed %q, want %q", got, want)
	}
	for _, q := range []string{"etc/", "../", "/etc/", "../outside/", "out/", "src/loop/", "src/../../", "/", "//etc/", "..", "passwd", "secret"} {
		if res := search(t, ix, q, 20); len(res) != 0 {
			t.Errorf("Search(%q) = %q, want nothing outside the workspace", q, candPaths(res))
		}
	}
}

func TestExcludedNames(t *testing.T) {
	root := t.TempDir()
	mkTree(t, root, map[string]string{
		"node_modules/a/index.js": "",
		"vendor/lib.go":           "",
		"src/vendor.go":           "",
		"src/node_modules":        "a file, not a directory",
	})
	ix := buildTest(t, root)
	want := []string{"src/", "src/node_modules", "src/vendor.go", "vendor/", "vendor/lib.go"}
	if got := sortedPaths(ix); !slices.Equal(got, want) {
		t.Errorf("default exclusions: %q, want %q", got, want)
	}
	ix2, err := Build(context.Background(), Options{Root: root, ExcludedNames: []string{"vendor"}, GitEnv: isolatedEnv(t)})
	if err != nil {
		t.Fatal(err)
	}
	want2 := []string{"node_modules/", "node_modules/a/", "node_modules/a/index.js", "src/", "src/node_modules", "src/vendor.go"}
	if got := sortedPaths(ix2); !slices.Equal(got, want2) {
		t.Errorf("custom exclusions: %q, want %q", got, want2)
	}
}

func TestDshignore(t *testing.T) {
	root := t.TempDir()
	mkTree(t, root, map[string]string{
		".git/HEAD":        "",
		".gitignore":       "*.log\ngenerated/\n",
		".dshignore":       "!keep.log\n!generated/\nsecret/\n",
		"keep.log":         "",
		"drop.log":         "",
		"generated/api.go": "",
		"generated/x.log":  "",
		"secret/key.pem":   "",
		"sub/.dshignore":   "*.go\n!main.go\n",
		"sub/main.go":      "",
		"sub/other.go":     "",
		"sub/keep.log":     "",
	})
	ix := buildTest(t, root)
	want := []string{".dshignore", ".gitignore", "generated/", "generated/api.go", "keep.log", "sub/", "sub/.dshignore", "sub/keep.log", "sub/main.go"}
	if got := sortedPaths(ix); !slices.Equal(got, want) {
		t.Errorf("got %q\nwant %q", got, want)
	}
	// An explicitly named hidden-by-dshignore directory still lists, marked.
	got := candPaths(search(t, ix, "secret/", 20))
	if !slices.Equal(got, []string{"secret/key.pem (ignored)"}) {
		t.Errorf("secret/ listing = %q", got)
	}
}

func TestNestedRepositoryUsesOwnRules(t *testing.T) {
	root := t.TempDir()
	mkTree(t, root, map[string]string{
		".git/HEAD":                  "",
		".git/info/exclude":          "*.secret\n",
		".gitignore":                 "*.tmp\n",
		"a.tmp":                      "",
		"a.secret":                   "",
		"vendored/.git/HEAD":         "",
		"vendored/.git/info/exclude": "*.bak\n",
		"vendored/b.tmp":             "",
		"vendored/b.secret":          "",
		"vendored/b.bak":             "",
	})
	ix := buildTest(t, root)
	want := []string{".gitignore", "vendored/", "vendored/b.secret", "vendored/b.tmp"}
	if got := sortedPaths(ix); !slices.Equal(got, want) {
		t.Errorf("got %q\nwant %q", got, want)
	}
}

func TestRootInsideRepository(t *testing.T) {
	base := t.TempDir()
	mkTree(t, base, map[string]string{
		".git/HEAD":          "",
		".git/info/exclude":  "/pkg/ws/excluded.go\n",
		".gitignore":         "*.gen.go\n/pkg/ws/anchored.go\n",
		"pkg/.gitignore":     "ws/sub/\n",
		"pkg/ws/a.go":        "",
		"pkg/ws/a.gen.go":    "",
		"pkg/ws/anchored.go": "",
		"pkg/ws/excluded.go": "",
		"pkg/ws/sub/x.go":    "",
	})
	ix := buildTest(t, filepath.Join(base, "pkg", "ws"))
	want := []string{"a.go"}
	if got := sortedPaths(ix); !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestSearchLimitsAndErrors(t *testing.T) {
	root := t.TempDir()
	tree := map[string]string{}
	for i := 0; i < 50; i++ {
		tree[fmt.Sprintf("f%02d.txt", i)] = ""
	}
	mkTree(t, root, tree)
	ix := buildTest(t, root)
	res, capped, err := ix.Search(context.Background(), "txt", 0)
	if err != nil || len(res) != DefaultLimit || !capped {
		t.Errorf("default limit: %d results, capped %v, err %v", len(res), capped, err)
	}
	res, capped, err = ix.Search(context.Background(), "f01", 5)
	if err != nil || len(res) != 1 || capped {
		t.Errorf("uncapped: %d results, capped %v, err %v", len(res), capped, err)
	}
	res, capped, err = ix.Search(context.Background(), "", 10)
	if err != nil || len(res) != 10 || !capped {
		t.Errorf("listing cap: %d results, capped %v, err %v", len(res), capped, err)
	}
	if _, _, err := ix.Search(context.Background(), "x", -1); err == nil {
		t.Error("negative limit accepted")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	big := t.TempDir()
	tree = map[string]string{}
	for i := 0; i < 100; i++ {
		tree[fmt.Sprintf("d%d/f%d.txt", i%30, i)] = ""
	}
	mkTree(t, big, tree)
	ixBig := buildTest(t, big)
	if _, _, err := ixBig.Search(ctx, "txt", 5); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled search: err %v, want context.Canceled", err)
	}
	if _, err := Build(ctx, Options{Root: big, GitEnv: isolatedEnv(t)}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled build: err %v, want context.Canceled", err)
	}
}

func TestBuildErrors(t *testing.T) {
	f := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(f, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, root := range []string{"", f, filepath.Join(t.TempDir(), "missing")} {
		if _, err := Build(context.Background(), Options{Root: root}); err == nil {
			t.Errorf("Build(%q) succeeded", root)
		}
	}
}

// TestConcurrentSearchDuringApply runs readers against a writer; run with
// -race it checks that snapshots are never mutated in place.
func TestConcurrentSearchDuringApply(t *testing.T) {
	root := t.TempDir()
	mkTree(t, root, rankingTree)
	ix := buildTest(t, root)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for r := 0; r < 4; r++ {
		wg.Add(1)
		go func(r int) {
			defer wg.Done()
			qs := []string{"s", "se", "ser", "serv", "server", "", "server/"}
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				if _, _, err := ix.Search(context.Background(), qs[(i+r)%len(qs)], 10); err != nil {
					t.Error(err)
					return
				}
			}
		}(r)
	}
	for i := 0; i < 40; i++ {
		p := filepath.Join(root, "server", fmt.Sprintf("gen%d.go", i))
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		ix.Apply([]Change{{Path: p}})
	}
	close(stop)
	wg.Wait()
	if res := search(t, ix, "gen39", 1); len(res) != 1 || res[0].Path != "server/gen39.go" {
		t.Errorf("after applies: %q", candPaths(res))
	}
}

// TestRandomQueriesStayInside throws random path-like queries built from
// escape ingredients at the index and checks every answer lies inside the
// workspace and is what the root really holds.
func TestRandomQueriesStayInside(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "ws")
	mkTree(t, base, map[string]string{
		"outside/secret.txt": "",
		"ws/a/b.txt":         "",
		"ws/.hidden/c.txt":   "",
		"ws/up":              "->..",
		"ws/etc":             "->/etc",
		"ws/a/back":          "->../../outside",
	})
	ix := buildTest(t, root)
	parts := []string{"..", ".", "", "a", "b.txt", "up", "etc", "back", "outside", "secret", "/", "//", ".hidden", "~", "\\", "%2e%2e"}
	rng := rand.New(rand.NewPCG(3, 5))
	for i := 0; i < 3000; i++ {
		var q string
		for n := rng.IntN(5); n >= 0; n-- {
			q += parts[rng.IntN(len(parts))]
			if rng.IntN(2) == 0 {
				q += "/"
			}
		}
		res, _, err := ix.Search(context.Background(), q, 50)
		if err != nil {
			t.Fatalf("Search(%q): %v", q, err)
		}
		for _, c := range res {
			if filepath.IsAbs(c.Path) || slices.Contains(strings.Split(c.Path, "/"), "..") {
				t.Fatalf("Search(%q) returned %q", q, c.Path)
			}
			real, err := filepath.EvalSymlinks(filepath.Join(root, c.Path))
			if err != nil || !within(root, real) && !within(mustEval(t, root), real) {
				t.Fatalf("Search(%q) returned %q resolving to %q (%v)", q, c.Path, real, err)
			}
			if strings.Contains(c.Path, "secret") || strings.HasPrefix(c.Path, "etc/") || strings.HasPrefix(c.Path, "up/") || strings.Contains(c.Path, "back/") {
				t.Fatalf("Search(%q) returned %q through a directory symlink", q, c.Path)
			}
		}
	}
}

func mustEval(t *testing.T, p string) string {
	t.Helper()
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestSearchClampsLimit: a limit from a client larger than MaxLimit is
// clamped, in fuzzy search and in listings alike, instead of sizing what
// the search allocates.
func TestSearchClampsLimit(t *testing.T) {
	root := t.TempDir()
	tree := map[string]string{}
	for i := 0; i < MaxLimit+20; i++ {
		tree[fmt.Sprintf("f%04d.txt", i)] = ""
	}
	mkTree(t, root, tree)
	ix := buildTest(t, root)
	for _, q := range []string{"txt", ""} {
		res, capped, err := ix.Search(context.Background(), q, 1e10)
		if err != nil || len(res) != MaxLimit || !capped {
			t.Errorf("Search(%q, 1e10): %d results, capped %v, err %v; want %d, capped", q, len(res), capped, err, MaxLimit)
		}
	}
}

// TestExactNameRanksFirst (issue 14 item 7): a query equal to a file's base
// name, or to its whole path, ranks that file first whatever its depth,
// above shallower paths that fuzzy scoring would prefer.
func TestExactNameRanksFirst(t *testing.T) {
	root := t.TempDir()
	mkTree(t, root, map[string]string{
		"config.go.orig":                     "",
		"configs/go.mod":                     "",
		"cfg/config_go_test.txt":             "",
		"a/b/c/d/e/f/g/h/config.go":          "",
		"x/main.go":                          "",
		"deep/er/still/deeper/main.go":       "",
		"maintenance.go":                     "",
		"main.gox":                           "",
		"README":                             "",
		"docs/very/deep/path/to/readme.md":   "",
		"docs/readme-old/readme.md.bak":      "",
		"src/Makefile.am":                    "",
		"third_party/lib/pkg/build/Makefile": "",
		"日本/資料/深い/設定":                        "",
		"設定.json":                            "",
	})
	ix := buildTest(t, root)
	tests := []struct{ query, want string }{
		{"config.go", "a/b/c/d/e/f/g/h/config.go"},
		{"main.go", "x/main.go"}, // two exact names: the shorter path first
		{"readme.md", "docs/very/deep/path/to/readme.md"},
		{"README", "README"},
		{"Makefile", "third_party/lib/pkg/build/Makefile"},
		{"makefile", "third_party/lib/pkg/build/Makefile"},
		{"設定", "日本/資料/深い/設定"},
	}
	for _, tc := range tests {
		res := candPaths(search(t, ix, tc.query, 5))
		if len(res) == 0 || res[0] != tc.want {
			t.Errorf("Search(%q) = %q, want %q first", tc.query, res, tc.want)
		}
	}
	// Both exact main.go files lead, before any partial match.
	if res := candPaths(search(t, ix, "main.go", 5)); len(res) < 2 || res[1] != "deep/er/still/deeper/main.go" {
		t.Errorf("Search(main.go) = %q, want both exact names first", res)
	}
}
