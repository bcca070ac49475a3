//go:build linux

package dshlog_test

import (
	"strings"
	"testing"

	"github.com/dsh-refls/dsh-refls/sessionref/internal/storetest"
	"github.com/dsh-refls/dsh-refls/sessionref/titles"
)

// TestSymlinkedLogsAreNotFollowed places session logs that are symbolic
// links — to a file outside the root and to a well-formed log elsewhere —
// and a regular non-log file: the links are skipped as links without being
// opened, nothing is listed through them, and no skip reason quotes a byte
// of any file.
func TestSymlinkedLogsAreNotFollowed(t *testing.T) {
	l := storetest.WriteLinked(t)
	ix := storetest.BuildIndex(t, l.Root, titles.IndexOptions{})
	snap := ix.Snapshot()
	reasons := map[string]string{}
	for _, s := range snap.Skipped {
		reasons[s.Path] = s.Reason
		if strings.Contains(s.Reason, "Q") || strings.Contains(s.Reason, "secret") || strings.Contains(s.Reason, "ELSEWHERE") {
			t.Errorf("skip reason of %s quotes file bytes: %q", s.Path, s.Reason)
		}
	}
	for _, dir := range l.LinkDirs {
		if r := reasons[dir]; !strings.Contains(r, "symbolic link") {
			t.Errorf("%s: skip reason %q, want it to name the symbolic link", dir, r)
		}
	}
	if r := reasons[l.PlainDir]; !strings.Contains(r, "header unreadable") {
		t.Errorf("%s: skip reason %q, want an unreadable header", l.PlainDir, r)
	}
	for _, id := range l.IDs {
		if _, ok := snap.Locate(id); ok {
			t.Errorf("%q is listed", id)
		}
	}
	if got := l.Opens.Drain(t); len(got) > 0 {
		t.Errorf("link targets were opened: %v", got)
	}
	l.Opens.Control(t, l.Secret)
	checkCandidatesUnchanged(t, snap)
}
