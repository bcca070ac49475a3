package dshlog_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dsh-refls/dsh-refls/internal/dshgen"
	"github.com/dsh-refls/dsh-refls/sessionref/dshlog"
	"github.com/dsh-refls/dsh-refls/sessionref/internal/storetest"
)

// TestReadNewest reads a listed session as preparation does, at the
// moment of the request: what ReadProjection reads, with the header's cwd;
// and for a log that changed since the index listed it an error saying
// why, a *NewerVersionError for a newer dsh's log. (How a cancelled
// request fails is preparation's: see prepare's TestReadReferenced.)
func TestReadNewest(t *testing.T) {
	tests := []struct {
		name string
		// change alters the store after indexing; nil leaves it readable.
		change func(t *testing.T, path string)
		// says is what the error's text holds, is what it is; both are
		// unset when the read succeeds.
		says string
		is   func(error) bool
	}{
		{name: "readable"},
		{name: "log removed", change: func(t *testing.T, path string) { must(t, os.Remove(path)) },
			says: "its session log has vanished"},
		{name: "directory removed", change: func(t *testing.T, path string) { must(t, os.RemoveAll(filepath.Dir(path))) },
			is: func(err error) bool { return errors.Is(err, fs.ErrNotExist) }},
		{name: "log emptied", change: func(t *testing.T, path string) { must(t, os.Truncate(path, 0)) },
			says: "no complete header line"},
		{name: "log of another session", change: func(t *testing.T, path string) {
			must(t, dshgen.NewSession("someone-else").Cwd("/w").UserText("not this one").SaveAs(path, dshgen.Raw))
		}, says: `log header names session "someone-else"`},
		{name: "newer generation with another header version", change: func(t *testing.T, path string) {
			newer := filepath.Join(filepath.Dir(path), "session.v2.jsonl")
			must(t, dshgen.NewSession("read").Version(1).Cwd("/w").UserText("from v2").SaveAs(newer, dshgen.Raw))
		}, says: "generation 2 log has header version 1"},
		{name: "newer dsh", change: func(t *testing.T, path string) {
			must(t, dshgen.NewSession("read").Version(5).Cwd("/w").UserText("from v5").SaveAs(path, dshgen.Raw))
		}, is: func(err error) bool {
			var nv *dshlog.NewerVersionError
			return errors.As(err, &nv) && nv.Version == 5
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path, e := storetest.ListedSession(t)
			if tt.change != nil {
				tt.change(t, path)
			}
			p, err := dshlog.ReadNewest(context.Background(), e, &dshlog.FrameDecoder{Concurrency: 1})
			if tt.says == "" && tt.is == nil {
				storetest.WantListedRead(t, e, p, err)
				return
			}
			if err == nil || p != nil || !strings.Contains(err.Error(), tt.says) || tt.is != nil && !tt.is(err) {
				t.Fatalf("ReadNewest: %+v, %v (%T); want an error saying %q", p, err, err, tt.says)
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
