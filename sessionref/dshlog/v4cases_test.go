package dshlog_test

import (
	"context"
	"strings"
	"testing"

	"github.com/dsh-refls/dsh-refls/internal/dshgen"
	"github.com/dsh-refls/dsh-refls/sessionref/dshlog"
	"github.com/dsh-refls/dsh-refls/sessionref/internal/storetest"
	"github.com/dsh-refls/dsh-refls/sessionref/titles"
)

// TestGeneratedV4Cases reads one generated v4 session per rule of SPEC
// §1.7 (projection, a range-pair checkpoint, an open turn with a started
// and an unstarted tool call, descriptor and catalogue labels, unknown
// log-only types, each refusal) and the v0+v4 pairs dsh leaves when it
// resumes a session, raw and zstd.
func TestGeneratedV4Cases(t *testing.T) {
	storetest.EachGenerated(t, storetest.WriteV4Cases, func(t *testing.T, snap *titles.Snapshot) {
		// One log-only unknown event, and the unknown surface event of
		// the refused case: the index counts every unknown type it sees.
		if snap.UnknownEvents != 2 {
			t.Errorf("unknown events %d, want 2", snap.UnknownEvents)
		}
	}, func(t *testing.T, snap *titles.Snapshot, want dshgen.Expected) {
		checkReadRefusal(t, storetest.CheckListed(t, snap, want, true), want)
	})
}

// checkReadRefusal reads the session of e as a reference is read: a
// session dsh refuses fails naming the rule, another reads.
func checkReadRefusal(t *testing.T, e dshlog.Entry, want dshgen.Expected) {
	t.Helper()
	_, err := dshlog.ReadNewest(context.Background(), e, &dshlog.FrameDecoder{Concurrency: 1})
	if want.Preparable {
		if err != nil {
			t.Fatalf("ReadNewest: %v", err)
		}
		return
	}
	if err == nil || !strings.Contains(err.Error(), want.Refusal) {
		t.Errorf("read error %v does not name the rule %q", err, want.Refusal)
	}
}
