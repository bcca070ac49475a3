package main

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

func TestDemo(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := runDemo(nil, &stdout, &stderr); code != 0 {
		t.Fatalf("demo exited %d: %s", code, stderr.String())
	}
	out := stdout.String()
	for _, want := range []string{
		"session  Add rate limiting to the API",       // completion offers the session
		`@"design notes/rate plan.md"`,                // and a quoted file
		"all 3 messages kept",                         // hover facts
		" · compacted · ",                             // the store's checkpoint
		"@Add rate limiting to the API and add tests", // the prepared message
		"<referenced-sessions>",                       // the snapshot
	} {
		if !strings.Contains(out, want) {
			t.Errorf("demo output lacks %q:\n%s", want, out)
		}
	}
	// The demo clock stands demoClockLead after the newest session, so
	// that session reads as that old and none as weeks old.
	if want := fmt.Sprintf(" %dh ago", int(demoClockLead.Hours())); !strings.Contains(out, want) {
		t.Errorf("demo output lacks the newest session's age %q:\n%s", want, out)
	}
	if strings.Contains(out, "28d ago") || !strings.Contains(out, "(2d ago)") {
		t.Errorf("demo ages do not follow the demo clock:\n%s", out)
	}
	if strings.Index(out, "messages kept") > strings.Index(out, "Excerpt") {
		t.Error("hover shows the excerpt before the facts")
	}
}
