//go:build linux

package prepare_test

import (
	"context"
	"testing"

	"github.com/dsh-refls/dsh-refls/sessionref"
	"github.com/dsh-refls/dsh-refls/sessionref/internal/storetest"
	"github.com/dsh-refls/dsh-refls/sessionref/prepare"
	"github.com/dsh-refls/dsh-refls/sessionref/titles"
)

// TestPrepareDoesNotFollowSymlinkedLogs places session logs that are
// symbolic links — to a file outside the root and to a well-formed log
// elsewhere — and a regular non-log file: nothing is prepared through them,
// by id or by mention, and no link target is opened.
func TestPrepareDoesNotFollowSymlinkedLogs(t *testing.T) {
	l := storetest.WriteLinked(t)
	snap := storetest.BuildIndex(t, l.Root, titles.IndexOptions{}).Snapshot()
	for _, id := range l.IDs {
		_, err := prepareOne(context.Background(), snap, id, prepare.Limits{})
		storetest.WantReadFailed(t, err, id)
	}
	text := "see " + sessionref.Mention("Elsewhere", l.IDs[0])
	if _, err := prepare.PrepareText(context.Background(), snap, storetest.TargetID, text, prepare.ModeReplace, nil, prepare.Limits{}); err == nil {
		t.Errorf("a mention of the linked session was prepared")
	}
	if got := l.Opens.Drain(t); len(got) > 0 {
		t.Errorf("link targets were opened: %v", got)
	}
	l.Opens.Control(t, l.Secret)
	checkPreparedUnchanged(t, snap)
}
