package sessionref

import (
	"context"
	"errors"
	"testing"
)

// TestLastExchange: the last direct request and the last assistant text
// after it; a checkpoint is no request, so only the answers after it
// count; a request without an answer has none; an unlisted session is
// READ_FAILED.
func TestLastExchange(t *testing.T) {
	s := newTestStore(t)
	s.simple("two-turns", "/p", 1, userMsg(0, "first"), assistantMsg(1, "one"), turnEnd(2), userMsg(3, "second"),
		assistantMsg(4, "almost"), assistantMsg(5, "done"), turnEnd(6))
	s.simple("compacted", "/p", 2, userMsg(0, "old"), assistantMsg(1, "old answer"), turnEnd(2), checkpointMsg(3, "summary"),
		assistantMsg(4, "after the summary"), turnEnd(5))
	s.simple("unanswered", "/p", 3, userMsg(0, "first"), assistantMsg(1, "one"), turnEnd(2), userMsg(3, "still waiting"), turnEnd(4))
	s.simple("secret", "/p", 4, userMsg(0, "token ghp_"+"aZ3kQ9aZ3kQ9aZ3kQ9aZ3kQ9aZ3kQ9aZ3kQ9"), assistantMsg(1, "ok"), turnEnd(2))
	snap := s.index().Snapshot()
	cases := []struct {
		id, request, answer string
		messages            int
	}{
		{"two-turns", "second", "done", 5},
		{"compacted", "", "after the summary", 4},
		{"unanswered", "still waiting", "", 3},
	}
	for _, c := range cases {
		x, err := LastExchange(context.Background(), snap, c.id, false)
		if err != nil {
			t.Fatalf("%s: %v", c.id, err)
		}
		if x.Request != c.request || x.Answer != c.answer || x.Messages != c.messages || x.Redactions != nil || x.Entry.ID != c.id {
			t.Errorf("%s: %+v, want request %q answer %q messages %d", c.id, x, c.request, c.answer, c.messages)
		}
	}
	x, err := LastExchange(context.Background(), snap, "secret", true)
	if err != nil || x.Redactions == nil || *x.Redactions != 1 || x.Request != "token [redacted: github-token]" {
		t.Errorf("secret: %+v, %v", x, err)
	}
	_, err = LastExchange(context.Background(), snap, "nonesuch", false)
	var e *Error
	if !errors.As(err, &e) || e.Code != CodeReadFailed {
		t.Errorf("unlisted: %v", err)
	}
}
