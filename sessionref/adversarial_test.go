package sessionref_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/dsh-refls/dsh-refls/internal/dshgen"
	"github.com/dsh-refls/dsh-refls/internal/longtest"
	"github.com/dsh-refls/dsh-refls/sessionref"
)

// These tests put the damaged and unusual store entries of dshgen's
// adversarial cases beside healthy sessions and check, case by case, what
// SPEC §1 and §2 require: the entry is listed (with its title), skipped with
// a reason visible in Snapshot().Skipped, or listed but refused by Prepare
// with READ_FAILED naming the session — while every healthy session keeps its
// candidates and prepares exactly as it does in a store without the damage.

// buildTimeout bounds one index build. A build that takes longer is treated
// as a hang (for example a symlink loop followed forever).
const buildTimeout = 20 * time.Second

// targetID is the session messages are written in during these tests; it is
// not in any store.
const targetID = "adversarial-target"

// targetCwd is the workspace of the target session: two healthy sessions
// share it, so candidate groups are exercised.
const targetCwd = "/work/healthy/shared"

// healthyStart is the createdAt of the first healthy session; later ones
// count up from it so newest-first order is fixed.
const healthyStart int64 = 1783360000000

// writeHealthy writes the healthy sessions of every adversarial store: raw
// and zstd, with and without cwd, a subagent with a display title, legacy
// shapes and packed rows, a compaction checkpoint and a v3 successor
// generation. It returns their facts, newest first.
func writeHealthy(t testing.TB, root string) []dshgen.Expected {
	t.Helper()
	type spec struct {
		s   *dshgen.Session
		enc dshgen.Encoding
	}
	var specs []spec
	add := func(s *dshgen.Session, enc dshgen.Encoding) { specs = append(specs, spec{s, enc}) }

	add(dshgen.NewSession("healthy-raw").Cwd(targetCwd).CreatedAt(healthyStart).Turn(func(t *dshgen.Turn) {
		t.UserText("How do I rotate the signing keys?")
		t.Title("Rotating signing keys", "provider")
		t.AssistantText("Run the rotation job, then redeploy the verifiers.")
	}).Turn(func(t *dshgen.Turn) {
		t.UserText("And the old keys?")
		t.AssistantReasoning("They must stay valid for a day.", "Keep them for 24 hours, then revoke them.")
	}), dshgen.Raw)

	add(dshgen.NewSession("healthy-zstd").Cwd(targetCwd).CreatedAt(healthyStart+1000).Turn(func(t *dshgen.Turn) {
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

	add(dshgen.NewSession("healthy-no-cwd").NoCwd().CreatedAt(healthyStart+2000).Turn(func(t *dshgen.Turn) {
		t.UserText("What is a torn write?")
		t.AssistantLegacy("A write interrupted part way, leaving a partial record.")
	}), dshgen.Raw)

	add(dshgen.NewSession("healthy-subagent").Cwd("/work/healthy/other").CreatedAt(healthyStart+3000).
		Parent("healthy-zstd").Descriptor("Check the importer tests").Turn(func(t *dshgen.Turn) {
		t.UserText("Run the importer tests.")
		t.TextChunks("Run", "ning", "…")
		t.Title("Importer tests", "fallback")
		t.AssistantText("All 41 tests pass.")
		t.Steering("Also run the race detector.")
	}), dshgen.Zstd)

	compacted := dshgen.NewSession("healthy-compacted").Cwd("/work/healthy/other").CreatedAt(healthyStart + 4000)
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

	add(dshgen.NewSession("healthy-v3").Cwd("/work/healthy/other").CreatedAt(healthyStart+5000).Generation(3).Turn(func(t *dshgen.Turn) {
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

// buildIndex builds an index over root and fails the test when the build
// fails or does not finish within buildTimeout.
func buildIndex(t testing.TB, root string, opts sessionref.IndexOptions) *sessionref.Index {
	t.Helper()
	ix := sessionref.NewIndex(root, opts)
	rebuild(t, ix)
	return ix
}

// rebuild runs Build again with the same timeout.
func rebuild(t testing.TB, ix *sessionref.Index) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), buildTimeout)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- ix.Build(ctx, nil) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Build: %v", err)
		}
	case <-time.After(buildTimeout + 5*time.Second):
		t.Fatalf("Build of %s did not finish within %v", ix.Root(), buildTimeout)
	}
}

// snapshotJSON is the data object of §2.3.4 as the prompt carries it.
type snapshotJSON struct {
	SessionID          string           `json:"sessionId"`
	Label              string           `json:"label"`
	Cwd                *string          `json:"cwd"`
	CapturedThroughSeq *int64           `json:"capturedThroughSeq"`
	Conversation       []dshgen.Message `json:"conversation"`
}

// prepared is what Prepare produced for one reference, without the fresh
// message id.
type prepared struct {
	Prompt string
	Facts  []sessionref.ReferenceFacts
}

// prepareOne prepares a single reference to id with the given limits.
func prepareOne(ctx context.Context, loc sessionref.Locator, id string, lim sessionref.Limits) (prepared, error) {
	prep, err := sessionref.Prepare(ctx, loc, targetID, []sessionref.Reference{{SessionID: id}}, lim)
	if err != nil {
		return prepared{}, err
	}
	if prep.Context == nil || len(prep.Context.Content) != 1 {
		return prepared{}, errors.New("preparation without a context message")
	}
	return prepared{Prompt: prep.Context.Content[0].Text, Facts: prep.Context.Source.References}, nil
}

// promptSnapshots decodes the JSON array between the snapshot tags.
func promptSnapshots(t testing.TB, prompt string) []snapshotJSON {
	t.Helper()
	const open, closing = "<referenced-sessions>\n", "\n</referenced-sessions>"
	i, j := strings.Index(prompt, open), strings.Index(prompt, closing)
	if i < 0 || j < i {
		t.Fatalf("prompt has no snapshot tags:\n%s", prompt)
	}
	var out []snapshotJSON
	if err := json.Unmarshal([]byte(prompt[i+len(open):j]), &out); err != nil {
		t.Fatalf("snapshot JSON: %v\n%s", err, prompt[i+len(open):j])
	}
	return out
}

// wantReadFailed fails the test unless err is READ_FAILED naming id.
func wantReadFailed(t testing.TB, err error, id string) *sessionref.Error {
	t.Helper()
	var e *sessionref.Error
	if !errors.As(err, &e) {
		t.Fatalf("Prepare(%q): got %v, want %s", id, err, sessionref.CodeReadFailed)
	}
	if e.Code != sessionref.CodeReadFailed {
		t.Fatalf("Prepare(%q): code %s (%v), want %s", id, e.Code, err, sessionref.CodeReadFailed)
	}
	if e.SessionID != id || !strings.Contains(e.Error(), id) {
		t.Errorf("READ_FAILED does not name session %q: SessionID %q, message %q", id, e.SessionID, e.Error())
	}
	return e
}

// checkConversation compares a prepared snapshot with the generator's facts.
func checkConversation(t testing.TB, got snapshotJSON, want dshgen.Expected) {
	t.Helper()
	if got.SessionID != want.ID {
		t.Errorf("snapshot sessionId %q, want %q", got.SessionID, want.ID)
	}
	if w := want.CapturedThroughSeq(); !reflect.DeepEqual(got.CapturedThroughSeq, w) {
		t.Errorf("capturedThroughSeq %v, want %v", deref(got.CapturedThroughSeq), deref(w))
	}
	if want.HasCwd != (got.Cwd != nil) || (got.Cwd != nil && *got.Cwd != want.Cwd) {
		t.Errorf("cwd %v, want %q (has %v)", got.Cwd, want.Cwd, want.HasCwd)
	}
	conv := got.Conversation
	if conv == nil {
		conv = []dshgen.Message{}
	}
	wantConv := want.Conversation
	if wantConv == nil {
		wantConv = []dshgen.Message{}
	}
	if !reflect.DeepEqual(conv, wantConv) {
		t.Errorf("conversation\n got %q\nwant %q", conv, wantConv)
	}
}

func deref(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}

// checkListed checks that the index lists a session with the facts the
// generator recorded and offers it as a candidate under its title.
func checkListed(t testing.TB, snap *sessionref.Snapshot, want dshgen.Expected, checkSeq bool) sessionref.Entry {
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
	cands, _, err := snap.Candidates(sessionref.CandidateQuery{Query: query, TargetID: targetID, TargetCwd: targetCwd, Limit: 1000})
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

// healthyView is what the healthy sessions look like from outside: their
// candidates for a few queries and what Prepare makes of each.
type healthyView struct {
	Candidates map[string][]sessionref.Candidate
	Prepared   map[string]prepared
}

// healthyQueries are the candidate queries compared between stores.
var healthyQueries = []string{"", "healthy", "importer", "KEYS", "work/healthy"}

// observeHealthy records the healthy view of a snapshot; candidates of
// other sessions are left out, so a store with more sessions compares equal.
func observeHealthy(t testing.TB, snap *sessionref.Snapshot, healthy []dshgen.Expected) healthyView {
	t.Helper()
	ids := map[string]bool{}
	for _, h := range healthy {
		ids[h.ID] = true
	}
	v := healthyView{Candidates: map[string][]sessionref.Candidate{}, Prepared: map[string]prepared{}}
	for _, q := range healthyQueries {
		cands, _, err := snap.Candidates(sessionref.CandidateQuery{Query: q, TargetID: targetID, TargetCwd: targetCwd, Limit: 1000})
		if err != nil {
			t.Fatalf("Candidates(%q): %v", q, err)
		}
		kept := []sessionref.Candidate{}
		for _, c := range cands {
			if ids[c.SessionID] {
				kept = append(kept, c)
			}
		}
		v.Candidates[q] = kept
	}
	for _, h := range healthy {
		p, err := prepareOne(context.Background(), snap, h.ID, sessionref.Limits{})
		if err != nil {
			t.Fatalf("healthy session %s does not prepare: %v", h.ID, err)
		}
		v.Prepared[h.ID] = p
	}
	return v
}

// healthyBaseline writes the healthy sessions alone into a fresh store and
// returns their facts and their view there: what "as before" means for a
// store that also holds damaged entries.
func healthyBaseline(t *testing.T) ([]dshgen.Expected, healthyView) {
	t.Helper()
	root := filepath.Join(t.TempDir(), "baseline")
	healthy := writeHealthy(t, root)
	ix := buildIndex(t, root, sessionref.IndexOptions{})
	return healthy, observeHealthy(t, ix.Snapshot(), healthy)
}

// TestHealthyBaseline pins the baseline itself to the generator's facts, so
// "prepares exactly as before" compares against something known to be right.
func TestHealthyBaseline(t *testing.T) {
	healthy, view := healthyBaseline(t)
	if len(healthy) < 5 {
		t.Fatalf("only %d healthy sessions", len(healthy))
	}
	all := view.Candidates[""]
	if len(all) != len(healthy) {
		t.Fatalf("%d candidates for the empty query, want %d", len(all), len(healthy))
	}
	// Group 0 (same cwd) first, then no cwd, then the others, newest first.
	wantOrder := []string{"healthy-zstd", "healthy-raw", "healthy-no-cwd", "healthy-v3", "healthy-compacted", "healthy-subagent"}
	var gotOrder []string
	for _, c := range all {
		gotOrder = append(gotOrder, c.SessionID)
	}
	if !reflect.DeepEqual(gotOrder, wantOrder) {
		t.Errorf("candidate order %v, want %v", gotOrder, wantOrder)
	}
	for _, h := range healthy {
		p := view.Prepared[h.ID]
		snaps := promptSnapshots(t, p.Prompt)
		if len(snaps) != 1 {
			t.Fatalf("%s: %d snapshots in the prompt", h.ID, len(snaps))
		}
		checkConversation(t, snaps[0], h)
		if f := p.Facts; len(f) != 1 || f[0].Compacted != h.Compacted || f[0].Truncated {
			t.Errorf("%s: facts %+v, want compacted %v and not truncated", h.ID, f, h.Compacted)
		}
	}
}

// checkHealthyUnchanged compares the healthy view of snap with the baseline.
func checkHealthyUnchanged(t *testing.T, snap *sessionref.Snapshot) {
	t.Helper()
	healthy, want := healthyBaseline(t)
	got := observeHealthy(t, snap, healthy)
	for _, q := range healthyQueries {
		if !reflect.DeepEqual(got.Candidates[q], want.Candidates[q]) {
			t.Errorf("healthy candidates for %q changed\n got %+v\nwant %+v", q, got.Candidates[q], want.Candidates[q])
		}
	}
	for _, h := range healthy {
		if !reflect.DeepEqual(got.Prepared[h.ID], want.Prepared[h.ID]) {
			t.Errorf("healthy session %s prepares differently\n got %+v\nwant %+v", h.ID, got.Prepared[h.ID], want.Prepared[h.ID])
		}
	}
}

// storeCase is one adversarial case to put beside the healthy sessions.
type storeCase struct {
	name string
	make func(root string) (dshgen.Case, error)
	// hidden are ids that must not be listed (for skipped cases).
	hidden []string
	// readFailedSays is text the READ_FAILED message must contain.
	readFailedSays string
}

func storeCases() []storeCase {
	var cases []storeCase
	for _, enc := range []dshgen.Encoding{dshgen.Raw, dshgen.Zstd} {
		cases = append(cases,
			storeCase{name: "unparsable-before-turn-end-" + enc.String(), make: func(r string) (dshgen.Case, error) { return dshgen.UnparsableBeforeTurnEnd(r, enc) }},
			storeCase{name: "unparsable-after-turn-end-" + enc.String(), make: func(r string) (dshgen.Case, error) { return dshgen.UnparsableAfterTurnEnd(r, enc) }},
			storeCase{name: "torn-tail-" + enc.String(), make: func(r string) (dshgen.Case, error) { return dshgen.TornTail(r, enc) }},
			storeCase{name: "nul-in-text-" + enc.String(), make: func(r string) (dshgen.Case, error) { return dshgen.NULInText(r, enc) }},
			storeCase{name: "header-only-" + enc.String(), make: func(r string) (dshgen.Case, error) { return dshgen.HeaderOnly(r, enc) }},
			storeCase{name: "version-5-" + enc.String(), make: func(r string) (dshgen.Case, error) { return dshgen.Version5(r, enc) }, readFailedSays: "newer dsh"},
		)
	}
	return append(cases,
		storeCase{name: "checksum-failure", make: dshgen.ChecksumFailure},
		storeCase{name: "invalid-utf8", make: dshgen.InvalidUTF8},
		storeCase{name: "nul-padding", make: dshgen.NULPadding},
		storeCase{name: "empty-file", make: dshgen.EmptyFile, hidden: []string{"case-empty-file"}},
		storeCase{name: "duplicate-ids", make: dshgen.DuplicateIDs, hidden: []string{"case-duplicate-id"}},
		storeCase{name: "identity-mismatch-id", make: dshgen.IdentityMismatchID, hidden: []string{"case-identity-header-id", "case-identity-directory-id"}},
		storeCase{name: "identity-mismatch-cwd", make: dshgen.IdentityMismatchCwd, hidden: []string{"case-identity-cwd"}},
		storeCase{name: "flat-layout", make: dshgen.FlatLayout, hidden: []string{"case-flat-layout"}},
		storeCase{name: "symlink-loop", make: dshgen.SymlinkLoop, hidden: []string{"case-symlink-loop"}},
		storeCase{name: "unreadable-dir", make: dshgen.UnreadableDir, hidden: []string{"case-unreadable-dir"}},
	)
}

// TestAdversarialStoreCases puts each case in its own store beside the
// healthy sessions and checks the behaviour SPEC requires of it.
func TestAdversarialStoreCases(t *testing.T) {
	for _, sc := range storeCases() {
		t.Run(sc.name, func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "sessions")
			writeHealthy(t, root)
			c, err := sc.make(root)
			if sc.name == "unreadable-dir" {
				t.Cleanup(func() {
					if err := dshgen.RestoreReadable(c); err != nil {
						t.Error(err)
					}
				})
			}
			if err != nil {
				t.Fatalf("writing case: %v", err)
			}
			if c.Name != sc.name {
				t.Fatalf("case is named %q, want %q", c.Name, sc.name)
			}
			c = completeLinesOfTornRaw(t, c)
			ix := buildIndex(t, root, sessionref.IndexOptions{})
			checkCase(t, ix.Snapshot(), c, sc)
			checkHealthyUnchanged(t, ix.Snapshot())
			if c.Finish == nil {
				return
			}
			if err := c.Finish(); err != nil {
				t.Fatalf("finishing torn write: %v", err)
			}
			if err := ix.Refresh(context.Background(), []string{c.Paths[0]}); err != nil {
				t.Fatalf("Refresh: %v", err)
			}
			t.Logf("observed after the torn write finished: title %q", c.After.Title)
			checkCase(t, ix.Snapshot(), dshgen.Case{Name: c.Name, Paths: c.Paths, Expected: c.After, Want: c.Want}, sc)
			checkHealthyUnchanged(t, ix.Snapshot())
		})
	}
}

// TestAdversarialAllCasesTogether writes every case of dshgen.AllCases into
// one store with the healthy sessions: the cases must not disturb each other
// or the healthy sessions.
func TestAdversarialAllCasesTogether(t *testing.T) {
	root := filepath.Join(t.TempDir(), "sessions")
	writeHealthy(t, root)
	cases := writeAllCases(t, root)
	specs := map[string]storeCase{}
	for _, sc := range storeCases() {
		specs[sc.name] = sc
	}
	ix := buildIndex(t, root, sessionref.IndexOptions{Parallelism: 2})
	snap := ix.Snapshot()
	for _, c := range cases {
		sc, ok := specs[c.Name]
		if !ok {
			t.Errorf("AllCases has case %q that this test does not know; add it to storeCases", c.Name)
			continue
		}
		delete(specs, c.Name)
		c = completeLinesOfTornRaw(t, c)
		t.Run(c.Name, func(t *testing.T) { checkCase(t, snap, c, sc) })
	}
	for name := range specs {
		t.Errorf("case %q is tested alone but missing from AllCases", name)
	}
	checkHealthyUnchanged(t, snap)
}

// completeLinesOfTornRaw corrects the facts of the raw torn-tail case.
// dshgen tears the last line of the appended turn (its turn/end) and states
// the facts from before the turn; but the turn's other lines are complete,
// and §1.2 says to read what is complete. So a correct reader sees the whole
// second turn except its turn/end: the facts after the write, one seq less.
// The file is checked to be torn exactly there.
func completeLinesOfTornRaw(t *testing.T, c dshgen.Case) dshgen.Case {
	t.Helper()
	if c.Name != "torn-tail-jsonl" {
		return c
	}
	data, err := os.ReadFile(c.Paths[0])
	if err != nil {
		t.Fatal(err)
	}
	torn := data[strings.LastIndexByte(string(data), '\n')+1:]
	if len(torn) == 0 || !strings.HasPrefix(string(torn), `{"type":"turn/end"`) {
		t.Fatalf("raw torn tail is %q, expected the start of a turn/end line", torn)
	}
	want := *c.After
	want.LastSeq--
	want.Closers = 1 // the log now ends inside the second turn: a turn/end closes it (§1.7)
	c.Expected = &want
	return c
}

// checkCase asserts what SPEC requires of one case in snap.
func checkCase(t *testing.T, snap *sessionref.Snapshot, c dshgen.Case, sc storeCase) {
	t.Helper()
	t.Logf("SPEC: %s", c.Want)
	if sc.name == "unreadable-dir" && !dshgen.PermissionsEnforced(c.Paths[0]) {
		t.Logf("not asserting the skip here: this process (uid %d) can read a mode-000 directory; TestUnreadableDirectory checks it as an unprivileged user", os.Getuid())
		return
	}
	if c.Expected == nil {
		checkSkipped(t, snap, c, sc.hidden)
		return
	}
	want := *c.Expected
	checkListed(t, snap, want, want.Preparable)
	p, err := prepareOne(context.Background(), snap, want.ID, sessionref.Limits{})
	if !want.Preparable {
		e := wantReadFailed(t, err, want.ID)
		if sc.readFailedSays != "" && !strings.Contains(e.Error(), sc.readFailedSays) {
			t.Errorf("READ_FAILED message %q does not say %q", e.Error(), sc.readFailedSays)
		}
		t.Logf("observed: listed with title %q; Prepare: %v", want.Title, err)
		return
	}
	if err != nil {
		t.Fatalf("Prepare(%s): %v", want.ID, err)
	}
	snaps := promptSnapshots(t, p.Prompt)
	if len(snaps) != 1 {
		t.Fatalf("%d snapshots in the prompt", len(snaps))
	}
	checkConversation(t, snaps[0], want)
	t.Logf("observed: listed with title %q, last seq %d; Prepare: %d messages", want.Title, want.LastSeq, len(snaps[0].Conversation))
}

// checkSkipped asserts that a case is left out with a reason and that none
// of its ids is listed or preparable.
func checkSkipped(t *testing.T, snap *sessionref.Snapshot, c dshgen.Case, hidden []string) {
	t.Helper()
	for _, p := range c.Paths {
		if p == "" {
			continue
		}
		var reason string
		for _, s := range snap.Skipped {
			if s.Path == p || s.Path == filepath.Dir(p) {
				reason = s.Reason
			}
		}
		if strings.TrimSpace(reason) == "" {
			t.Errorf("%s is not in Snapshot().Skipped with a reason; skipped: %+v", p, snap.Skipped)
		} else {
			t.Logf("observed: %s skipped: %s", p, reason)
		}
		for _, e := range snap.Sessions {
			if e.Path == p || filepath.Dir(e.Path) == filepath.Dir(p) {
				t.Errorf("%s is listed as session %q", p, e.ID)
			}
		}
	}
	if len(hidden) == 0 {
		t.Fatal("a skipped case must name the ids it hides")
	}
	for _, id := range hidden {
		if e, ok := snap.Locate(id); ok {
			t.Errorf("session %q is listed (path %s)", id, e.Path)
		}
		cands, _, err := snap.Candidates(sessionref.CandidateQuery{Query: id, TargetID: targetID, Limit: 1000})
		if err != nil {
			t.Fatal(err)
		}
		for _, cand := range cands {
			if cand.SessionID == id {
				t.Errorf("session %q is offered as a candidate", id)
			}
		}
		_, err = prepareOne(context.Background(), snap, id, sessionref.Limits{})
		wantReadFailed(t, err, id)
	}
}

// TestLogDeletedBeforePrepare removes logs after the index listed them:
// Prepare of the vanished session is READ_FAILED naming it, a reference list
// containing it fails as a whole, and the others still prepare as before.
func TestLogDeletedBeforePrepare(t *testing.T) {
	tests := []struct {
		name   string
		remove func(logPath string) error
	}{
		{"log file removed", os.Remove},
		{"session directory removed", func(p string) error { return os.RemoveAll(filepath.Dir(p)) }},
		{"log replaced by another session's log", func(p string) error {
			return dshgen.NewSession("someone-else").Cwd("/work/victim").Turn(func(t *dshgen.Turn) {
				t.UserText("not the victim")
			}).SaveAs(p, dshgen.Raw)
		}},
		{"log emptied", func(p string) error { return os.Truncate(p, 0) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "sessions")
			healthy := writeHealthy(t, root)
			victim := dshgen.NewSession("victim").Cwd("/work/victim").Turn(func(t *dshgen.Turn) {
				t.UserText("Remember this.")
				t.Title("Soon gone", "user")
				t.AssistantText("Remembered.")
			})
			path, err := victim.Save(root, dshgen.Raw)
			if err != nil {
				t.Fatal(err)
			}
			ix := buildIndex(t, root, sessionref.IndexOptions{})
			snap := ix.Snapshot()
			want := victim.Expected()
			want.Path = path
			checkListed(t, snap, want, true)
			if err := tt.remove(path); err != nil {
				t.Fatal(err)
			}
			_, err = prepareOne(context.Background(), snap, "victim", sessionref.Limits{})
			e := wantReadFailed(t, err, "victim")
			t.Logf("observed: %v", e)
			refs := []sessionref.Reference{{SessionID: healthy[0].ID}, {SessionID: "victim"}}
			prep, err := sessionref.Prepare(context.Background(), snap, targetID, refs, sessionref.Limits{})
			if prep != nil {
				t.Errorf("a partial preparation was returned: %+v", prep)
			}
			wantReadFailed(t, err, "victim")
			preview, err := sessionref.PreviewSession(context.Background(), snap, "victim", sessionref.Limits{})
			if err != nil {
				t.Fatalf("PreviewSession: %v", err)
			}
			if sessionref.CodeOf(preview.Err) != sessionref.CodeReadFailed {
				t.Errorf("preview error %v, want READ_FAILED", preview.Err)
			}
			checkHealthyUnchanged(t, snap)
		})
	}
}

