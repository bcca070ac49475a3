package sessionref_test

import (
	"context"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/dsh-refls/dsh-refls/internal/dshgen"
	"github.com/dsh-refls/dsh-refls/sessionref"
)

// TestGeneratedV4Cases reads one generated v4 session per rule of SPEC
// §1.7 (projection, a range-pair checkpoint, an open turn with a started
// and an unstarted tool call, descriptor and catalogue labels, unknown
// log-only types, each refusal) and the v0+v4 pairs dsh leaves when it
// resumes a session, raw and zstd.
func TestGeneratedV4Cases(t *testing.T) {
	for _, enc := range []dshgen.Encoding{dshgen.Raw, dshgen.Zstd} {
		t.Run(enc.String(), func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "sessions")
			cases, err := dshgen.V4Cases(root, enc)
			if err != nil {
				t.Fatal(err)
			}
			for i, title := range []string{"Parser release", "Release plan"} {
				pair, err := dshgen.MigratedPair(root, "migrated-"+enc.String()+"-"+string(rune('a'+i)), "/work/cases/migrated", enc, title)
				if err != nil {
					t.Fatal(err)
				}
				cases = append(cases, pair)
			}
			snap := buildIndex(t, root, sessionref.IndexOptions{}).Snapshot()
			if len(snap.Skipped) != 0 || len(snap.Sessions) != len(cases) {
				t.Fatalf("listed %d sessions of %d, skipped %+v", len(snap.Sessions), len(cases), snap.Skipped)
			}
			// One log-only unknown event, and the unknown surface event of
			// the refused case: the index counts every unknown type it sees.
			if snap.UnknownEvents != 2 {
				t.Errorf("unknown events %d, want 2", snap.UnknownEvents)
			}
			for _, want := range cases {
				t.Run(want.ID, func(t *testing.T) {
					checkListed(t, snap, want, true)
					p, err := prepareOne(context.Background(), snap, want.ID, sessionref.Limits{})
					if !want.Preparable {
						e := wantReadFailed(t, err, want.ID)
						if want.Refusal == "" || !strings.Contains(e.Error(), want.Refusal) {
							t.Errorf("READ_FAILED %q does not name the rule %q", e.Error(), want.Refusal)
						}
						return
					}
					if err != nil {
						t.Fatalf("Prepare: %v", err)
					}
					snaps := promptSnapshots(t, p.Prompt)
					if len(snaps) != 1 {
						t.Fatalf("%d snapshots", len(snaps))
					}
					checkConversation(t, snaps[0], want)
					f := p.Facts[0]
					if f.CapturedFormatVersion == nil || *f.CapturedFormatVersion != 4 || f.Compacted != want.Compacted {
						t.Errorf("facts %+v, want capturedFormatVersion 4, compacted %v", f, want.Compacted)
					}
					preview, err := sessionref.PreviewSession(context.Background(), snap, want.ID, sessionref.Limits{})
					if err != nil || preview.Err != nil || !reflect.DeepEqual(preview.CapturedThroughSeq, want.CapturedThroughSeq()) {
						t.Errorf("preview %+v, %v; want capturedThroughSeq %v", preview, err, deref(want.CapturedThroughSeq()))
					}
				})
			}
		})
	}
}
