package render

import (
	"strings"
	"testing"
)

// hostileTitle is a title that tries to end its span and inject HTML and a
// link.
const hostileTitle = "x `a`\n\n<img src=x onerror=alert(1)>\n\n[click](https://evil.example/) https://evil.example/"

// TestMarkdownQuotingIsInert: titles, cwds and ids quoted for Markdown stay
// on one line (a blank line would end the span), keep HTML escaped or in
// code, and titles show no bare URL a renderer would link (code spans are
// never linked).
func TestMarkdownQuotingIsInert(t *testing.T) {
	for name, out := range map[string]string{
		"inline code": InlineCode(hostileTitle, true),
		"title":       Escape(hostileTitle),
	} {
		if strings.ContainsAny(out, "\r\n") {
			t.Errorf("%s %q spans lines", name, out)
		}
	}
	q := InlineCode(hostileTitle, true)
	if !strings.HasPrefix(q, "``") || !strings.HasSuffix(q, "``") || strings.Contains(q[2:len(q)-2], "``") {
		t.Errorf("inline code %q is not one span fenced longer than its backtick runs", q)
	}
	e := Escape(hostileTitle)
	if strings.Contains(e, "https://") {
		t.Errorf("title %q holds a bare URL", e)
	}
	for _, c := range "<>[]()`" {
		for i := strings.IndexRune(e, c); i >= 0; i = indexFrom(e, c, i+1) {
			if i == 0 || e[i-1] != '\\' {
				t.Errorf("title %q keeps %q unescaped at byte %d", e, c, i)
			}
		}
	}
}

// indexFrom is the index of c in s at or after from, or -1.
func indexFrom(s string, c rune, from int) int {
	if j := strings.IndexRune(s[from:], c); j >= 0 {
		return from + j
	}
	return -1
}