// hugeTextBytes is the size of the one-line message of the huge-line case:
// far beyond any read buffer. Under -race, which reads about ten times
// slower, it is 16 MB, still far beyond any buffer.
const hugeTextBytes = (64 << 20) >> (2 * raceShift)

// Memory bounds of the huge-line case.
const (
	// hugeHeapLimit is the generous bound on the heap in use while a huge
	// line is indexed and prepared: a few copies of the line at once,
	// nothing unbounded.
	hugeHeapLimit = 512 << 20
	// hugeRetainLimit bounds what the index keeps after indexing the huge
	// line: it holds no message bodies (§1.5), so a few MB of entries and
	// buffers at most, far below the 64 MB line.
	hugeRetainLimit = hugeTextBytes / 4
	// hugeGCPercent makes the collector run often while the peak is
	// measured, so the peak shows the copies the code holds at once
	// rather than how much garbage the default setting lets pile up.
	hugeGCPercent = 20
)

// TestHugeLine indexes and prepares a log whose one message line is 64 MB:
// the title after it is found, the index keeps no copy of it, the snapshot
// stays within its budget and the heap stays bounded.
func TestHugeLine(t *testing.T) {
	longtest.Require(t)
	if testing.Short() {
		t.Skip("writes and reads a 64 MB line; run without -short")
	}
	for _, enc := range []dshgen.Encoding{dshgen.Raw, dshgen.Zstd} {
		t.Run(enc.String(), func(t *testing.T) {
			begin := time.Now()
			root := filepath.Join(t.TempDir(), "sessions")
			writeHealthy(t, root)
			c, err := dshgen.HugeLine(root, enc, hugeTextBytes)
			if err != nil {
				t.Fatal(err)
			}
			written := time.Since(begin)
			want := *c.Expected

			before := heapInuseAfterGC()
			defer debug.SetGCPercent(debug.SetGCPercent(hugeGCPercent))
			peak := watchHeap(t)
			ix := buildIndex(t, root, sessionref.IndexOptions{Parallelism: 2})
			checkListed(t, ix.Snapshot(), want, true)
			indexed := time.Since(begin)
			retained := heapInuseAfterGC()

			p, err := prepareOne(context.Background(), ix.Snapshot(), want.ID, sessionref.Limits{})
			if err != nil {
				t.Fatalf("Prepare: %v", err)
			}
			peakInuse := peak()
			runtime.KeepAlive(ix)
			snaps := promptSnapshots(t, p.Prompt)
			if len(snaps) != 1 {
				t.Fatalf("%d snapshots", len(snaps))
			}
			wantConv := []dshgen.Message{{Role: "assistant", Text: "Done."}}
			if !reflect.DeepEqual(snaps[0].Conversation, wantConv) {
				t.Errorf("bounded conversation %.200q, want %q", snaps[0].Conversation, wantConv)
			}
			f := p.Facts[0]
			if f.OriginalMessages != 2 || f.RetainedMessages != 1 || f.OmittedMessages != 1 || f.OmittedBytes < hugeTextBytes || !f.Truncated {
				t.Errorf("facts %+v, want 2 original, 1 retained, 1 omitted of ≥ %d bytes", f, hugeTextBytes)
			}
			if len(p.Prompt) > 2*sessionref.DefaultReferenceBytes {
				t.Errorf("prompt is %d bytes; the budget is %d per source", len(p.Prompt), sessionref.DefaultReferenceBytes)
			}
			size, err := sessionref.TagSafeSize(snaps[0])
			if err != nil {
				t.Fatal(err)
			}
			if size > sessionref.DefaultReferenceBytes {
				t.Errorf("snapshot data is %d bytes, over the budget %d", size, sessionref.DefaultReferenceBytes)
			}
			t.Logf("observed: %s log; written in %v, indexed by %v, prepared by %v; heap in use %d MB before, %d MB after indexing (index alive), peak %d MB",
				enc, written.Round(time.Millisecond), indexed.Round(time.Millisecond), time.Since(begin).Round(time.Millisecond),
				before>>20, retained>>20, peakInuse>>20)
			if retained > before+hugeRetainLimit {
				t.Errorf("the index keeps %d MB of heap after indexing a huge line (bound %d MB): it holds a copy of the line",
					(retained-before)>>20, hugeRetainLimit>>20)
			}
			if peakInuse > hugeHeapLimit {
				t.Errorf("heap in use peaked at %d MB, over %d MB", peakInuse>>20, hugeHeapLimit>>20)
			}
			checkHealthyUnchanged(t, ix.Snapshot())
		})
	}
}

