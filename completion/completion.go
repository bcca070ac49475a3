// Package completion finds the `@` token under the cursor in one line of
// text and decides how a chosen candidate is written back (§3 of the
// contract). It knows nothing about the protocol: offsets are byte offsets
// into the line, and the server converts them to editor positions.
package completion

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/dsh-refls/dsh-refls/fileref"
)

// Token is the `@…` text around the cursor that a completion replaces.
type Token struct {
	// Start is the byte offset of the `@`.
	Start int
	// Cursor is the byte offset of the cursor inside the token.
	Cursor int
	// End is the byte offset just past the whole token, which may extend
	// beyond the cursor (the rest of the word, or a closing quote).
	End int
	// Query is the text between the `@` (or `@"`) and the cursor.
	Query string
	// Quoted is true for an opened `@"` token.
	Quoted bool
}

// isBoundary reports whether a token may start at byte offset i of line:
// at the line start or right after whitespace, so `a@b.c` is no trigger.
func isBoundary(line string, i int) bool {
	if i == 0 {
		return true
	}
	r, _ := utf8.DecodeLastRuneInString(line[:i])
	return unicode.IsSpace(r)
}

// At returns the `@` token that contains the cursor at byte offset cursor of
// line, or false when the cursor is not in one. A session mention already
// written as `@[label](uri)` is not a completion token.
func At(line string, cursor int) (Token, bool) {
	if cursor < 0 || cursor > len(line) {
		return Token{}, false
	}
	// The unquoted form: the run of non-space characters ending at the cursor.
	runStart := cursor
	for runStart > 0 {
		r, size := utf8.DecodeLastRuneInString(line[:runStart])
		if unicode.IsSpace(r) {
			break
		}
		runStart -= size
	}
	run := line[runStart:cursor]
	if strings.HasPrefix(run, "@") && !strings.HasPrefix(run, "@[") {
		if strings.HasPrefix(run, `@"`) {
			if !strings.Contains(run[2:], `"`) {
				return quotedToken(line, runStart, cursor), true
			}
		} else {
			end := cursor
			for end < len(line) {
				r, size := utf8.DecodeRuneInString(line[end:])
				if unicode.IsSpace(r) {
					break
				}
				end += size
			}
			return Token{Start: runStart, Cursor: cursor, End: end, Query: run[1:]}, true
		}
	}
	// The quoted form may contain spaces: the nearest `@"` before the cursor
	// at a boundary, with no closing quote between it and the cursor.
	for i := strings.LastIndex(line[:cursor], `@"`); i >= 0; i = strings.LastIndex(line[:i], `@"`) {
		if strings.Contains(line[i+2:cursor], `"`) {
			return Token{}, false
		}
		if isBoundary(line, i) {
			return quotedToken(line, i, cursor), true
		}
	}
	return Token{}, false
}

// quotedToken builds the token of an opened quote at start; it ends at the
// closing quote (inclusive) when one follows on the line, else at the end of
// the word under the cursor.
func quotedToken(line string, start, cursor int) Token {
	end := cursor
	if q := strings.IndexByte(line[cursor:], '"'); q >= 0 {
		end = cursor + q + 1
	} else {
		for end < len(line) {
			r, size := utf8.DecodeRuneInString(line[end:])
			if unicode.IsSpace(r) {
				break
			}
			end += size
		}
	}
	return Token{Start: start, Cursor: cursor, End: end, Query: line[start+2 : cursor], Quoted: true}
}

// Offerable reports whether a workspace path may be offered at all: paths
// with control characters or `"` can be written neither bare nor quoted.
func Offerable(path string) bool {
	for _, r := range path {
		if r == '"' || unicode.IsControl(r) {
			return false
		}
	}
	return path != ""
}

// InsertFile is the text that replaces the token when a file candidate is
// chosen (§3): directories end in `/`; a path with whitespace, or a token
// whose quote the user opened, is written `@"path"`, and a quoted directory
// keeps its quote open so completion can descend into it.
func InsertFile(path string, kind fileref.Kind, quoted bool) string {
	if kind == fileref.KindDirectory && !strings.HasSuffix(path, "/") {
		path += "/"
	}
	if quoted || strings.IndexFunc(path, unicode.IsSpace) >= 0 {
		if kind == fileref.KindDirectory {
			return `@"` + path
		}
		return `@"` + path + `"`
	}
	return "@" + path
}

// Mention is a file mention found in a line.
type Mention struct {
	// Start and End are byte offsets of the whole mention, `@` included.
	Start, End int
	// Path is the mentioned path, without the `@`, quotes and line range.
	Path string
	// Quoted is true for a mention written `@"path"`.
	Quoted bool
	// Lines is the line range written after the path (`#L10`, `#L10-20`),
	// nil when there is none.
	Lines *LineRange
}

// FileMentions finds the complete file mentions in line: `@path` or
// `@"path"` at a boundary, each optionally followed by a line range
// `#L10` or `#L10-20`. Session mentions (`@[label](uri)`), a lone `@` and
// unclosed quotes are not file mentions.
func FileMentions(line string) []Mention {
	var out []Mention
	for i := 0; i < len(line); {
		at := strings.IndexByte(line[i:], '@')
		if at < 0 {
			break
		}
		at += i
		i = at + 1
		if !isBoundary(line, at) || at+1 >= len(line) {
			continue
		}
		switch line[at+1] {
		case '[':
			continue
		case '"':
			q := strings.IndexByte(line[at+2:], '"')
			if q <= 0 {
				continue
			}
			end := at + 2 + q + 1
			men := Mention{Start: at, End: end, Path: line[at+2 : end-1], Quoted: true}
			if end < len(line) && line[end] == '#' {
				r := end + 1
				for r < len(line) && isRangeByte(line[r]) {
					r++
				}
				written := strings.TrimRight(line[end+1:r], "-")
				if lr, ok := parseLineRange(written); ok {
					men.Lines = &lr
					men.End = end + 1 + len(written)
				}
			}
			out = append(out, men)
			i = men.End
		default:
			end := at + 1
			for end < len(line) {
				r, size := utf8.DecodeRuneInString(line[end:])
				if unicode.IsSpace(r) {
					break
				}
				end += size
			}
			path := strings.TrimRight(line[at+1:end], ".,;:!?)")
			if path == "" {
				continue
			}
			p, lr := splitLineRange(path)
			out = append(out, Mention{Start: at, End: at + 1 + len(path), Path: p, Lines: lr})
			i = end
		}
	}
	return out
}
