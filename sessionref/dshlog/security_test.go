//go:build linux

// The path-confinement test watches file opens with inotify, which only
// Linux has; the other checks here run wherever that one does.

package dshlog_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/dsh-refls/dsh-refls/sessionref/dshlog"
	"github.com/dsh-refls/dsh-refls/sessionref/dshlog/layout"
	"github.com/dsh-refls/dsh-refls/sessionref/internal/storetest"
	"github.com/dsh-refls/dsh-refls/sessionref/titles"
)

// checkConfined asserts that every listed session lies exactly at
// <root>/<project>/<layout.EncodeSegment(id)>/, and that the segment is one plain
// directory name.
func checkConfined(t *testing.T, snap *titles.Snapshot) {
	t.Helper()
	for _, e := range snap.Sessions {
		seg := layout.EncodeSegment(e.ID)
		want := filepath.Join(snap.Root, layout.ProjectDir(e.Cwd, e.HasCwd), seg)
		if filepath.Dir(e.Path) != want {
			t.Errorf("session %q read from %s, want a log in %s", e.ID, e.Path, want)
		}
		if seg == "." || seg == ".." || strings.ContainsAny(seg, "/\\\x00") {
			t.Errorf("layout.EncodeSegment(%q) = %q is not one plain directory name", e.ID, seg)
		}
	}
}

// TestHostileIDsStayInTheirDirectory writes sessions whose ids are path
// syntax, and tempting logs where a reader joining raw ids into paths would
// look (storetest.EachHostileStore). The index must read exactly
// layout.EncodeSegment(id) below the root and never open anything else:
// with only tempting logs present the ids are not listed. Opens are watched
// with inotify.
func TestHostileIDsStayInTheirDirectory(t *testing.T) {
	storetest.EachHostileStore(t, func(t *testing.T, snap *titles.Snapshot, withReal bool, opens *storetest.OpenWatch, forbidden []string) {
		checkConfined(t, snap)
		for _, id := range storetest.HostileIDs {
			if withReal || storetest.EncodedInPlace(id) {
				continue // a real log, or no tempting log was written: nothing to refuse
			}
			if _, ok := snap.Locate(id); ok {
				t.Errorf("%q is listed though only a tempting log exists", id)
			}
		}
		if got := opens.Drain(t); len(got) > 0 {
			t.Errorf("paths off the store layout were opened: %v", got)
		}
		opens.Control(t, forbidden[0])
		checkCandidatesUnchanged(t, snap)
	})
}

// TestLogsCarryNoMessageBodies builds and refreshes a store whose messages
// (healthy, corrupt, misplaced and unparsable alike) carry a marker
// (storetest.MarkedStore), with a logger at Info level: no entry, message
// or field may contain it, nor an error of reading a listed session as a
// reference.
func TestLogsCarryNoMessageBodies(t *testing.T) {
	core, logs := observer.New(zapcore.InfoLevel)
	snap := storetest.MarkedStore(t, titles.IndexOptions{Logger: zap.New(core)})
	// Errors of reading a session as a reference reach clients, and
	// servers log them: they are held to the same rule.
	for _, id := range storetest.MarkedIDs {
		if e, ok := snap.Locate(id); ok {
			if _, err := dshlog.ReadNewest(context.Background(), e, &dshlog.FrameDecoder{Concurrency: 1}); err != nil && strings.Contains(err.Error(), storetest.BodyMarker) {
				t.Errorf("the error reading %s quotes a message body: %v", id, err)
			}
		}
	}
	if logs.Len() == 0 {
		t.Fatal("nothing was logged at Info level: the skipped sessions must be logged, so the check below would prove nothing")
	}
	for _, e := range logs.All() {
		fields := zapcore.NewMapObjectEncoder()
		for _, f := range e.Context {
			f.AddTo(fields)
		}
		text := e.Message + " " + fmt.Sprint(fields.Fields)
		if strings.Contains(text, storetest.BodyMarker) {
			t.Errorf("%s log entry holds a message body: %s", e.Level, text)
		}
	}
	t.Logf("observed: %d log entries at Info and above, none with a body", logs.Len())
}
