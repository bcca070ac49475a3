package fileref

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// memIndex is an index over paths (directories end in "/") published
// without reading a disk, for tests and benchmarks of the search over
// trees too large to write quickly.
func memIndex(t testing.TB, paths []string) *Index {
	t.Helper()
	ix, err := Open(Options{Root: t.TempDir(), GitEnv: isolatedEnv(t)})
	if err != nil {
		t.Fatal(err)
	}
	raw := make([]rawEntry, 0, len(paths))
	for _, p := range paths {
		dir := strings.HasSuffix(p, "/")
		p = strings.TrimSuffix(p, "/")
		hidden := strings.HasPrefix(p, ".") || strings.Contains(p, "/.")
		raw = append(raw, newRawEntry(p, dir, hidden))
	}
	ix.publish(newSnapshot(nil, nil, raw, nil), len(raw))
	ix.built.Store(true)
	return ix
}

// diffWords make path components with camel case, digits, separators,
// hidden names, blanks and non-ASCII letters.
var diffWords = []string{
	"server", "Server", "srv", "handler", "HTTPHandler", "config", "cfg", "util", "parse",
	"ParserImpl", "main", "read_me", "READ", "me", "x", "ab", "a-b", "v2", "12", "go",
	".env", ".hidden", "café", "Émile", "日本", "name with space", "re", "ref", "refactor",
	"doc", "document", "review", "s", "e", "r", "test", "t", "fix",
}

var diffExts = []string{"", ".go", ".md", ".tsx", ".json", ".Go", ".txt", "_test.go"}

// genDiffPaths returns n distinct random paths with their directories.
func genDiffPaths(rng *rand.Rand, n int) []string {
	seen := map[string]bool{}
	var out []string
	add := func(p string) {
		// A name is a file or a directory, never both.
		if key := strings.TrimSuffix(p, "/"); !seen[key] {
			seen[key] = true
			out = append(out, p)
		}
	}
	for len(seen) < n {
		depth := rng.IntN(5)
		dir := ""
		for d := 0; d < depth; d++ {
			w := diffWords[rng.IntN(len(diffWords))]
			if rng.IntN(3) == 0 {
				w += fmt.Sprint(rng.IntN(40))
			}
			dir += w
			add(dir + "/")
			dir += "/"
		}
		name := diffWords[rng.IntN(len(diffWords))]
		if rng.IntN(2) == 0 {
			name += "_" + diffWords[rng.IntN(len(diffWords))]
		}
		add(dir + name + fmt.Sprint(rng.IntN(30)) + diffExts[rng.IntN(len(diffExts))])
	}
	return out
}

// fullRanking is the straightforward answer a search must give: every
// path scored by the generic scorer over runes, the hidden rule and the
// exact-name bonus applied, all matches sorted.
func fullRanking(paths []string, query string, limit int) ([]Candidate, bool) {
	q := []rune(strings.ToLower(query))
	hiddenOK := hiddenAllowed(query)
	var all []Candidate
	for _, p := range paths {
		dir := strings.HasSuffix(p, "/")
		p = strings.TrimSuffix(p, "/")
		if !hiddenOK && (strings.HasPrefix(p, ".") || strings.Contains(p, "/.")) {
			continue
		}
		baseByte := strings.LastIndexByte(p, '/') + 1
		score, ok := scorePath([]rune(p), utf8.RuneCountInString(p[:baseByte]), q)
		if !ok {
			continue
		}
		if strings.EqualFold(p[baseByte:], query) {
			score += bonusExactName
		}
		all = append(all, Candidate{Path: p, Kind: kindOf(dir), Score: score})
	}
	slices.SortFunc(all, func(a, b Candidate) int {
		if a.Score != b.Score {
			return b.Score - a.Score
		}
		if len(a.Path) != len(b.Path) {
			return len(a.Path) - len(b.Path)
		}
		return strings.Compare(a.Path, b.Path)
	})
	if len(all) > limit {
		return all[:limit], true
	}
	return all, false
}

// typedQuery returns a query someone might type: mostly characters of a
// real path in order (with case changes and skips), sometimes noise.
func typedQuery(rng *rand.Rand, paths []string) string {
	if rng.IntN(6) == 0 {
		const noise = "aeirsxz._-1 É"
		var b strings.Builder
		for i := 0; i < 1+rng.IntN(8); i++ {
			b.WriteString(string([]rune(noise)[rng.IntN(utf8.RuneCountInString(noise))]))
		}
		return b.String()
	}
	p := []rune(strings.TrimSuffix(paths[rng.IntN(len(paths))], "/"))
	var b strings.Builder
	for _, r := range p[rng.IntN(max(1, len(p)/2)):] {
		if r == '/' || rng.IntN(3) == 0 {
			continue
		}
		if rng.IntN(4) == 0 {
			r = []rune(strings.ToUpper(string(r)))[0]
		}
		b.WriteRune(r)
		if b.Len() >= 20 {
			break
		}
	}
	return b.String()
}

// TestRankingMatchesFullRanking types random queries a character at a
// time (with the occasional backspace) into one index, so that every
// shortcut of the search (narrowing, score ceilings, the parallel scan)
// is taken, and compares each answer and its capped flag with
// fullRanking over the same paths.
func TestRankingMatchesFullRanking(t *testing.T) {
	for _, tc := range []struct {
		paths, queries int
	}{{300, 150}, {parallelScanMin + 1000, 10}} {
		t.Run(fmt.Sprint(tc.paths), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(tc.paths), 15))
			paths := genDiffPaths(rng, tc.paths)
			ix := memIndex(t, paths)
			for i := 0; i < tc.queries; i++ {
				q := []rune(typedQuery(rng, paths))
				limit := []int{1, 3, 20, 28, 200}[rng.IntN(5)]
				for n := 1; n <= len(q); n++ {
					if n > 2 && rng.IntN(8) == 0 {
						n -= 2 // backspace twice
					}
					prefix := string(q[:n])
					if strings.Contains(prefix, "/") {
						break
					}
					got, gotCapped, err := ix.Search(context.Background(), prefix, limit)
					if err != nil {
						t.Fatal(err)
					}
					want, wantCapped := fullRanking(paths, prefix, limit)
					if !slices.Equal(got, want) || gotCapped != wantCapped {
						t.Fatalf("query %q limit %d:\n got %v capped %v\nwant %v capped %v", prefix, limit, got, gotCapped, want, wantCapped)
					}
				}
			}
		})
	}
}
