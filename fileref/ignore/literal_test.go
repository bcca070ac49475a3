package ignore

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"
	"time"
)

// matchEach is Match without the literal index: every pattern tried from
// the end, as a short list is.
func (l *List) matchEach(path, name string, isDir bool) *Pattern {
	for i := len(l.Patterns) - 1; i >= 0; i-- {
		if l.matches(i, path, name, isDir) {
			return &l.Patterns[i]
		}
	}
	return nil
}

// TestLiteralIndexMatchesEachPattern: a long list finds the same last
// matching pattern through its literal index as by trying every pattern,
// on random lists mixing literal names and paths (repeated, negated,
// directory-only) with globs, under a base directory or none.
func TestLiteralIndexMatchesEachPattern(t *testing.T) {
	seed := time.Now().UnixNano()
	rnd := rand.New(rand.NewSource(seed))
	names := []string{"a", "b", "build", "x.log", "y.tmp", "node_modules", "gen-1", "gen-2", "c d", "é", ".log", "a.b.log", "log", "z.tar.gz"}
	dirs := []string{"", "src/", "src/gen/", "docs/", "a/b/"}
	pattern := func() string {
		var s string
		switch rnd.Intn(6) {
		case 0, 1:
			s = names[rnd.Intn(len(names))]
		case 2:
			s = dirs[1+rnd.Intn(len(dirs)-1)] + names[rnd.Intn(len(names))]
		case 3:
			s = "/" + names[rnd.Intn(len(names))]
		case 4:
			s = []string{"*.log", "*.tmp", "*.gz", "*.tar.gz", "gen-*", "src/**/x.log", "[ab]", "?", "**/build", "*.lo[g]", "*log"}[rnd.Intn(11)]
		default:
			s = names[rnd.Intn(len(names))] + "/"
		}
		if rnd.Intn(5) == 0 {
			s = "!" + s
		}
		return s
	}
	for round := 0; round < 200; round++ {
		var b strings.Builder
		for range literalIndexMin + rnd.Intn(200) {
			b.WriteString(pattern() + "\n")
		}
		base := dirs[rnd.Intn(len(dirs))]
		l := ParseList(base, "test", []byte(b.String()))
		if len(l.Patterns) < literalIndexMin {
			t.Fatalf("%d patterns: the list is too short to be indexed", len(l.Patterns))
		}
		for range 200 {
			name := names[rnd.Intn(len(names))]
			path := dirs[rnd.Intn(len(dirs))] + dirs[rnd.Intn(len(dirs))] + name
			isDir := rnd.Intn(2) == 0
			want, got := l.matchEach(path, name, isDir), l.Match(path, name, isDir)
			if want != got {
				t.Fatalf("seed %d: list under %q, %q (dir %v): indexed match %v, each pattern %v\n%s", seed, base, path, isDir, describe(got), describe(want), b.String())
			}
		}
	}
}

func describe(p *Pattern) string {
	if p == nil {
		return "none"
	}
	return fmt.Sprintf("%q", p.String())
}

// BenchmarkMatchHugeList matches a name that no pattern of a 100,000-line
// .gitignore of generated names matches: the literal index looks it up
// instead of trying every pattern.
func BenchmarkMatchHugeList(b *testing.B) {
	var sb strings.Builder
	for i := range 100_000 {
		fmt.Fprintf(&sb, "gen/out-%06d.bin\nartifact-%06d\n", i, i)
	}
	sb.WriteString("*.tmp\n")
	l := ParseList("", ".gitignore", []byte(sb.String()))
	l.Match("x", "x", false) // builds the index
	for b.Loop() {
		if l.Match("src/main.go", "main.go", false) != nil {
			b.Fatal("matched")
		}
	}
}
