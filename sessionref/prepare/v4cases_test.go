package prepare_test

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/dsh-refls/dsh-refls/internal/dshgen"
	"github.com/dsh-refls/dsh-refls/sessionref/internal/storetest"
	"github.com/dsh-refls/dsh-refls/sessionref/prepare"
	"github.com/dsh-refls/dsh-refls/sessionref/titles"
)

// TestPrepareGeneratedV4Cases prepares one generated v4 session per rule
// of SPEC §1.7 (projection, a range-pair checkpoint, an open turn with a
// started and an unstarted tool call, descriptor and catalogue labels,
// unknown log-only types, each refusal) and the v0+v4 pairs dsh leaves
// when it resumes a session, raw and zstd.
func TestPrepareGeneratedV4Cases(t *testing.T) {
	storetest.EachGenerated(t, storetest.WriteV4Cases, nil, func(t *testing.T, snap *titles.Snapshot, want dshgen.Expected) {
		p, ok := prepareGenerated(t, snap, want, true)
		if !ok {
			return
		}
		f := p.Facts[0]
		if f.CapturedFormatVersion == nil || *f.CapturedFormatVersion != 4 || f.Compacted != want.Compacted {
			t.Errorf("facts %+v, want capturedFormatVersion 4, compacted %v", f, want.Compacted)
		}
		preview, err := prepare.PreviewSession(context.Background(), snap, want.ID, prepare.Limits{})
		if err != nil || preview.Err != nil || !reflect.DeepEqual(preview.CapturedThroughSeq, want.CapturedThroughSeq()) {
			t.Errorf("preview %+v, %v; want capturedThroughSeq %v", preview, err, deref(want.CapturedThroughSeq()))
		}
	})
}

// prepareGenerated prepares the generated session want: a log dsh refuses
// is READ_FAILED naming the rule, which must be known when named is set
// (ok is then false); another prepares to the conversation the generator
// recorded.
func prepareGenerated(t *testing.T, snap *titles.Snapshot, want dshgen.Expected, named bool) (p prepared, ok bool) {
	t.Helper()
	p, err := prepareOne(context.Background(), snap, want.ID, prepare.Limits{})
	if !want.Preparable {
		e := storetest.WantReadFailed(t, err, want.ID)
		if named && want.Refusal == "" || !strings.Contains(e.Error(), want.Refusal) {
			t.Errorf("READ_FAILED %q does not name the rule %q", e.Error(), want.Refusal)
		}
		return p, false
	}
	if err != nil {
		t.Fatalf("Prepare: %v", err)
	}
	snaps := promptSnapshots(t, p.Prompt)
	if len(snaps) != 1 {
		t.Fatalf("%d snapshots", len(snaps))
	}
	checkConversation(t, snaps[0], want)
	return p, true
}
