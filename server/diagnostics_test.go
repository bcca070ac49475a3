package server

import (
	"strings"
	"testing"

	"github.com/dsh-refls/dsh-refls/sessionref"
)

// TestEveryMentionPastMaxReferences: with maxReferences 1, every mention of
// a session past the first one is too many, repeated mentions included;
// mentions of the first session are not.
func TestEveryMentionPastMaxReferences(t *testing.T) {
	opts, fake, ws := testOptions(t)
	h := newHarness(t, opts)
	h.initialize(initOptions{root: ws, settings: map[string]any{"sessionId": "s-target", "maxReferences": 1}})
	fake.waitBuilt(t)
	m := sessionref.Mention
	lines := []string{
		"first " + m("a", "s-alpha"),
		"second " + m("b", "s-beta"),
		"second again " + m("b", "s-beta"),
		"third " + m("g", "s-gamma"),
		"first again " + m("a", "s-alpha"),
	}
	h.open("file:///many.md", strings.Join(lines, "\n"), EncodingUTF16)
	p := h.diagnosticsFor("file:///many.md", 1)
	var got []int
	for _, d := range p.Diagnostics {
		if d.Code != string(sessionref.CodeTooMany) {
			t.Errorf("unexpected diagnostic %+v", d)
			continue
		}
		got = append(got, d.Range.Start.Line)
	}
	if want := []int{1, 2, 3}; len(got) != len(want) || got[0] != 1 || got[1] != 2 || got[2] != 3 {
		t.Errorf("TOO_MANY on lines %v, want %v", got, want)
	}
}
