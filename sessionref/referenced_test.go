package sessionref_test

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/dsh-refls/dsh-refls/internal/dshgen"
	"github.com/dsh-refls/dsh-refls/sessionref"
	"github.com/dsh-refls/dsh-refls/sessionref/dshlog"
	"github.com/dsh-refls/dsh-refls/sessionref/internal/storetest"
	"github.com/dsh-refls/dsh-refls/sessionref/titles"
)

// TestReadReferenced reads a listed session as preparation does, at the
// moment of the request: what ReadProjection reads, with the header's cwd;
// and for a log that changed since the index listed it, or a request that
// ended, the contract's READ_FAILED naming the session or CANCELLED.
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
		{name: "log emptied", change: func(t *testing.T, path string) { must(t, os.Truncate(path, 0)) },
			code: sessionref.CodeReadFailed, says: "no complete header line"},
		{name: "log of another session", change: func(t *testing.T, path string) {
			must(t, dshgen.NewSession("someone-else").Cwd("/w").UserText("not this one").SaveAs(path, dshgen.Raw))
		}, code: sessionref.CodeReadFailed, says: `log header names session "someone-else"`},
		{name: "newer generation with another header version", change: func(t *testing.T, path string) {
			newer := filepath.Join(filepath.Dir(path), "session.v2.jsonl")
			must(t, dshgen.NewSession("read").Version(1).Cwd("/w").UserText("from v2").SaveAs(newer, dshgen.Raw))
		}, code: sessionref.CodeReadFailed, says: "generation 2 log has header version 1"},
		// A read stops at a cancelled request every cancelCheckLines
		// lines; whatever failure follows, the request is CANCELLED.
		{name: "cancelled", cancel: true, change: func(t *testing.T, path string) { must(t, os.RemoveAll(filepath.Dir(path))) },
			code: sessionref.CodeCancelled, says: "the request was cancelled"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "sessions")
			path, err := dshgen.NewSession("read").Cwd("/w").Turn(func(t *dshgen.Turn) {
				t.UserText("a question")
				t.AssistantText("an answer")
			}).Save(root, dshgen.Raw)
			must(t, err)
			e := storetest.MustLocate(t, storetest.BuildIndex(t, root, titles.IndexOptions{}).Snapshot(), "read")
			if tt.change != nil {
				tt.change(t, path)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tt.cancel {
				cancel()
			}
			p, err := sessionref.ReadReferenced(ctx, e, &dshlog.FrameDecoder{Concurrency: 1})
			if tt.code == "" {
				want, werr := sessionref.ReadProjection(context.Background(), e)
				if err != nil || werr != nil || !reflect.DeepEqual(p, want) || !p.HasCwd || p.Cwd != "/w" {
					t.Fatalf("ReadReferenced %+v, %v; want ReadProjection's %+v, %v, with cwd /w", p, err, want, werr)
				}
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

// TestErrorText: an *Error reads as its code and message, then its cause.
func TestErrorText(t *testing.T) {
	if got := sessionref.Errorf(sessionref.CodeTooMany, "%d sessions", 4).Error(); got != "SESSION_REFERENCE_TOO_MANY: 4 sessions" {
		t.Errorf("without a cause: %q", got)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if got := sessionref.Cancelled(ctx).Error(); got != "SESSION_REFERENCE_CANCELLED: the request was cancelled: context canceled" {
		t.Errorf("with a cause: %q", got)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
