package sessionref_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/dsh-refls/dsh-refls/internal/testfixtures"
	"github.com/dsh-refls/dsh-refls/sessionref"
)

// TestConformanceWithRecordedFixtures checks every session dsh recorded, in
// both the raw and the zstd store, against expected.json.
func TestConformanceWithRecordedFixtures(t *testing.T) {
	eachRecordedSession(t, testfixtures.Dir(t), func(t *testing.T, snap *sessionref.Snapshot, _, _ string, w testfixtures.Expected) {
		checkExpected(t, snap, w)
	})
}

// eachRecordedSession indexes the raw and the zstd store of a fixtures
// directory, checks that every session of its expected.json is indexed and
// none skipped, and runs check on each as a subtest (store/name), with the
// store's sessions root and name.
func eachRecordedSession(t *testing.T, dir string, check func(t *testing.T, snap *sessionref.Snapshot, root, store string, w testfixtures.Expected)) {
	want := testfixtures.LoadExpected(t, dir)
	for _, store := range []string{"raw", "zstd"} {
		t.Run(store, func(t *testing.T) {
			root := filepath.Join(dir, store, "sessions")
			ix := sessionref.NewIndex(root, sessionref.IndexOptions{})
			if err := ix.Build(context.Background(), nil); err != nil {
				t.Fatalf("Build: %v", err)
			}
			snap := ix.Snapshot()
			if len(snap.Skipped) != 0 {
				t.Errorf("skipped sessions: %+v", snap.Skipped)
			}
			if len(snap.Sessions) != len(want) {
				t.Errorf("indexed %d sessions, expected.json has %d", len(snap.Sessions), len(want))
			}
			for _, w := range want {
				t.Run(w.Name, func(t *testing.T) {
					check(t, snap, root, store, w)
				})
			}
		})
	}
}

func checkExpected(t *testing.T, snap *sessionref.Snapshot, w testfixtures.Expected) {
	e, ok := snap.Locate(w.SessionID)
	if !ok {
		t.Fatalf("session %s not indexed", w.SessionID)
	}
	if w.Title == nil {
		if e.HasTitle {
			t.Errorf("title = %q, want none", e.Title)
		}
	} else if !e.HasTitle || e.Title != *w.Title {
		t.Errorf("title = %q (has %v), want %q", e.Title, e.HasTitle, *w.Title)
	}
	if got := e.DisplayTitle(); got != w.DisplayTitle {
		t.Errorf("displayTitle = %q, want %q", got, w.DisplayTitle)
	}
	wantSeq := int64(-1)
	if w.CapturedThroughSeq != nil {
		wantSeq = *w.CapturedThroughSeq
	}
	if e.LastSeq != wantSeq {
		t.Errorf("last seq = %d, want %d", e.LastSeq, wantSeq)
	}
	if e.CreatedAt != w.CreatedAt {
		t.Errorf("createdAt = %d, want %d", e.CreatedAt, w.CreatedAt)
	}
	if (w.Cwd == nil) != !e.HasCwd || (w.Cwd != nil && *w.Cwd != e.Cwd) {
		t.Errorf("cwd = %q (has %v), want %v", e.Cwd, e.HasCwd, w.Cwd)
	}
	if got := sessionref.EncodeURI(w.SessionID); got != w.URI {
		t.Errorf("uri = %s, want %s", got, w.URI)
	}
	if got := sessionref.Mention(e.DisplayTitle(), w.SessionID); got != w.Mention {
		t.Errorf("mention = %s, want %s", got, w.Mention)
	}
	got, err := sessionref.SnapshotOf(context.Background(), snap, sessionref.Reference{SessionID: w.SessionID, Label: w.SessionID}, sessionref.DefaultReferenceBytes)
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
