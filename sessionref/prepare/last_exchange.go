package prepare

import (
	"context"

	"github.com/dsh-refls/dsh-refls/sessionref"
	"github.com/dsh-refls/dsh-refls/sessionref/internal/jsjson"

	"github.com/dsh-refls/dsh-refls/sessionref/dshlog"
)

// Exchange is the end of a session's conversation as a reference to it
// would recall it (§2.3.3, before retention): the last direct user request
// and the last assistant answer after it. Compaction checkpoints are not
// requests; tool output, reasoning and plugin text are never projected.
type Exchange struct {
	Entry dshlog.Entry
	// Messages is the number of projected messages.
	Messages int
	// Request is the text of the last user request, "" when the session
	// has none; Answer the last assistant text after it (after the last
	// checkpoint when there is no request), "" when none followed. Both
	// are well-formed UTF-8.
	Request, Answer string
	// Redactions counts the secrets replaced in Request and Answer; nil
	// when redaction is off.
	Redactions *int
}

// LastExchange reads the session id as dsh/prepare would at this moment
// and returns its last request and answer, with secrets replaced as
// preparation replaces them when redact is on. It fails with an *Error
// for a session that is not listed or cannot be read, as preparation does.
func LastExchange(ctx context.Context, loc Locator, id string, redact bool) (*Exchange, error) {
	entry, ok := loc.Locate(id)
	if !ok {
		return nil, notInStore(id)
	}
	_, _, msgs, err := readSource(ctx, loc, sessionref.Reference{SessionID: id, Label: id}, &dshlog.FrameDecoder{Concurrency: 1})
	if ctx.Err() != nil {
		return nil, sessionref.Cancelled(ctx)
	}
	if err != nil {
		return nil, err
	}
	x := &Exchange{Entry: entry, Messages: len(msgs)}
	from := 0
	for i := len(msgs) - 1; i >= 0; i-- {
		if m := msgs[i]; m.role == dshlog.RoleUser {
			if !m.checkpoint {
				x.Request = m.original
			}
			from = i + 1
			break
		}
	}
	for i := len(msgs) - 1; i >= from; i-- {
		if msgs[i].role == dshlog.RoleAssistant {
			x.Answer = msgs[i].original
			break
		}
	}
	if redact {
		var n, m int
		x.Request, n = RedactSecrets(x.Request)
		x.Answer, m = RedactSecrets(x.Answer)
		total := n + m
		x.Redactions = &total
	}
	x.Request, x.Answer = jsjson.WellFormed(x.Request), jsjson.WellFormed(x.Answer)
	return x, nil
}
