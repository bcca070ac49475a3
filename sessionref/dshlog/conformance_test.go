package dshlog_test

import (
	"testing"

	"github.com/dsh-refls/dsh-refls/internal/testfixtures"
	"github.com/dsh-refls/dsh-refls/sessionref"
	"github.com/dsh-refls/dsh-refls/sessionref/internal/storetest"
	"github.com/dsh-refls/dsh-refls/sessionref/titles"
)

// TestConformanceWithRecordedFixtures checks every session dsh recorded, in
// both the raw and the zstd store, against expected.json.
func TestConformanceWithRecordedFixtures(t *testing.T) {
	storetest.EachRecordedSession(t, testfixtures.Dir(t), func(t *testing.T, snap *titles.Snapshot, _, _ string, w testfixtures.Expected) {
		checkExpected(t, snap, w)
	})
}

func checkExpected(t *testing.T, snap *titles.Snapshot, w testfixtures.Expected) {
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
}
