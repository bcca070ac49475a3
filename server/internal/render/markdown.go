package render

import "strings"

// longestBacktickRun returns the length of the longest run of backticks in s.
func longestBacktickRun(s string) int {
	longest, run := 0, 0
	for _, r := range s {
		if r == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	return longest
}

// Fence returns a backtick fence longer than any backtick run in s.
func Fence(s string) string {
	return strings.Repeat("`", max(3, longestBacktickRun(s)+1))
}

// InlineCode writes s as inline code in Markdown (with a delimiter longer
// than any backtick run in it), or as is in plain text.
func InlineCode(s string, markdown bool) string {
	if !markdown {
		return s
	}
	// A blank line would end the code span and let the rest render as
	// Markdown and HTML; inside a span a line break is a space anyway.
	s = OneLine(s)
	d := strings.Repeat("`", longestBacktickRun(s)+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		return d + " " + s + " " + d
	}
	return d + s + d
}

// OneLine replaces every line break of s with a space.
func OneLine(s string) string {
	return strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ", "\u2028", " ", "\u2029", " ").Replace(s)
}

// Escape escapes characters that would format a title, keeps it on one
// line, and breaks "://" with a zero-width space so that a renderer that
// links bare URLs (VS Code's does) shows no live link.
func Escape(s string) string {
	s = strings.ReplaceAll(OneLine(s), "://", ":/\u200b/")
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune("\\`*_{}[]()#+-.!|<>~", r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Title is a session title in a preview: bold and escaped in Markdown, on
// one line in plain text.
func Title(title string, markdown bool) string {
	if markdown {
		return "**" + Escape(title) + "**"
	}
	return OneLine(title)
}
