package prepare_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/dsh-refls/dsh-refls/internal/testfixtures"
	"github.com/dsh-refls/dsh-refls/sessionref"
	"github.com/dsh-refls/dsh-refls/sessionref/internal/storetest"
	"github.com/dsh-refls/dsh-refls/sessionref/prepare"
	"github.com/dsh-refls/dsh-refls/sessionref/titles"
)

// TestPrepareConformanceWithRecordedFixtures prepares every session dsh
// recorded, in both the raw and the zstd store, and compares its snapshot
// with expected.json.
func TestPrepareConformanceWithRecordedFixtures(t *testing.T) {
	storetest.EachRecordedSession(t, testfixtures.Dir(t), func(t *testing.T, snap *titles.Snapshot, _, _ string, w testfixtures.Expected) {
		checkExpectedSnapshot(t, snap, w)
	})
}

// TestPrepareConformanceWithRecordedV4Fixtures prepares every format-v4
// session dsh 0.2 recorded (../shared/fixtures-v4), in the raw and the
// zstd store, and checks every preparation field of its expected.json.
func TestPrepareConformanceWithRecordedV4Fixtures(t *testing.T) {
	storetest.EachRecordedSession(t, testfixtures.DirV4(t), func(t *testing.T, snap *titles.Snapshot, _, _ string, w testfixtures.Expected) {
		checkExpectedSnapshot(t, snap, w)
		checkExpectedV4Preparation(t, snap, w)
	})
}

// checkExpectedSnapshot compares the snapshot of a session at the default
// budget with expected.json's snapshot65536.
func checkExpectedSnapshot(t *testing.T, snap *titles.Snapshot, w testfixtures.Expected) {
	got, err := prepare.SnapshotOf(context.Background(), snap, sessionref.Reference{SessionID: w.SessionID, Label: w.SessionID}, prepare.DefaultReferenceBytes)
	if err != nil {
		t.Fatalf("snapshot: %v", err)
	}
	gotJSON, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	if !testfixtures.SameJSON(t, gotJSON, w.Snapshot) {
		t.Errorf("snapshot65536 differs\n got: %s\nwant: %s", gotJSON, w.Snapshot)
	}
}

// checkExpectedV4Preparation checks the preparation fields only the v4
// set has.
func checkExpectedV4Preparation(t *testing.T, snap *titles.Snapshot, w testfixtures.Expected) {
	if string(w.ReadFailed) != "null" {
		t.Fatalf("expected.json says readFailed %s; this test reads only readable logs", w.ReadFailed)
	}
	ref := sessionref.Reference{SessionID: w.SessionID, Label: w.SessionID}
	p, err := prepare.Prepare(context.Background(), snap, "target-of-conformance", []sessionref.Reference{ref}, prepare.Limits{})
	if err != nil {
		t.Fatalf("Prepare: %v", err)
	}
	facts := p.Context.Source.References[0]
	if w.CapturedFormatVersion == nil || facts.CapturedFormatVersion == nil || *facts.CapturedFormatVersion != *w.CapturedFormatVersion {
		t.Errorf("capturedFormatVersion %v, want %v", facts.CapturedFormatVersion, w.CapturedFormatVersion)
	}
	if w.CapturedThroughSeq == nil || facts.CapturedThroughSeq == nil || *facts.CapturedThroughSeq != *w.CapturedThroughSeq {
		t.Errorf("capturedThroughSeq %v, want %v", facts.CapturedThroughSeq, w.CapturedThroughSeq)
	}
	if w.SnapshotTruncated == nil {
		t.Fatal("expected.json has no snapshotTruncated")
	}
	got, err := prepare.SnapshotOf(context.Background(), snap, ref, w.SnapshotTruncated.MaxBytes)
	if err != nil {
		t.Fatalf("snapshot at %d bytes: %v", w.SnapshotTruncated.MaxBytes, err)
	}
	gotStats, err := json.Marshal(got.Stats)
	if err != nil {
		t.Fatal(err)
	}
	if !testfixtures.SameJSON(t, got.Data, w.SnapshotTruncated.Data) {
		t.Errorf("snapshotTruncated data differs\n got: %s\nwant: %s", got.Data, w.SnapshotTruncated.Data)
	}
	if !testfixtures.SameJSON(t, gotStats, w.SnapshotTruncated.Stats) {
		t.Errorf("snapshotTruncated stats differ\n got: %s\nwant: %s", gotStats, w.SnapshotTruncated.Stats)
	}
}
