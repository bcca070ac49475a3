package prepare

import (
	"context"
	"errors"
	"testing"

	"github.com/dsh-refls/dsh-refls/sessionref"
	"github.com/dsh-refls/dsh-refls/sessionref/internal/logtest"
)

// TestLastExchange: the last direct request and the last assistant text
// after it; a checkpoint is no request, so only the answers after it
// count; a request without an answer has none; an unlisted session is
// READ_FAILED.
func TestLastExchange(t *testing.T) {
	s := logtest.NewStore(t)
	s.Simple("two-turns", "/p", 1, logtest.UserMsg(0, "first"), logtest.AssistantMsg(1, "one"), logtest.TurnEnd(2), logtest.UserMsg(3, "second"),
		logtest.AssistantMsg(4, "almost"), logtest.AssistantMsg(5, "done"), logtest.TurnEnd(6))
	s.Simple("compacted", "/p", 2, logtest.UserMsg(0, "old"), logtest.AssistantMsg(1, "old answer"), logtest.TurnEnd(2), logtest.CheckpointMsg(3, "summary"),
		logtest.AssistantMsg(4, "after the summary"), logtest.TurnEnd(5))
	s.Simple("unanswered", "/p", 3, logtest.UserMsg(0, "first"), logtest.AssistantMsg(1, "one"), logtest.TurnEnd(2), logtest.UserMsg(3, "still waiting"), logtest.TurnEnd(4))
	s.Simple("secret", "/p", 4, logtest.UserMsg(0, "token ghp_"+"aZ3kQ9aZ3kQ9aZ3kQ9aZ3kQ9aZ3kQ9aZ3kQ9"), logtest.AssistantMsg(1, "ok"), logtest.TurnEnd(2))
	snap := buildIndex(s).Snapshot()
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
	var e *sessionref.Error
	if !errors.As(err, &e) || e.Code != sessionref.CodeReadFailed {
		t.Errorf("unlisted: %v", err)
	}
}
