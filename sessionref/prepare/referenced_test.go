package prepare_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dsh-refls/dsh-refls/internal/dshgen"
	"github.com/dsh-refls/dsh-refls/sessionref"
	"github.com/dsh-refls/dsh-refls/sessionref/dshlog"
	"github.com/dsh-refls/dsh-refls/sessionref/internal/storetest"
	"github.com/dsh-refls/dsh-refls/sessionref/prepare"
)

// TestReadReferenced reads a listed session as preparation does, at the
// moment of the request: what ReadProjection reads, with the header's cwd;
// and for a log that cannot be read, or a request that ended, the
// contract's READ_FAILED naming the session (and saying why for a newer
// dsh's log) or CANCELLED. Why each read fails is the reader's test
// (dshlog's TestReadNewest).
func TestReadReferenced(t *testing.T) {
	tests := []struct {
		name string
		// change alters the store after indexing; nil leaves it readable.
		change func(t *testing.T, path string)
		// cancel ends the request before the read.
		cancel bool
		// code is the error's code, says what its text holds.
		code sessionref.Code
		says string
	}{
		{name: "readable"},
		{name: "log removed", change: func(t *testing.T, path string) { must(t, os.Remove(path)) },
			code: sessionref.CodeReadFailed, says: "its session log has vanished"},
		{name: "directory removed", change: func(t *testing.T, path string) { must(t, os.RemoveAll(filepath.Dir(path))) },
			code: sessionref.CodeReadFailed, says: "could not be read"},
		{name: "newer dsh", change: func(t *testing.T, path string) {
			must(t, dshgen.NewSession("read").Version(5).Cwd("/w").UserText("from v5").SaveAs(path, dshgen.Raw))
		}, code: sessionref.CodeReadFailed, says: "session read was written by a newer dsh and cannot be recalled: log format version 5"},
		// A read stops at a cancelled request every cancelCheckLines
		// lines; whatever failure follows, the request is CANCELLED.
		{name: "cancelled", cancel: true, change: func(t *testing.T, path string) { must(t, os.RemoveAll(filepath.Dir(path))) },
			code: sessionref.CodeCancelled, says: "the request was cancelled"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path, e := storetest.ListedSession(t)
			if tt.change != nil {
				tt.change(t, path)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tt.cancel {
				cancel()
			}
			p, err := prepare.ReadReferenced(ctx, e, &dshlog.FrameDecoder{Concurrency: 1})
			if tt.code == "" {
				storetest.WantListedRead(t, e, p, err)
				return
			}
			if sessionref.CodeOf(err) != tt.code || !strings.Contains(err.Error(), tt.says) || p != nil {
				t.Fatalf("ReadReferenced: %+v, %v; want %s saying %q", p, err, tt.code, tt.says)
			}
			if re := err.(*sessionref.Error); tt.code == sessionref.CodeReadFailed && (re.SessionID != "read" || !strings.Contains(re.Message, "session read")) {
				t.Errorf("READ_FAILED does not name the session: %+v", re)
			}
		})
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
