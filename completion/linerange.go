package completion

import (
	"strconv"
	"strings"
)

// LineRange is the line range of a file mention, `#L10` or `#L10-20`
// (`#L10-L20` is read the same). Lines are numbered from 1; End equals
// Start for a single line. A range as written may be reversed or start at
// 0: Valid says whether it is usable, diagnostics say why not.
type LineRange struct {
	Start, End int
}

// Valid reports whether the range names at least one line in order.
func (r LineRange) Valid() bool { return r.Start >= 1 && r.End >= r.Start }

// String writes the range as it is written after `#`: "L10" or "L10-20".
func (r LineRange) String() string {
	if r.End == r.Start {
		return "L" + strconv.Itoa(r.Start)
	}
	return "L" + strconv.Itoa(r.Start) + "-" + strconv.Itoa(r.End)
}

// maxLineNumber bounds a line number as written, so that a run of digits
// never overflows: no text file a prompt mentions has more lines.
const maxLineNumber = 1 << 30

// parseLineRange reads a range written after `#` ("L10", "L10-20",
// "L10-L20"); ok is false for anything else, which then stays part of the
// path.
func parseLineRange(s string) (LineRange, bool) {
	rest, ok := strings.CutPrefix(s, "L")
	if !ok {
		return LineRange{}, false
	}
	a, b, two := strings.Cut(rest, "-")
	start, ok := lineNumber(a)
	if !ok {
		return LineRange{}, false
	}
	if !two {
		return LineRange{Start: start, End: start}, true
	}
	end, ok := lineNumber(strings.TrimPrefix(b, "L"))
	if !ok {
		return LineRange{}, false
	}
	return LineRange{Start: start, End: end}, true
}

// lineNumber reads a run of ASCII digits.
func lineNumber(s string) (int, bool) {
	if s == "" || len(s) > 10 {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.Atoi(s)
	if err != nil || n > maxLineNumber {
		return 0, false
	}
	return n, true
}

// splitLineRange splits a trailing `#L…` range off an unquoted mention's
// text: "a.go#L3" gives "a.go" and L3. Text with no well-formed range is
// returned whole.
func splitLineRange(text string) (string, *LineRange) {
	i := strings.LastIndexByte(text, '#')
	if i <= 0 {
		return text, nil
	}
	r, ok := parseLineRange(text[i+1:])
	if !ok {
		return text, nil
	}
	return text[:i], &r
}

// RangeToken is a line range being typed after a complete file mention:
// `@a.go#`, `@a.go#L1`, `@"a b.go"#L2-`.
type RangeToken struct {
	// Mention is the file mention the range belongs to (without range).
	Mention Mention
	// Hash is the byte offset of the `#`; End is just past the range text
	// typed so far and whatever range characters follow the cursor.
	Hash, End int
}

// isRangeByte reports whether b can appear in a range being typed.
func isRangeByte(b byte) bool { return b == 'L' || b == '-' || (b >= '0' && b <= '9') }

// RangeAt returns the line range being written at byte offset cursor of
// line: the cursor follows `#` and range characters (`L`, digits, `-`),
// and the `#` directly follows a complete file mention.
func RangeAt(line string, cursor int) (RangeToken, bool) {
	if cursor < 0 || cursor > len(line) {
		return RangeToken{}, false
	}
	hash := cursor
	for hash > 0 && isRangeByte(line[hash-1]) {
		hash--
	}
	if hash == 0 || line[hash-1] != '#' {
		return RangeToken{}, false
	}
	hash--
	typed := line[hash+1 : cursor]
	if strings.Count(typed, "L") > 2 || strings.Count(typed, "-") > 1 || (typed != "" && typed[0] != 'L') {
		return RangeToken{}, false
	}
	mentions := FileMentions(line[:hash])
	if len(mentions) == 0 {
		return RangeToken{}, false
	}
	last := mentions[len(mentions)-1]
	if last.End != hash || last.Lines != nil {
		return RangeToken{}, false
	}
	end := cursor
	for end < len(line) && isRangeByte(line[end]) {
		end++
	}
	return RangeToken{Mention: last, Hash: hash, End: end}, true
}
