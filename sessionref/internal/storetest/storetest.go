// Package storetest writes the session stores that the tests of the title
// index and of preparation share — healthy sessions beside dshgen's
// adversarial cases, ids made of path syntax, links, bodies with a marker
// — and builds their title indexes with a time limit, so that the tests of
// each check what it makes of the same stores: that the index lists and
// skips them as SPEC §1 says, that preparation prepares or refuses them as
// §2 says.
package storetest

import (
	"context"
	"maps"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/dsh-refls/dsh-refls/internal/dshgen"
	"github.com/dsh-refls/dsh-refls/sessionref/dshlog"
	"github.com/dsh-refls/dsh-refls/sessionref/titles"
)

// BuildTimeout bounds one index build. A build that takes longer is
// treated as a hang (for example a symlink loop followed forever).
const BuildTimeout = 20 * time.Second

// TargetID is the session messages are written in during these tests; it
// is not in any store.
const TargetID = "adversarial-target"

// TargetCwd is the workspace of the target session: two healthy sessions
// share it, so candidate groups are exercised.
const TargetCwd = "/work/healthy/shared"

// HealthyStart is the createdAt of the first healthy session; later ones
// count up from it so newest-first order is fixed.
const HealthyStart int64 = 1783360000000

// WriteHealthy writes the healthy sessions of every adversarial store: raw
// and zstd, with and without cwd, a subagent with a display title, legacy
// shapes and packed rows, a compaction checkpoint and a v3 successor
// generation. It returns their facts, newest first.
func WriteHealthy(t testing.TB, root string) []dshgen.Expected {
	t.Helper()
	type spec struct {
		s   *dshgen.Session
		enc dshgen.Encoding
	}
	var specs []spec
	add := func(s *dshgen.Session, enc dshgen.Encoding) { specs = append(specs, spec{s, enc}) }

	add(dshgen.NewSession("healthy-raw").Cwd(TargetCwd).CreatedAt(HealthyStart).Turn(func(t *dshgen.Turn) {
		t.UserText("How do I rotate the signing keys?")
		t.Title("Rotating signing keys", "provider")
		t.AssistantText("Run the rotation job, then redeploy the verifiers.")
	}).Turn(func(t *dshgen.Turn) {
		t.UserText("And the old keys?")
		t.AssistantReasoning("They must stay valid for a day.", "Keep them for 24 hours, then revoke them.")
	}), dshgen.Raw)

	add(dshgen.NewSession("healthy-zstd").Cwd(TargetCwd).CreatedAt(HealthyStart+1000).Turn(func(t *dshgen.Turn) {
		t.UserText("Profile the importer.")
		t.Title("Importer profile", "fallback")
		t.AssistantToolCall("call_1", "read", `{"path":"importer.go"}`)
		t.ToolResult("call_1", "package importer", false)
		t.AssistantText("Most time goes to JSON decoding.")
	}).Turn(func(t *dshgen.Turn) {
		t.UserText("Fix it.")
		t.Title("Importer speed-up", "user")
		t.AssistantText("Switched to a streaming decoder; 3x faster.")
	}), dshgen.Zstd)

	add(dshgen.NewSession("healthy-no-cwd").NoCwd().CreatedAt(HealthyStart+2000).Turn(func(t *dshgen.Turn) {
		t.UserText("What is a torn write?")
		t.AssistantLegacy("A write interrupted part way, leaving a partial record.")
	}), dshgen.Raw)

	add(dshgen.NewSession("healthy-subagent").Cwd("/work/healthy/other").CreatedAt(HealthyStart+3000).
		Parent("healthy-zstd").Descriptor("Check the importer tests").Turn(func(t *dshgen.Turn) {
		t.UserText("Run the importer tests.")
		t.TextChunks("Run", "ning", "…")
		t.Title("Importer tests", "fallback")
		t.AssistantText("All 41 tests pass.")
		t.Steering("Also run the race detector.")
	}), dshgen.Zstd)

	compacted := dshgen.NewSession("healthy-compacted").Cwd("/work/healthy/other").CreatedAt(HealthyStart + 4000)
	var first, last int64
	compacted.Turn(func(t *dshgen.Turn) {
		t.UserText("Draft the release notes.")
		first = t.LastSeq()
		t.Title("Release notes", "provider")
		t.AssistantText("Here is a first draft with five sections.")
		last = t.LastSeq()
	})
	compacted.Checkpoint("Summary: release notes drafted in five sections.", first, last).Turn(func(t *dshgen.Turn) {
		t.UserText("Shorten section two.")
		t.AssistantText("Section two is now three lines.")
	})
	add(compacted, dshgen.Raw)

	add(dshgen.NewSession("healthy-v3").Cwd("/work/healthy/other").CreatedAt(HealthyStart+5000).Generation(3).Turn(func(t *dshgen.Turn) {
		t.UserText("Which generation is this?")
		t.Title("Generation three", "fallback")
		t.SystemMessage("The user prefers short answers.")
		t.AssistantText("The third.")
	}), dshgen.Zstd)

	out := make([]dshgen.Expected, 0, len(specs))
	for _, sp := range specs {
		if _, err := sp.s.Save(root, sp.enc); err != nil {
			t.Fatalf("writing healthy session %s: %v", sp.s.ID(), err)
		}
		out = append(out, sp.s.Expected())
	}
	// Newest first, as the index lists them.
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

// HealthyBaseline writes the healthy sessions alone into a fresh store
// and returns their facts and its snapshot: what "as before" means for a
// store that also holds damaged entries.
func HealthyBaseline(t *testing.T) ([]dshgen.Expected, *titles.Snapshot) {
	t.Helper()
	root := filepath.Join(t.TempDir(), "baseline")
	healthy := WriteHealthy(t, root)
	return healthy, BuildIndex(t, root, titles.IndexOptions{}).Snapshot()
}

// BuildIndex builds an index over root and fails the test when the build
// fails or does not finish within BuildTimeout.
func BuildIndex(t testing.TB, root string, opts titles.IndexOptions) *titles.Index {
	t.Helper()
	ix := titles.NewIndex(root, opts)
	Rebuild(t, ix)
	return ix
}

// Rebuild runs Build again with the same timeout.
func Rebuild(t testing.TB, ix *titles.Index) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), BuildTimeout)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- ix.Build(ctx, nil) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Build: %v", err)
		}
	case <-time.After(BuildTimeout + 5*time.Second):
		t.Fatalf("Build of %s did not finish within %v", ix.Root(), BuildTimeout)
	}
}