// heapInuseAfterGC collects twice (the second run also empties sync.Pool
// victim caches) and returns the heap in use.
func heapInuseAfterGC() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

// heapSampleEvery is how often watchHeap samples the heap: often enough to
// catch a peak that lasts as long as one decode of a huge line.
const heapSampleEvery = 2 * time.Millisecond

// watchHeap samples HeapInuse until the returned function is called, which
// returns the highest value seen.
func watchHeap(t *testing.T) func() uint64 {
	var peak atomic.Uint64
	sample := func() {
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		if m.HeapInuse > peak.Load() {
			peak.Store(m.HeapInuse)
		}
	}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(heapSampleEvery)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				sample()
			}
		}
	}()
	var once sync.Once
	finish := func() uint64 {
		once.Do(func() {
			close(stop)
			<-done
			sample()
		})
		return peak.Load()
	}
	t.Cleanup(func() { finish() })
	return finish
}

// TestTitleAfterCorruptFrame appends a turn with a new title after the
// damaged frame of the checksum-failure case. The damage spoils one frame,
// not the frames after it, whose boundaries the frame headers still give:
// the last session/title in log order is the title (§1.5), and an appended
// title must become visible (§5), while Prepare keeps refusing the log.
func TestTitleAfterCorruptFrame(t *testing.T) {
	for _, when := range []string{"before the first build", "after the first build"} {
		t.Run(when, func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "sessions")
			writeHealthy(t, root)
			c, err := dshgen.ChecksumFailure(root)
			if err != nil {
				t.Fatal(err)
			}
			want := *c.Expected
			later := fmt.Sprintf(`{"type":"session/title","seq":%d,"time":%d,"data":{"title":"Title after the damage","messageSeqs":[1],"source":{"kind":"user"}}}`+"\n",
				want.LastSeq+1, want.CreatedAt+100000)
			appendFrame := func() {
				enc, err := zstd.NewWriter(nil, zstd.WithEncoderCRC(true))
				if err != nil {
					t.Fatal(err)
				}
				f, err := os.OpenFile(c.Paths[0], os.O_WRONLY|os.O_APPEND, 0)
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				if _, err := f.Write(enc.EncodeAll([]byte(later), nil)); err != nil {
					t.Fatal(err)
				}
			}
			var ix *sessionref.Index
			if when == "before the first build" {
				appendFrame()
				ix = buildIndex(t, root, sessionref.IndexOptions{})
			} else {
				ix = buildIndex(t, root, sessionref.IndexOptions{})
				appendFrame()
				if err := ix.Refresh(context.Background(), c.Paths); err != nil {
					t.Fatalf("Refresh: %v", err)
				}
			}
			e, ok := ix.Snapshot().Locate(want.ID)
			if !ok {
				t.Fatalf("%s not listed", want.ID)
			}
			if e.Title != "Title after the damage" {
				t.Errorf("title %q, want the one appended after the damaged frame, %q", e.Title, "Title after the damage")
			}
			_, err = prepareOne(context.Background(), ix.Snapshot(), want.ID, sessionref.Limits{})
			wantReadFailed(t, err, want.ID)
			checkHealthyUnchanged(t, ix.Snapshot())
		})
	}
}

