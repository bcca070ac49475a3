package prepare_test

import (
	"testing"

	"github.com/dsh-refls/dsh-refls/internal/dshgen"
	"github.com/dsh-refls/dsh-refls/sessionref/internal/storetest"
	"github.com/dsh-refls/dsh-refls/sessionref/titles"
)

// TestPrepareGeneratedV021Cases prepares one generated session per rule of
// issue 28, raw and zstd (storetest.GeneratedV021; the rules are listed at
// dshlog's TestGeneratedV021Cases): a refused log is READ_FAILED naming
// the rule, another prepares as dsh 0.2.1 projects it.
func TestPrepareGeneratedV021Cases(t *testing.T) {
	storetest.EachGenerated(t, storetest.WriteV021Cases, nil, func(t *testing.T, snap *titles.Snapshot, want dshgen.Expected) {
		prepareGenerated(t, snap, want, false)
	})
}
