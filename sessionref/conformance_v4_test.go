package sessionref_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/dsh-refls/dsh-refls/internal/testfixtures"
	"github.com/dsh-refls/dsh-refls/sessionref"
)

// TestConformanceWithRecordedV4Fixtures checks every format-v4 session dsh
// 0.2 recorded (../shared/fixtures-v4), in the raw and the zstd store,
// against every field of its expected.json.
func TestConformanceWithRecordedV4Fixtures(t *testing.T) {
	eachRecordedSession(t, testfixtures.DirV4(t), func(t *testing.T, snap *sessionref.Snapshot, root, store string, w testfixtures.Expected) {
		checkExpected(t, snap, w)
		checkExpectedV4(t, snap, root, store, w)
	})
}

// checkExpectedV4 checks the fields only the v4 set has.
func checkExpectedV4(t *testing.T, snap *sessionref.Snapshot, root, store string, w testfixtures.Expected) {
	e, ok := snap.Locate(w.SessionID)
	if !ok {
		t.Fatalf("session %s not indexed", w.SessionID)
	}
	if e.FormatVersion != w.FormatVersion {
		t.Errorf("format version %d, want %d", e.FormatVersion, w.FormatVersion)
	}
	wantFile := w.LogFile
	if store == "zstd" {
		wantFile += ".zstd"
	}
	if rel, err := filepath.Rel(root, e.Path); err != nil || rel != filepath.Join(filepath.FromSlash(w.RelativeDir), wantFile) {
		t.Errorf("log path %s, want %s/%s", rel, w.RelativeDir, wantFile)
	}
	if string(w.ReadFailed) != "null" {
		t.Fatalf("expected.json says readFailed %s; this test reads only readable logs", w.ReadFailed)
	}
	ref := sessionref.Reference{SessionID: w.SessionID, Label: w.SessionID}
	p, err := sessionref.Prepare(context.Background(), snap, "target-of-conformance", []sessionref.Reference{ref}, sessionref.Limits{})
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
	got, err := sessionref.SnapshotOf(context.Background(), snap, ref, w.SnapshotTruncated.MaxBytes)
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
