package ignore

import (
	"path"
	"strings"
	"testing"
)

// simpleGlob reports whether pattern uses only literal bytes, "?" and single
// "*" — the subset where git's wildmatch with WM_PATHNAME and the standard
// library's path.Match must agree ("*" and "?" stop at "/", no classes, no
// escapes, no "**"). NUL is left out: git's matcher treats it as the end of
// the text, and file names never hold it.
func simpleGlob(pattern string) bool {
	return !strings.ContainsAny(pattern, "[]\\\x00") && !strings.Contains(pattern, "**")
}

// isASCII reports whether s is 7-bit ASCII.
func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// FuzzWildmatch runs git's matcher on arbitrary patterns and texts: it must
// never panic, and on the subset path.Match also understands the two must
// agree.
func FuzzWildmatch(f *testing.F) {
	for _, s := range [][2]string{
		{"foo", "foo"}, {"*.go", "main.go"}, {"*.go", "a/main.go"}, {"a/*/c", "a/b/c"},
		{"a?c", "a/c"}, {"**/foo", "x/y/foo"}, {"foo/**", "foo/a/b"}, {"[a-", "a"},
		{"[!]", "x"}, {"\\", "\\"}, {"*[", "a["}, {"[[:alpha:]]", "a"}, {"[[:nope:]]", "a"},
		{"a**b", "a/x/b"}, {"**", ""}, {"*?*?*?*?*?*?*?*?*?*?x", strings.Repeat("a", 40)},
		{"", ""}, {"ä*", "äb"}, {"\x00", ""},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pattern, text string) {
		got := wildmatch(pattern, text, wildPathname)
		_ = wildmatch(pattern, text, 0)
		if !simpleGlob(pattern) || strings.ContainsRune(text, 0) {
			return
		}
		if strings.Contains(pattern, "?") && !isASCII(text) {
			// git matches bytes, path.Match runes: "?" is one byte to git.
			return
		}
		want, err := path.Match(pattern, text)
		if err != nil {
			t.Fatalf("path.Match(%q, %q): %v", pattern, text, err)
		}
		if got != want {
			t.Fatalf("wildmatch(%q, %q) = %v, path.Match says %v", pattern, text, got, want)
		}
	})
}

// samePattern reports whether two parsed patterns match alike: flagEndsWith
// is only consulted for base-name patterns, so it may differ elsewhere
// ("/*/x" and "*/x" are the same pattern).
func samePattern(a, b Pattern) bool {
	if a.flags&flagNoDir == 0 {
		a.flags &^= flagEndsWith
		b.flags &^= flagEndsWith
	}
	return a == b
}

// FuzzParseList parses arbitrary ignore files and matches arbitrary paths
// against them: parsing and matching must never panic, a match must be a
// pattern of the list, every pattern must print back to a line that parses
// to the same pattern (but for texts starting with "/" or "!"), and a list of literal base-name patterns must match
// exactly the paths whose base name one of them spells.
func FuzzParseList(f *testing.F) {
	for _, s := range []struct {
		data, base, path string
		isDir            bool
	}{
		{"*.log\n!keep.log\n", "", "a/keep.log", false},
		{"/build/\n", "", "build", true},
		{"\xEF\xBB\xBFnode_modules\r\n", "", "x/node_modules", true},
		{"# comment\n\n  \nfoo\\ \n", "", "foo ", false},
		{"a/**/b\n**/c\nd/**\n", "sub/", "sub/a/x/b", false},
		{"!\n/\n//\n!/\n\\\n\\!x\n\\#y\n", "", "x", false},
		{"[a-\n[!]\n*[\n", "", "a[", false},
		{"docs/*.md\n", "docs/", "docs/docs/x.md", false},
		{"//a\n", "", "a", false},
	} {
		f.Add([]byte(s.data), s.base, s.path, s.isDir)
	}
	f.Fuzz(func(t *testing.T, data []byte, base, p string, isDir bool) {
		l := ParseList(base, "fuzz", data)
		name := p
		if i := strings.LastIndexByte(p, '/'); i >= 0 {
			name = p[i+1:]
		}
		m := l.Match(p, name, isDir)
		if m != nil {
			found := false
			for i := range l.Patterns {
				if &l.Patterns[i] == m {
					found = true
				}
			}
			if !found {
				t.Fatalf("Match returned a pattern that is not in the list")
			}
		}
		excluded, matched := NewStack(l).Match(p, name, isDir)
		if matched != (m != nil) || (matched && excluded == m.Negative()) {
			t.Fatalf("Stack.Match = (%v, %v), List.Match = %v", excluded, matched, m)
		}
		literal := true
		for i := range l.Patterns {
			pat := &l.Patterns[i]
			back := pat.String()
			if back == "" {
				t.Fatalf("pattern %+v prints as the empty line", *pat)
			}
			// String drops the anchoring "/" of a text holding a slash, so
			// a text starting with "!" ("/!/x") or "/" ("//a") prints as a
			// different pattern; String serves display only, these are
			// left out.
			if again := parsePattern(back); !samePattern(again, *pat) && !strings.HasPrefix(pat.text, "/") && !strings.HasPrefix(pat.text, "!") {
				t.Fatalf("pattern %+v prints as %q, which parses to %+v", *pat, back, again)
			}
			if pat.flags != flagNoDir || strings.ContainsAny(pat.text, "*?[\\") {
				literal = false
			}
		}
		if !literal {
			return
		}
		want := false
		for i := range l.Patterns {
			if l.Patterns[i].text == name {
				want = true
			}
		}
		if (m != nil) != want {
			t.Fatalf("literal patterns %q: Match(%q) = %v, want a match %v", data, p, m, want)
		}
	})
}
