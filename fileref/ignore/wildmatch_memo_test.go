package ignore

import (
	"strconv"
	"strings"
	"testing"
)

// refDowild is git's wildmatch as first ported, with its unbounded
// backtracking: the reference the memoised matcher must agree with.
func refDowild(pat string, p int, text string, t int, flags int) wildResult {
	patStart := 0
	for ; p < len(pat); t, p = t+1, p+1 {
		pCh := pat[p]
		tCh := byteAt(text, t)
		if tCh == 0 && pCh != '*' {
			return wildAbortAll
		}
		switch pCh {
		case '\\':
			// Literal match with the following character; a trailing
			// backslash compares against NUL and fails below.
			p++
			pCh = byteAt(pat, p)
			if tCh != pCh {
				return wildNoMatch
			}
			continue
		case '?':
			if flags&wildPathname != 0 && tCh == '/' {
				return wildNoMatch
			}
			continue
		case '*':
			var matchSlash bool
			p++
			if byteAt(pat, p) == '*' {
				prevP := p - 2
				for p++; byteAt(pat, p) == '*'; p++ {
				}
				if flags&wildPathname == 0 {
					// Without WM_PATHNAME, "**" is just "*".
					matchSlash = true
				} else if (prevP < patStart || pat[prevP] == '/') &&
					(byteAt(pat, p) == 0 || byteAt(pat, p) == '/' ||
						(byteAt(pat, p) == '\\' && byteAt(pat, p+1) == '/')) {
					// "**/" may match nothing at all: try the rest of
					// the pattern right here first.
					if byteAt(pat, p) == '/' && refDowild(pat, p+1, text, t, flags) == wildMatch {
						return wildMatch
					}
					matchSlash = true
				} else {
					matchSlash = false
				}
			} else {
				matchSlash = flags&wildPathname == 0
			}
			if p >= len(pat) {
				// Trailing "**" matches everything; a trailing "*" only
				// when no slash remains.
				if !matchSlash {
					for i := t; i < len(text); i++ {
						if text[i] == '/' {
							return wildNoMatch
						}
					}
				}
				return wildMatch
			} else if !matchSlash && pat[p] == '/' {
				// One "*" followed by a slash matches exactly the next
				// path component.
				slash := -1
				for i := t; i < len(text); i++ {
					if text[i] == '/' {
						slash = i
						break
					}
				}
				if slash < 0 {
					return wildNoMatch
				}
				t = slash
				// The slash itself is consumed by the loop.
				continue
			}
			for {
				if tCh == 0 {
					break
				}
				// Advance quickly to the next occurrence of a literal
				// that follows the star.
				if !isGlobSpecial(pat[p]) {
					pCh = pat[p]
					for {
						tCh = byteAt(text, t)
						if tCh == 0 || (!matchSlash && tCh == '/') {
							break
						}
						if tCh == pCh {
							break
						}
						t++
					}
					if tCh != pCh {
						return wildNoMatch
					}
				}
				if m := refDowild(pat, p, text, t, flags); m != wildNoMatch {
					if !matchSlash || m != wildAbortToStarStar {
						return m
					}
				} else if !matchSlash && tCh == '/' {
					return wildAbortToStarStar
				}
				t++
				tCh = byteAt(text, t)
			}
			return wildAbortAll
		case '[':
			p++
			pCh = byteAt(pat, p)
			if pCh == '^' {
				pCh = '!'
			}
			negated := pCh == '!'
			if negated {
				p++
				pCh = byteAt(pat, p)
			}
			var prevCh byte
			matched := false
			for {
				if pCh == 0 {
					return wildAbortAll
				}
				if pCh == '\\' {
					p++
					pCh = byteAt(pat, p)
					if pCh == 0 {
						return wildAbortAll
					}
					if tCh == pCh {
						matched = true
					}
				} else if pCh == '-' && prevCh != 0 && byteAt(pat, p+1) != 0 && byteAt(pat, p+1) != ']' {
					p++
					pCh = pat[p]
					if pCh == '\\' {
						p++
						pCh = byteAt(pat, p)
						if pCh == 0 {
							return wildAbortAll
						}
					}
					if tCh <= pCh && tCh >= prevCh {
						matched = true
					}
					pCh = 0 // so that prevCh becomes 0
				} else if pCh == '[' && byteAt(pat, p+1) == ':' {
					p += 2
					s := p
					for ; byteAt(pat, p) != 0 && pat[p] != ']'; p++ {
					}
					if byteAt(pat, p) == 0 {
						return wildAbortAll
					}
					i := p - s - 1
					if i < 0 || pat[p-1] != ':' {
						// No ":]": treat "[" as an ordinary member.
						p = s - 2
						pCh = '['
						if tCh == pCh {
							matched = true
						}
						prevCh = pCh
						p++
						pCh = byteAt(pat, p)
						if pCh == ']' {
							break
						}
						continue
					}
					ok, known := classMatch(pat[s:s+i], tCh)
					if !known {
						return wildAbortAll
					}
					if ok {
						matched = true
					}
					pCh = 0
				} else if tCh == pCh {
					matched = true
				}
				prevCh = pCh
				p++
				pCh = byteAt(pat, p)
				if pCh == ']' {
					break
				}
			}
			if matched == negated || (flags&wildPathname != 0 && tCh == '/') {
				return wildNoMatch
			}
			continue
		default:
			if tCh != pCh {
				return wildNoMatch
			}
			continue
		}
	}
	if t < len(text) {
		return wildNoMatch
	}
	return wildMatch
}