// unreadableRootEnv, when set, makes TestUnreadableDirectory the
// unprivileged child (runUnprivileged): it checks the store at that root.
const unreadableRootEnv = "DSH_REFLS_UNREADABLE_ROOT"

// TestUnreadableDirectory checks that a session directory this process
// cannot read is skipped with a reason while the others are served. As root
// (which reads mode-000 directories) it runs the check in a copy of the
// test binary as "nobody".
func TestUnreadableDirectory(t *testing.T) {
	if root := os.Getenv(unreadableRootEnv); root != "" {
		checkUnreadable(t, root)
		return
	}
	base := t.TempDir()
	root := filepath.Join(base, "sessions")
	writeHealthy(t, root)
	c, err := dshgen.UnreadableDir(root)
	t.Cleanup(func() {
		if err := dshgen.RestoreReadable(c); err != nil {
			t.Error(err)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if dshgen.PermissionsEnforced(c.Paths[0]) {
		checkUnreadable(t, root)
		return
	}
	runUnprivileged(t, base, "TestUnreadableDirectory", unreadableRootEnv+"="+root)
}

// checkUnreadable runs in a process that cannot read the case's directory.
func checkUnreadable(t *testing.T, root string) {
	dir := dshgen.SessionDir(root, "case-unreadable-dir", "/work/cases/perm", true)
	if !dshgen.PermissionsEnforced(dir) {
		t.Fatalf("uid %d can read %s: the case was not produced", os.Getuid(), dir)
	}
	ix := buildIndex(t, root, sessionref.IndexOptions{})
	snap := ix.Snapshot()
	checkSkipped(t, snap, dshgen.Case{Paths: []string{dir}}, []string{"case-unreadable-dir"})
	checkHealthyUnchanged(t, snap)
}

// specialFileTimeout bounds how long reading a store with a special file in
// place of a log may take before it counts as blocked: the store holds seven
// tiny sessions, read in milliseconds even under -race on a loaded machine.
const specialFileTimeout = 2 * time.Second

// TestSpecialFilesAsLogs puts a directory and a FIFO where a session log
// belongs, beside healthy sessions. Neither is a log: the index must skip
// them with a reason instead of blocking on the FIFO (an open for reading
// waits for a writer that never comes), and Prepare of a session whose log
// became a FIFO must answer READ_FAILED instead of hanging.
func TestSpecialFilesAsLogs(t *testing.T) {
	tests := []struct {
		name string
		make func(path string) error
	}{
		{"directory", func(p string) error { return os.Mkdir(p, 0o755) }},
		{"fifo", mkfifo},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "sessions")
			writeHealthy(t, root)
			special := filepath.Join(dshgen.SessionDir(root, "special-log", "/work/special", true), "session.jsonl")
			if err := os.MkdirAll(filepath.Dir(special), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := tt.make(special); errors.Is(err, errors.ErrUnsupported) {
				t.Skipf("no %s on %s", tt.name, runtime.GOOS)
			} else if err != nil {
				t.Fatal(err)
			}
			ix := sessionref.NewIndex(root, sessionref.IndexOptions{})
			err := unblockAfter(t, special, func() error { return ix.Build(context.Background(), nil) })
			if err != nil {
				t.Fatalf("Build: %v", err)
			}
			snap := ix.Snapshot()
			checkSkipped(t, snap, dshgen.Case{Paths: []string{special}}, []string{"special-log"})
			checkHealthyUnchanged(t, snap)

			// A listed session whose log turns into the special file
			// before the request.
			victim := dshgen.NewSession("victim").Cwd("/work/special").Turn(func(t *dshgen.Turn) {
				t.UserText("Soon replaced.")
			})
			path, err := victim.Save(root, dshgen.Raw)
			if err != nil {
				t.Fatal(err)
			}
			if err := ix.Refresh(context.Background(), []string{path}); err != nil {
				t.Fatal(err)
			}
			snap = ix.Snapshot()
			if _, ok := snap.Locate("victim"); !ok {
				t.Fatal("victim not listed")
			}
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
			if err := tt.make(path); err != nil {
				t.Fatal(err)
			}
			err = unblockAfter(t, path, func() error {
				_, err := prepareOne(context.Background(), snap, "victim", sessionref.Limits{})
				return err
			})
			wantReadFailed(t, err, "victim")
		})
	}
}

// unblockAfter runs fn; when it has not returned within specialFileTimeout
// the test fails, and path, when it is a FIFO, is opened for writing and
// closed so that a reader blocked on it sees end of file and fn returns.
func unblockAfter(t *testing.T, path string, fn func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- fn() }()
	select {
	case err := <-done:
		return err
	case <-time.After(specialFileTimeout):
	}
	t.Errorf("still blocked after %v on %s", specialFileTimeout, path)
	if info, err := os.Lstat(path); err == nil && info.Mode()&os.ModeNamedPipe != 0 {
		if f, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
	}
	select {
	case err := <-done:
		return err
	case <-time.After(specialFileTimeout):
		t.Fatalf("still blocked after unblocking %s", path)
		return nil
	}
}

// writeAllCases writes every case of dshgen.AllCases under root, making
// what a case left unreadable readable again when the test ends.
func writeAllCases(t *testing.T, root string) []dshgen.Case {
	t.Helper()
	cases, err := dshgen.AllCases(root)
	t.Cleanup(func() {
		if err := dshgen.RestoreAllReadable(cases); err != nil {
			t.Error(err)
		}
	})
	if err != nil {
		t.Fatalf("AllCases: %v", err)
	}
	return cases
}
