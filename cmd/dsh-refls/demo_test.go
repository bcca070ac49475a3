package main

import (
	"bytes"
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
		"originalMessages: 3",                         // hover facts
		"compacted: true",                             // the store's checkpoint
		"@Add rate limiting to the API and add tests", // the prepared message
		"<referenced-sessions>",                       // the snapshot
	} {
		if !strings.Contains(out, want) {
			t.Errorf("demo output lacks %q:\n%s", want, out)
		}
	}
	if strings.Index(out, "originalMessages") > strings.Index(out, "Excerpt") {
		t.Error("hover shows the excerpt before the facts")
	}
}