// refWildmatch is the reference answer.
func refWildmatch(pattern, text string, flags int) bool {
	return refDowild(pattern, 0, text, 0, flags) == wildMatch
}

// memoWildmatch runs the memoised matcher from the start (no budget) and
// returns its answer and the number of recursive calls it made.
func memoWildmatch(pattern, text string, flags int) (bool, int) {
	m := wildMatcher{pat: pattern, text: text, flags: flags, memo: true}
	r := m.dowild(0, 0)
	return r == wildMatch, m.steps
}

// FuzzWildmatchMemo holds the memoised matcher (forced from the first
// call, and the budgeted one that switches to it) to the reference on
// arbitrary patterns and texts, in both modes.
func FuzzWildmatchMemo(f *testing.F) {
	for _, s := range [][2]string{
		{"*a*a*b", "aaaaab"}, {"*a*a*b", "aaaa"}, {"**/a/**/b", "x/a/y/b"}, {"a/**/b", "a/b"},
		{"*/x", "a/x"}, {"**/**/a*b*c", "q/w/e/abc"}, {"*[ab]*?", "zzab"}, {"***", "a/b"},
		{"a*/b", "axx/b"}, {"foo/**", "foo"}, {"**/", "a/"}, {"*\\/", "a/"}, {"[a-c]*", "b/c"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pattern, text string) {
		if len(pattern) > 40 || len(text) > 64 || strings.Count(pattern, "*") > 8 {
			return // keep the exponential reference affordable
		}
		for _, flags := range []int{0, wildPathname} {
			want := refWildmatch(pattern, text, flags)
			if got, _ := memoWildmatch(pattern, text, flags); got != want {
				t.Fatalf("memoised wildmatch(%q, %q, %d) = %v, reference %v", pattern, text, flags, got, want)
			}
			if got := wildmatch(pattern, text, flags); got != want {
				t.Fatalf("wildmatch(%q, %q, %d) = %v, reference %v", pattern, text, flags, got, want)
			}
		}
	})
}

// pathological are the patterns of issue 12 item 4 against long names that
// defeat git's abort shortcuts (the text ends in a byte the pattern never
// reaches, so every star's loop ends in "no match" and its caller retries):
// git's backtracking takes time exponential in the number of stars.
var pathological = []struct{ pattern, text string }{
	{"*a*a*a*a*a*a*a*a*a*a*b", strings.Repeat("a", 250) + "c"},
	{"**/**/**/**/**/a*b*c*d*e*f*g*h*i*j", strings.Repeat("x/", 40) + strings.Repeat("abcdefghi", 4) + "z"},
	{"*?*?*?*?*?*?*?*?*?*?*?*?x", strings.Repeat("a", 200) + "y"},
	{"a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b", strings.Repeat("a", 4000) + "c"},
}