// MustLocate is the session id that snap lists; the test fails when it
// lists none.
func MustLocate(t testing.TB, snap *titles.Snapshot, id string) dshlog.Entry {
	t.Helper()
	e, ok := snap.Locate(id)
	if !ok {
		t.Fatalf("session %s not listed; skipped %+v", id, snap.Skipped)
	}
	return e
}

// ListedSession writes a raw store holding one session, "read", with cwd
// /w and one question and answer, and indexes it: it returns the log's path
// and the session's entry, for a test that changes the log and reads it.
func ListedSession(t testing.TB) (path string, e dshlog.Entry) {
	t.Helper()
	root := filepath.Join(t.TempDir(), "sessions")
	path, err := dshgen.NewSession("read").Cwd("/w").Turn(func(t *dshgen.Turn) {
		t.UserText("a question")
		t.AssistantText("an answer")
	}).Save(root, dshgen.Raw)
	if err != nil {
		t.Fatal(err)
	}
	return path, MustLocate(t, BuildIndex(t, root, titles.IndexOptions{}).Snapshot(), "read")
}

// WantListedRead fails the test unless p and err, a read of the
// ListedSession e, are what ReadProjection reads of it, with the header's
// cwd /w.
func WantListedRead(t testing.TB, e dshlog.Entry, p *dshlog.Projection, err error) {
	t.Helper()
	want, werr := dshlog.ReadProjection(context.Background(), e)
	if err != nil || werr != nil || !reflect.DeepEqual(p, want) || !p.HasCwd || p.Cwd != "/w" {
		t.Fatalf("read %+v, %v; want ReadProjection's %+v, %v, with cwd /w", p, err, want, werr)
	}
}

// CheckListed checks that the index lists a session with the facts the
// generator recorded and offers it as a candidate under its title.
func CheckListed(t testing.TB, snap *titles.Snapshot, want dshgen.Expected, checkSeq bool) dshlog.Entry {
	t.Helper()
	e, ok := snap.Locate(want.ID)
	if !ok {
		t.Fatalf("session %q not listed; skipped: %+v", want.ID, snap.Skipped)
	}
	if e.Path != want.Path {
		t.Errorf("%s: path %q, want %q", want.ID, e.Path, want.Path)
	}
	if e.HasTitle != want.HasTitle || e.Title != want.Title {
		t.Errorf("%s: title %q (has %v), want %q (has %v)", want.ID, e.Title, e.HasTitle, want.Title, want.HasTitle)
	}
	if e.Label() != want.Label || e.DisplayTitle() != want.DisplayTitle {
		t.Errorf("%s: label/displayTitle %q/%q, want %q/%q", want.ID, e.Label(), e.DisplayTitle(), want.Label, want.DisplayTitle)
	}
	if e.CreatedAt != want.CreatedAt || e.Cwd != want.Cwd || e.HasCwd != want.HasCwd || e.FormatVersion != want.Version {
		t.Errorf("%s: header facts %+v, want %+v", want.ID, e, want)
	}
	if checkSeq && e.LastSeq != want.LastSeq {
		t.Errorf("%s: last seq %d, want %d", want.ID, e.LastSeq, want.LastSeq)
	}
	query := want.DisplayTitle
	cands, _, err := snap.Candidates(titles.CandidateQuery{Query: query, TargetID: TargetID, TargetCwd: TargetCwd, Limit: 1000})
	if err != nil {
		t.Fatalf("Candidates(%q): %v", query, err)
	}
	found := false
	for _, c := range cands {
		if c.SessionID == want.ID {
			found = true
			if c.Label != want.Label || c.DisplayTitle != want.DisplayTitle {
				t.Errorf("%s: candidate label/displayTitle %q/%q, want %q/%q", want.ID, c.Label, c.DisplayTitle, want.Label, want.DisplayTitle)
			}
		}
	}
	if !found {
		t.Errorf("%s: not among the candidates for its display title %q", want.ID, query)
	}
	return e
}

// CheckHealthyUnchanged compares, key by key, what observe makes of the
// healthy sessions in snap with what it makes of them in HealthyBaseline's
// store, which holds them alone; what names the observation in errors.
func CheckHealthyUnchanged[V any](t *testing.T, snap *titles.Snapshot, what string,
	observe func(t testing.TB, snap *titles.Snapshot, healthy []dshgen.Expected) map[string]V) {
	t.Helper()
	healthy, baseline := HealthyBaseline(t)
	got, want := observe(t, snap, healthy), observe(t, baseline, healthy)
	for _, k := range slices.Sorted(maps.Keys(want)) {
		if !reflect.DeepEqual(got[k], want[k]) {
			t.Errorf("healthy %s %q changed\n got %+v\nwant %+v", what, k, got[k], want[k])
		}
	}
}
