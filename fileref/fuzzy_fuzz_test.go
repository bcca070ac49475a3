package fileref

import (
	"strings"
	"testing"
)

// toASCII maps arbitrary fuzz bytes onto 7-bit ASCII, so that every input
// exercises the ASCII fast path instead of being skipped.
func toASCII(s string) string {
	b := []byte(s)
	for i := range b {
		b[i] &= 0x7f
	}
	return string(b)
}

// FuzzScoreWindow is a differential test of the ASCII fast path against
// the generic scorer it stands in for: on any ASCII path and query,
// forwardASCII/backwardASCII find the window fuzzyMatch finds,
// scoreWindowASCII scores it as scoreWindow does (over bytes and over
// runes), and scoreASCII gives scorePath's answer with and without a base
// name.
func FuzzScoreWindow(f *testing.F) {
	for _, s := range [][2]string{
		{"server/server.go", "srvgo"}, {"internal/fooBar/FooBarImpl.java", "fbi"}, {"README.md", "readme"},
		{"a/b/c", "abc"}, {"x", "y"}, {"web/src/components/Button.tsx", "buttontsx"}, {"a--b__c..d", "a-_."},
		{"main.go", "main"}, {"maintenance/main_test.go", "main"}, {"AbcDef123ghi", "ad1g"}, {"", "a"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, path, query string) {
		path, query = toASCII(path), strings.ToLower(toASCII(query))
		if query == "" || len(path) > maxIndexedPathLen {
			return
		}
		low := lowerASCII(path)
		end, okA := forwardASCII(low, 0, query)
		genScore, okG := fuzzyMatch([]byte(path), 0, []byte(query))
		if okA != okG {
			t.Fatalf("path %q query %q: forwardASCII found %v, fuzzyMatch %v", path, query, okA, okG)
		}
		if !okA {
			return
		}
		start := backwardASCII(low, end, query)
		gotA := scoreWindowASCII(path, low, start, end, query)
		if got := scoreWindow([]byte(path), start, end, []byte(query)); got != gotA {
			t.Fatalf("path %q query %q window [%d,%d): scoreWindow(bytes) %d, scoreWindowASCII %d", path, query, start, end, got, gotA)
		}
		if got := scoreWindow([]rune(path), start, end, []rune(query)); got != gotA {
			t.Fatalf("path %q query %q window [%d,%d): scoreWindow(runes) %d, scoreWindowASCII %d", path, query, start, end, got, gotA)
		}
		if want := gotA + wordEndASCII(path, end); genScore != want {
			t.Fatalf("path %q query %q: fuzzyMatch %d, ASCII path %d", path, query, genScore, want)
		}
		base := strings.LastIndexByte(path, '/') + 1
		bend := noBaseMatch
		if b, ok := forwardASCII(low, base, query); ok {
			bend = b
		}
		want, _ := scorePath([]byte(path), base, []byte(query))
		if got := scoreASCII(path, low, base, end, bend, query); got != want {
			t.Fatalf("path %q query %q base %d: scoreASCII %d, scorePath %d", path, query, base, got, want)
		}
	})
}
