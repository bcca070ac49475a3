package server

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/dsh-refls/dsh-refls/sessionref"
)

// TestAgesFollowTheInjectedClock checks that labelDetails and hover say
// how old a session is by Options.Now, not by the wall clock.
func TestAgesFollowTheInjectedClock(t *testing.T) {
	base := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	fake := newTestSessions(t, base)
	const lead = 26 * time.Hour
	opts := Options{OpenSessions: fake.factory, SessionsRoot: fake.root, Now: func() time.Time { return base.Add(lead) }}
	h := newHarness(t, opts)
	h.initialize(initOptions{labelDetails: true, settings: map[string]any{"sessionId": "s-target"}})
	waitStatus(t, h, func(st statusResult) bool { return !st.Building })

	alpha := fake.entry(t, "s-alpha")
	wantAge := fmt.Sprintf("%dh ago", int((lead + base.Sub(time.UnixMilli(alpha.CreatedAt))).Hours()))

	pos := h.open("file:///age.md", "@parser"+cursor, EncodingUTF16)
	var list wireList
	h.mustCall("textDocument/completion", map[string]any{"textDocument": map[string]any{"uri": "file:///age.md"}, "position": pos}, &list)
	found := false
	for _, it := range list.Items {
		if it.Label == "Fix the parser" {
			found = true
			if it.LabelDetails == nil || it.LabelDetails.Description != wantAge {
				t.Errorf("labelDetails %+v, want description %q", it.LabelDetails, wantAge)
			}
		}
	}
	if !found {
		t.Fatal("session not offered")
	}

	mention := sessionref.Mention("Fix the parser", "s-alpha")
	pos = h.open("file:///hover-age.md", "@[Fix"+cursor+mention[len("@[Fix"):], EncodingUTF16)
	var hv hoverResult
	h.mustCall("textDocument/hover", map[string]any{"textDocument": map[string]any{"uri": "file:///hover-age.md"}, "position": pos}, &hv)
	if want := "(" + wantAge + ")"; !strings.Contains(hv.Contents.Value, want) {
		t.Errorf("hover lacks the age %q:\n%s", want, hv.Contents.Value)
	}
}