// TestWildmatchPathologicalIsPolynomial: the patterns that took
// exponential time are answered (no match) with a number of recursive
// calls bounded by the product of the pattern and text lengths.
func TestWildmatchPathologicalIsPolynomial(t *testing.T) {
	for _, tc := range pathological {
		for _, flags := range []int{0, wildPathname} {
			if wildmatch(tc.pattern, tc.text, flags) {
				t.Errorf("wildmatch(%q, %d-byte text) matched", tc.pattern, len(tc.text))
			}
			got, steps := memoWildmatch(tc.pattern, tc.text, flags)
			bound := 2 * (len(tc.pattern) + 1) * (len(tc.text) + 1)
			if got || steps > bound {
				t.Errorf("memoised wildmatch(%q, %d-byte text, %d): %v after %d calls, bound %d", tc.pattern, len(tc.text), flags, got, steps, bound)
			}
		}
	}
	// The same shapes where they do match, checked against the reference
	// on texts short enough for it.
	for _, tc := range []struct{ pattern, text string }{
		{"*a*a*a*a*a*a*a*a*a*a*b", strings.Repeat("a", 12) + "b"},
		{"**/**/**/**/**/a*b*c", "v/w/x/y/z/abc"},
	} {
		for _, flags := range []int{0, wildPathname} {
			want := refWildmatch(tc.pattern, tc.text, flags)
			if got := wildmatch(tc.pattern, tc.text, flags); got != want || !want {
				t.Errorf("wildmatch(%q, %q, %d) = %v, reference %v (want a match)", tc.pattern, tc.text, flags, got, want)
			}
		}
	}
}

// BenchmarkWildmatchPathological times the pathological cases and, for
// the first shape on texts short enough for it, the unbounded reference
// beside the matcher.
func BenchmarkWildmatchPathological(b *testing.B) {
	for _, tc := range pathological {
		b.Run(strings.ReplaceAll(tc.pattern[:min(len(tc.pattern), 24)], "/", "|")+"/"+strconv.Itoa(len(tc.text)), func(b *testing.B) {
			for range b.N {
				wildmatch(tc.pattern, tc.text, wildPathname)
			}
		})
	}
	for _, n := range []int{14, 18, 22} {
		text := strings.Repeat("a", n) + "c"
		b.Run("matcher/"+strconv.Itoa(n+1), func(b *testing.B) {
			for range b.N {
				wildmatch(pathological[0].pattern, text, 0)
			}
		})
		b.Run("reference/"+strconv.Itoa(n+1), func(b *testing.B) {
			for range b.N {
				refWildmatch(pathological[0].pattern, text, 0)
			}
		})
	}
}

// FuzzCollapseStarStarSlash holds the collapsing of "**/**/" runs to git's
// answers: the collapsed pattern matches, with WM_PATHNAME, exactly what
// the pattern as written matches in the reference.
func FuzzCollapseStarStarSlash(f *testing.F) {
	for _, s := range [][2]string{
		{"**/**/a", "a"}, {"**/**/a", "x/y/a"}, {"a/**/**/**/b", "a/b"}, {"a/**/**/b", "a/x/y/b"},
		{"x**/**/a", "xq/a"}, {"\\/**/**/a", "/a"}, {"[/**/**/]", "*"}, {"**/**/**", "a/b"}, {"**/**/", "a/"},
		{"a/**/**/*b", "a/c/b"}, {"**/***/a", "a"}, {"**/**\\/a", "x/a"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pattern, text string) {
		if len(pattern) > 40 || len(text) > 48 || strings.Count(pattern, "*") > 10 {
			return
		}
		c := collapseStarStarSlash(pattern)
		if want, got := refWildmatch(pattern, text, wildPathname), wildmatch(c, text, wildPathname); got != want {
			t.Fatalf("collapsed %q (from %q) vs %q: %v, git's answer %v", c, pattern, text, got, want)
		}
	})
}

// TestCollapseStarStarSlash: runs of special "**/" become one; others stay.
func TestCollapseStarStarSlash(t *testing.T) {
	for in, want := range map[string]string{
		"**/**/a":                         "**/a",
		"a/**/**/**/b":                    "a/**/b",
		"x**/**/a":                        "x**/**/a",
		"**/a/**/**/b/**/**/**/c":         "**/a/**/b/**/c",
		strings.Repeat("**/", 5000) + "x": "**/x",
		"a/b":                             "a/b",
	} {
		if got := collapseStarStarSlash(in); got != want {
			t.Errorf("collapseStarStarSlash(%.40q) = %.40q, want %q", in, got, want)
		}
	}
}
