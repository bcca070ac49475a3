package dshlog_test

import (
	"path/filepath"
	"testing"

	"github.com/dsh-refls/dsh-refls/internal/testfixtures"
	"github.com/dsh-refls/dsh-refls/sessionref/internal/storetest"
	"github.com/dsh-refls/dsh-refls/sessionref/titles"
)

// TestConformanceWithRecordedV4Fixtures checks every format-v4 session dsh
// 0.2 recorded (../shared/fixtures-v4), in the raw and the zstd store,
// against every field of its expected.json.
func TestConformanceWithRecordedV4Fixtures(t *testing.T) {
	storetest.EachRecordedSession(t, testfixtures.DirV4(t), func(t *testing.T, snap *titles.Snapshot, root, store string, w testfixtures.Expected) {
		checkExpected(t, snap, w)
		checkExpectedV4(t, snap, root, store, w)
	})
}

// checkExpectedV4 checks the fields only the v4 set has.
func checkExpectedV4(t *testing.T, snap *titles.Snapshot, root, store string, w testfixtures.Expected) {
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
}
