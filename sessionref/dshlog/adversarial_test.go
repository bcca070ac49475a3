package dshlog_test

import (
	"context"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/dsh-refls/dsh-refls/internal/dshgen"
	"github.com/dsh-refls/dsh-refls/internal/longtest"
	"github.com/dsh-refls/dsh-refls/sessionref/dshlog"
	"github.com/dsh-refls/dsh-refls/sessionref/internal/storetest"
	"github.com/dsh-refls/dsh-refls/sessionref/titles"
)

// These tests put the damaged and unusual store entries of dshgen's
// adversarial cases beside healthy sessions (storetest) and check, case by
// case, what SPEC §1 requires of the index: the entry is listed (with its
// title), or skipped with a reason visible in Snapshot().Skipped; a listed
// entry that cannot be prepared is READ_FAILED naming the session when read
// — while every healthy session keeps its candidates as in a store without
// the damage. adversarial_prepare_test.go checks what preparation makes of
// the same stores.

// healthyQueries are the candidate queries compared between stores.
var healthyQueries = []string{"", "healthy", "importer", "KEYS", "work/healthy"}

// observeCandidates records the candidates of the healthy sessions in snap
// for healthyQueries; candidates of other sessions are left out, so a
// store with more sessions compares equal.
func observeCandidates(t testing.TB, snap *titles.Snapshot, healthy []dshgen.Expected) map[string][]titles.Candidate {
	t.Helper()
	ids := map[string]bool{}
	for _, h := range healthy {
		ids[h.ID] = true
	}
	out := map[string][]titles.Candidate{}
	for _, q := range healthyQueries {
		cands, _, err := snap.Candidates(titles.CandidateQuery{Query: q, TargetID: storetest.TargetID, TargetCwd: storetest.TargetCwd, Limit: 1000})
		if err != nil {
			t.Fatalf("Candidates(%q): %v", q, err)
		}
		kept := []titles.Candidate{}
		for _, c := range cands {
			if ids[c.SessionID] {
				kept = append(kept, c)
			}
		}
		out[q] = kept
	}
	return out
}

// TestHealthyBaseline pins the baseline itself to the generator's facts, so
// "as before" compares against something known to be right.
func TestHealthyBaseline(t *testing.T) {
	healthy, snap := storetest.HealthyBaseline(t)
	if len(healthy) < 5 {
		t.Fatalf("only %d healthy sessions", len(healthy))
	}
	all := observeCandidates(t, snap, healthy)[""]
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
}

// checkCandidatesUnchanged compares the candidates of the healthy sessions
// in snap with the baseline's.
func checkCandidatesUnchanged(t *testing.T, snap *titles.Snapshot) {
	t.Helper()
	storetest.CheckHealthyUnchanged(t, snap, "candidates for", observeCandidates)
}

// listingChecks are what the index must make of each case.
var listingChecks = storetest.Checks{Case: checkCase, Healthy: checkCandidatesUnchanged}

// TestAdversarialStoreCases puts each case in its own store beside the
// healthy sessions and checks the behaviour SPEC requires of it.
func TestAdversarialStoreCases(t *testing.T) {
	storetest.EachCaseAlone(t, listingChecks)
}

// TestAdversarialAllCasesTogether writes every case of dshgen.AllCases into
// one store with the healthy sessions: the cases must not disturb each other
// or the healthy sessions.
func TestAdversarialAllCasesTogether(t *testing.T) {
	storetest.AllCasesTogether(t, listingChecks)
}

// checkCase asserts what SPEC requires of the listing of one case in snap,
// and that a listed session that cannot be prepared fails to read as a
// reference.
func checkCase(t *testing.T, snap *titles.Snapshot, c dshgen.Case, sc storetest.Case) {
	t.Helper()
	if c.Expected == nil {
		checkSkipped(t, snap, c, sc.Hidden)
		return
	}
	want := *c.Expected
	e := storetest.CheckListed(t, snap, want, want.Preparable)
	_, err := dshlog.ReadNewest(context.Background(), e, &dshlog.FrameDecoder{Concurrency: 1})
	if want.Preparable {
		if err != nil {
			t.Fatalf("ReadNewest(%s): %v", want.ID, err)
		}
		t.Logf("observed: listed with title %q, last seq %d", want.Title, want.LastSeq)
		return
	}
	if err == nil {
		t.Fatalf("ReadNewest(%s) read a session that cannot be prepared", want.ID)
	}
	if sc.ReadFailedSays != "" && !strings.Contains(err.Error(), sc.ReadFailedSays) {
		t.Errorf("read error %q does not say %q", err.Error(), sc.ReadFailedSays)
	}
	t.Logf("observed: listed with title %q; read: %v", want.Title, err)
}

