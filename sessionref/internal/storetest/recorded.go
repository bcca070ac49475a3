package storetest

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/dsh-refls/dsh-refls/internal/testfixtures"
	"github.com/dsh-refls/dsh-refls/sessionref/titles"
)

// EachRecordedSession indexes the raw and the zstd store of a fixtures
// directory, checks that every session of its expected.json is indexed and
// none skipped, and runs check on each as a subtest (store/name), with the
// store's sessions root and name.
func EachRecordedSession(t *testing.T, dir string, check func(t *testing.T, snap *titles.Snapshot, root, store string, w testfixtures.Expected)) {
	want := testfixtures.LoadExpected(t, dir)
	for _, store := range []string{"raw", "zstd"} {
		t.Run(store, func(t *testing.T) {
			root := filepath.Join(dir, store, "sessions")
			ix := titles.NewIndex(root, titles.IndexOptions{})
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
