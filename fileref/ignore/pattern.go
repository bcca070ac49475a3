// Package ignore implements git's ignore rules exactly as git applies them:
// pattern syntax (negation, anchoring, "**", directory-only patterns,
// escapes, trailing spaces), precedence between files, and the lookup of
// .git/info/exclude and the global core.excludesFile. It matches with a port
// of git's own wildmatch instead of translating patterns to regular
// expressions, which keeps the corner cases identical to git and the common
// patterns (a literal name, "*.ext") on allocation-free fast paths.
package ignore

import (
	"bytes"
	"strings"
)

// patternFlags mirror git's PATTERN_FLAG_* bits.
type patternFlags uint8

const (
	// flagNoDir: the pattern has no slash, so it matches the base name at
	// any depth below its file.
	flagNoDir patternFlags = 1 << iota
	// flagEndsWith: the pattern is "*" followed by a literal.
	flagEndsWith
	// flagMustBeDir: the pattern ended in "/" and matches directories only.
	flagMustBeDir
	// flagNegative: the pattern started with "!" and re-includes.
	flagNegative
)

// Pattern is one parsed line of an ignore file.
type Pattern struct {
	text      string // pattern without "!", trailing "/" and (anchored) leading "/"
	noWildLen int    // length of the literal prefix before any wildcard
	flags     patternFlags
}

// Negative reports whether the pattern re-includes what it matches ("!").
func (p *Pattern) Negative() bool { return p.flags&flagNegative != 0 }

// String returns the pattern as git would print it back.
func (p *Pattern) String() string {
	var b strings.Builder
	if p.Negative() {
		b.WriteByte('!')
	}
	if p.flags&flagNoDir == 0 && !strings.Contains(p.text, "/") {
		b.WriteByte('/')
	}
	b.WriteString(p.text)
	if p.flags&flagMustBeDir != 0 {
		b.WriteByte('/')
	}
	return b.String()
}

// List is the ordered set of patterns read from one source (one ignore
// file). Base is the directory the file lives in, relative to the matching
// root, with a trailing slash ("" for the root itself). A List is immutable
// once built and safe for concurrent use.
type List struct {
	Base     string
	Source   string
	Patterns []Pattern
	// index finds the literal patterns of a long list (literal.go).
	index listIndex
}

// utf8BOM is skipped at the start of a file, as git does.
var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// ParseList parses the contents of an ignore file with git's line rules:
// a BOM is skipped, blank lines and lines starting with "#" are comments,
// "\r\n" endings are accepted and unescaped trailing spaces are trimmed.
func ParseList(base, source string, data []byte) *List {
	l := &List{Base: base, Source: source}
	data = bytes.TrimPrefix(data, utf8BOM)
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		line = bytes.TrimSuffix(line, []byte{'\r'})
		s := trimTrailingSpaces(string(line))
		if s == "" {
			continue
		}
		l.Patterns = append(l.Patterns, parsePattern(s))
	}
	return l
}

// trimTrailingSpaces removes unescaped trailing spaces (not tabs), like
// git's trim_trailing_spaces.
func trimTrailingSpaces(s string) string {
	lastSpace := -1
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ' ':
			if lastSpace < 0 {
				lastSpace = i
			}
		case '\\':
			i++
			if i >= len(s) {
				return s
			}
			lastSpace = -1
		default:
			lastSpace = -1
		}
	}
	if lastSpace >= 0 {
		return s[:lastSpace]
	}
	return s
}

// simpleLength is the length of the prefix free of glob specials.
func simpleLength(s string) int {
	for i := 0; i < len(s); i++ {
		if isGlobSpecial(s[i]) {
			return i
		}
	}
	return len(s)
}

// parsePattern follows git's parse_path_pattern.
func parsePattern(s string) Pattern {
	var p Pattern
	if s[0] == '!' {
		p.flags |= flagNegative
		s = s[1:]
	}
	if strings.HasSuffix(s, "/") {
		s = s[:len(s)-1]
		p.flags |= flagMustBeDir
	}
	if !strings.Contains(s, "/") {
		p.flags |= flagNoDir
	}
	if strings.HasPrefix(s, "*") && simpleLength(s[1:]) == len(s)-1 {
		p.flags |= flagEndsWith
	}
	if p.flags&flagNoDir == 0 && strings.HasPrefix(s, "/") {
		s = s[1:]
	}
	if p.flags&flagNoDir == 0 {
		s = collapseStarStarSlash(s)
	}
	p.text = s
	p.noWildLen = simpleLength(s)
	return p
}

// collapseStarStarSlash replaces each run of "**/" segments that git
// treats as "zero or more directories" by one: "a/**/**/**/b" means what
// "a/**/b" means. git matches the run by recursion, one level per "**/"
// and one memo row per level here, so a pattern of thousands of them cost
// milliseconds per path; collapsed, it costs what one does. A "**/" is
// that special only at the start of the pattern or right after a "/"
// (git's wildmatch looks at the raw byte before the stars, as this does),
// and two special ones in a row match exactly the paths one matches.
// Used for patterns matched with WM_PATHNAME only (those holding a "/").
func collapseStarStarSlash(s string) string {
	if !strings.Contains(s, "**/**/") {
		return s
	}
	var b []byte
	for i := 0; i < len(s); i++ {
		if (i == 0 || s[i-1] == '/') && strings.HasPrefix(s[i:], "**/**/") {
			if b == nil {
				b = append(make([]byte, 0, len(s)), s[:i]...)
			}
			// Skip the first "**/"; the next one is at i+3, still after
			// a "/", and is looked at again.
			j := i + 3
			for strings.HasPrefix(s[j:], "**/**/") {
				j += 3
			}
			b = append(b, s[j:j+3]...)
			i = j + 2
			continue
		}
		if b != nil {
			b = append(b, s[i])
		}
	}
	if b == nil {
		return s
	}
	return string(b)
}

// matchBasename follows git's match_basename.
func (p *Pattern) matchBasename(name string) bool {
	if p.noWildLen == len(p.text) {
		return p.text == name
	}
	if p.flags&flagEndsWith != 0 {
		return strings.HasSuffix(name, p.text[1:])
	}
	return wildmatch(p.text, name, 0)
}

// matchPathname follows git's match_pathname; rel is the path relative to
// the list's base directory.
func (p *Pattern) matchPathname(rel string) bool {
	pat := p.text
	if prefix := p.noWildLen; prefix > 0 {
		if prefix > len(rel) || pat[:prefix] != rel[:prefix] {
			return false
		}
		pat, rel = pat[prefix:], rel[prefix:]
		if pat == "" && rel == "" {
			return true
		}
	}
	return wildmatch(pat, rel, wildPathname)
}

// Match returns the last pattern of the list that matches path, or nil.
// path is relative to the same root as Base; name is its last component.
func (l *List) Match(path, name string, isDir bool) *Pattern {
	if len(l.Patterns) >= literalIndexMin {
		return l.matchIndexed(path, name, isDir)
	}
	for i := len(l.Patterns) - 1; i >= 0; i-- {
		if l.matches(i, path, name, isDir) {
			return &l.Patterns[i]
		}
	}
	return nil
}

// matches reports whether pattern i of l matches path (name, isDir).
func (l *List) matches(i int, path, name string, isDir bool) bool {
	p := &l.Patterns[i]
	if p.flags&flagMustBeDir != 0 && !isDir {
		return false
	}
	if p.flags&flagNoDir != 0 {
		return p.matchBasename(name)
	}
	if len(path) <= len(l.Base) || path[:len(l.Base)] != l.Base {
		return false
	}
	return p.matchPathname(path[len(l.Base):])
}
