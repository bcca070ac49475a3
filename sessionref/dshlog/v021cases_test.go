package dshlog_test

import (
	"testing"

	"github.com/dsh-refls/dsh-refls/internal/dshgen"
	"github.com/dsh-refls/dsh-refls/sessionref/internal/storetest"
	"github.com/dsh-refls/dsh-refls/sessionref/titles"
)

// TestGeneratedV021Cases reads one generated session per rule of issue 28,
// raw and zstd, with the expected values of dsh 0.2.1-alpha.2's code
// (zq0929/deepseek-harness@5593cc250aae228449197efd2413192165e3377f; each
// rule and its file are in docs/spec-notes.md, "dsh 0.2.1"):
//   - working-directory/change and notices of source kind
//     "working-directory" (never refused, never projected);
//   - subagent/catalog payload versions 1 (mode unknown) and 2 (mode
//     external): no refusal, no invented candidate; title requests with
//     reasoningEffort and ptc dispatches with meta are read;
//   - an unknown type marked ignorable that carries a surfaceOp is kept;
//   - a v4 row with a key outside the envelope, or ignorable other than
//     true, ends the readable prefix (corrupt inside a zstd frame, and
//     corrupt when a turn/end follows);
//   - seq and time as JavaScript numbers (1.0, 1e0, 10e-1), a time that is
//     no integer refused, "SEQ" not a seq;
//   - refused: a surfaceOp on session/title, a checkpoint whose
//     sourceEventSeqs miss a shadowed node; read on purpose: a retired
//     header field, events in the zstd header frame, a title of an unknown
//     source kind (docs/reliability.md, "Deliberate tolerances").
func TestGeneratedV021Cases(t *testing.T) {
	storetest.EachGenerated(t, storetest.WriteV021Cases, func(t *testing.T, snap *titles.Snapshot) {
		// One ignorable unknown type.
		if snap.UnknownEvents != 1 {
			t.Errorf("unknown events %d, want 1", snap.UnknownEvents)
		}
	}, func(t *testing.T, snap *titles.Snapshot, want dshgen.Expected) {
		e := storetest.CheckListed(t, snap, want, false)
		if e.WorkDir != want.WorkDir {
			t.Errorf("effective directory %q, want %q", e.WorkDir, want.WorkDir)
		}
		if status := map[bool]string{true: "current", false: "migration-required"}[want.Version == 4]; e.FormatStatus() != status {
			t.Errorf("formatStatus %q, want %q", e.FormatStatus(), status)
		}
		checkReadRefusal(t, e, want)
	})
}
