package server

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/dsh-refls/dsh-refls/sessionref"
)

// TestFileMentionLinks: existing files link to their file URI with the line
// range as fragment; directories, missing and outside paths do not link;
// session mentions keep their preview links.
func TestFileMentionLinks(t *testing.T) {
	opts, _, ws := testOptions(t)
	writeLinesFile(t, ws, "src/lines.txt", 30, "")
	h := newHarness(t, opts)
	h.initialize(initOptions{root: ws})
	h.waitReady(t)
	mention := sessionref.Mention("p", "s-alpha")
	line := `😀 @src/lines.txt#L10-20 @"my docs/guide.md" @src @nope.md @../x ` + mention + " @README.md#L2"
	const uri = "file:///links.md"
	h.open(uri, "first line\n"+line, EncodingUTF16)
	var links []documentLink
	h.mustCall("textDocument/documentLink", map[string]any{"textDocument": map[string]any{"uri": uri}}, &links)
	want := map[string]string{
		"@src/lines.txt#L10-20": pathToURI(filepath.Join(ws, "src", "lines.txt")) + "#L10-20",
		`@"my docs/guide.md"`:   pathToURI(filepath.Join(ws, "my docs", "guide.md")),
		"@README.md#L2":         pathToURI(filepath.Join(ws, "README.md")) + "#L2",
		mention:                 PreviewURI("s-alpha", "Fix the parser"),
	}
	got := map[string]string{}
	for _, l := range links {
		got[textInRange(t, line, l.Range, EncodingUTF16)] = l.Target
	}
	if len(got) != len(want) || len(links) != len(want) {
		t.Errorf("links over %q, want over %q", keysS(got), keysS(want))
	}
	for span, target := range want {
		if got[span] != target {
			t.Errorf("link over %q = %q, want %q", span, got[span], target)
		}
	}
	if !strings.Contains(want[`@"my docs/guide.md"`], "my%20docs") {
		t.Errorf("file URI not escaped: %s", want[`@"my docs/guide.md"`])
	}
}

func keysS(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
