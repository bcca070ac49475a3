package storetest

import (
	"path/filepath"
	"testing"

	"github.com/dsh-refls/dsh-refls/internal/dshgen"
	"github.com/dsh-refls/dsh-refls/sessionref/titles"
)

// WriteV4Cases writes one generated v4 session per rule of SPEC §1.7 and
// the v0+v4 pairs dsh leaves when it resumes a session, in enc, and
// returns their facts.
func WriteV4Cases(t *testing.T, root string, enc dshgen.Encoding) []dshgen.Expected {
	t.Helper()
	cases, err := dshgen.V4Cases(root, enc)
	if err != nil {
		t.Fatal(err)
	}
	for i, title := range []string{"Parser release", "Release plan"} {
		pair, err := dshgen.MigratedPair(root, "migrated-"+enc.String()+"-"+string(rune('a'+i)), "/work/cases/migrated", enc, title)
		if err != nil {
			t.Fatal(err)
		}
		cases = append(cases, pair)
	}
	return cases
}

// WriteV021Cases writes one generated session per rule of dsh 0.2.1 (see
// dshgen.V021Cases), in enc, and returns their facts.
func WriteV021Cases(t *testing.T, root string, enc dshgen.Encoding) []dshgen.Expected {
	t.Helper()
	cases, err := dshgen.V021Cases(root, enc)
	if err != nil {
		t.Fatal(err)
	}
	return cases
}

// EachGenerated writes the sessions of write into a raw and into a zstd
// store and indexes each, which must list every one of them; then it runs
// checkStore (when not nil) on the snapshot, and checkCase on each session
// as a subtest.
func EachGenerated(t *testing.T, write func(t *testing.T, root string, enc dshgen.Encoding) []dshgen.Expected,
	checkStore func(t *testing.T, snap *titles.Snapshot), checkCase func(t *testing.T, snap *titles.Snapshot, want dshgen.Expected)) {
	for _, enc := range []dshgen.Encoding{dshgen.Raw, dshgen.Zstd} {
		t.Run(enc.String(), func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "sessions")
			cases := write(t, root, enc)
			snap := BuildIndex(t, root, titles.IndexOptions{}).Snapshot()
			if len(snap.Skipped) != 0 || len(snap.Sessions) != len(cases) {
				t.Fatalf("listed %d sessions of %d, skipped %+v", len(snap.Sessions), len(cases), snap.Skipped)
			}
			if checkStore != nil {
				checkStore(t, snap)
			}
			for _, want := range cases {
				t.Run(want.ID, func(t *testing.T) { checkCase(t, snap, want) })
			}
		})
	}
}
