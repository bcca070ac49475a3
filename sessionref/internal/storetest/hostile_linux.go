package storetest

import (
	"path/filepath"
	"testing"

	"github.com/dsh-refls/dsh-refls/internal/dshgen"
	"github.com/dsh-refls/dsh-refls/sessionref/titles"
)

// EachHostileStore runs check, as a subtest, on two stores beside the
// healthy sessions: one with tempting logs only (WriteTempting), and one
// that also holds the real session of every hostile id. Opens of the
// paths off the store layout are watched from before the store is read;
// check ends by draining the watch.
func EachHostileStore(t *testing.T, check func(t *testing.T, snap *titles.Snapshot, withReal bool, opens *OpenWatch, forbidden []string)) {
	for _, withReal := range []bool{false, true} {
		name := "tempting logs only"
		if withReal {
			name = "real and tempting logs"
		}
		t.Run(name, func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "store", "sessions")
			WriteHealthy(t, root)
			forbidden := WriteTempting(t, root)
			if withReal {
				for _, id := range HostileIDs {
					if _, err := RealSession(id).Save(root, dshgen.Raw); err != nil {
						t.Fatalf("writing session %q: %v", id, err)
					}
				}
			}
			opens := WatchOpens(t, forbidden)
			t.Logf("watching %d paths off the store layout: %q", len(forbidden), forbidden)
			check(t, BuildIndex(t, root, titles.IndexOptions{}).Snapshot(), withReal, opens, forbidden)
		})
	}
}