// checkSkipped asserts that a case is left out with a reason and that none
// of its ids is listed or offered.
func checkSkipped(t *testing.T, snap *titles.Snapshot, c dshgen.Case, hidden []string) {
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
		cands, _, err := snap.Candidates(titles.CandidateQuery{Query: id, TargetID: storetest.TargetID, Limit: 1000})
		if err != nil {
			t.Fatal(err)
		}
		for _, cand := range cands {
			if cand.SessionID == id {
				t.Errorf("session %q is offered as a candidate", id)
			}
		}
	}
}

// TestHugeLine indexes a log whose one message line is 64 MB: the title
// after it is found, the index keeps no copy of it and the heap stays
// bounded.
func TestHugeLine(t *testing.T) {
	longtest.Require(t)
	storetest.EachHugeLine(t, func(t *testing.T, enc dshgen.Encoding, h *storetest.Huge) {
		storetest.CheckListed(t, h.Index.Snapshot(), h.Want, true)
		retained := storetest.HeapInuseAfterGC()
		peakInuse := h.Peak()
		runtime.KeepAlive(h.Index)
		t.Logf("observed: %s log; written in %v, indexed by %v; heap in use %d MB before, %d MB after indexing (index alive), peak %d MB",
			enc, h.Written.Round(time.Millisecond), h.Indexed.Round(time.Millisecond), h.Before>>20, retained>>20, peakInuse>>20)
		if retained > h.Before+storetest.HugeRetainLimit {
			t.Errorf("the index keeps %d MB of heap after indexing a huge line (bound %d MB): it holds a copy of the line",
				(retained-h.Before)>>20, storetest.HugeRetainLimit>>20)
		}
		if peakInuse > storetest.HugeHeapLimit {
			t.Errorf("heap in use peaked at %d MB, over %d MB", peakInuse>>20, storetest.HugeHeapLimit>>20)
		}
		checkCandidatesUnchanged(t, h.Index.Snapshot())
	})
}

// TestTitleAfterCorruptFrame appends a turn with a new title after the
// damaged frame of the checksum-failure case. The damage spoils one frame,
// not the frames after it, whose boundaries the frame headers still give:
// the last session/title in log order is the title (§1.5), and an appended
// title must become visible (§5).
func TestTitleAfterCorruptFrame(t *testing.T) {
	for _, when := range []string{"before the first build", "after the first build"} {
		t.Run(when, func(t *testing.T) {
			ix, id := storetest.TitleAfterCorruptFrame(t, when == "after the first build")
			e, ok := ix.Snapshot().Locate(id)
			if !ok {
				t.Fatalf("%s not listed", id)
			}
			if e.Title != storetest.TitleAfterDamage {
				t.Errorf("title %q, want the one appended after the damaged frame, %q", e.Title, storetest.TitleAfterDamage)
			}
			checkCandidatesUnchanged(t, ix.Snapshot())
		})
	}
}

// unreadableRootEnv, when set, makes TestUnreadableDirectory the
// unprivileged child (storetest.UnreadableDir): it checks the store at that
// root.
const unreadableRootEnv = "DSH_REFLS_UNREADABLE_ROOT"

// TestUnreadableDirectory checks that a session directory this process
// cannot read is skipped with a reason while the others are served.
func TestUnreadableDirectory(t *testing.T) {
	storetest.UnreadableDir(t, "TestUnreadableDirectory", unreadableRootEnv, func(t *testing.T, root, dir string) {
		ix := storetest.BuildIndex(t, root, titles.IndexOptions{})
		snap := ix.Snapshot()
		checkSkipped(t, snap, dshgen.Case{Paths: []string{dir}}, []string{"case-unreadable-dir"})
		checkCandidatesUnchanged(t, snap)
	})
}

// TestSpecialFilesAsLogs puts a directory and a FIFO where a session log
// belongs, beside healthy sessions. Neither is a log: the index must skip
// them with a reason instead of blocking on the FIFO (an open for reading
// waits for a writer that never comes).
func TestSpecialFilesAsLogs(t *testing.T) {
	for _, tt := range storetest.SpecialFiles {
		t.Run(tt.Name, func(t *testing.T) {
			_, ix, special := storetest.SpecialFileStore(t, tt.Name, tt.Make)
			snap := ix.Snapshot()
			checkSkipped(t, snap, dshgen.Case{Paths: []string{special}}, []string{"special-log"})
			checkCandidatesUnchanged(t, snap)
		})
	}
}
