package prepare_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/dsh-refls/dsh-refls/internal/dshgen"
	"github.com/dsh-refls/dsh-refls/internal/longtest"
	"github.com/dsh-refls/dsh-refls/sessionref"
	"github.com/dsh-refls/dsh-refls/sessionref/internal/storetest"
	"github.com/dsh-refls/dsh-refls/sessionref/prepare"
	"github.com/dsh-refls/dsh-refls/sessionref/titles"
)

// These tests put the damaged and unusual store entries of dshgen's
// adversarial cases beside healthy sessions (storetest) and check, case by
// case, what SPEC §2 requires of preparation: a listed entry prepares as
// its log says or is refused with READ_FAILED naming the session, an entry
// the index skips is READ_FAILED — while every healthy session prepares
// exactly as it does in a store without the damage.

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
	Facts  []prepare.ReferenceFacts
}

// prepareOne prepares a single reference to id with the given limits.
func prepareOne(ctx context.Context, loc prepare.Locator, id string, lim prepare.Limits) (prepared, error) {
	prep, err := prepare.Prepare(ctx, loc, storetest.TargetID, []sessionref.Reference{{SessionID: id}}, lim)
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

// observePrepared records what Prepare makes of each healthy session.
func observePrepared(t testing.TB, snap *titles.Snapshot, healthy []dshgen.Expected) map[string]prepared {
	t.Helper()
	out := map[string]prepared{}
	for _, h := range healthy {
		p, err := prepareOne(context.Background(), snap, h.ID, prepare.Limits{})
		if err != nil {
			t.Fatalf("healthy session %s does not prepare: %v", h.ID, err)
		}
		out[h.ID] = p
	}
	return out
}

// TestHealthyBaselinePrepares pins the baseline itself to the generator's
// facts, so "prepares exactly as before" compares against something known
// to be right.
func TestHealthyBaselinePrepares(t *testing.T) {
	healthy, snap := storetest.HealthyBaseline(t)
	view := observePrepared(t, snap, healthy)
	for _, h := range healthy {
		p := view[h.ID]
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

// checkPreparedUnchanged compares what Prepare makes of the healthy
// sessions in snap with the baseline's.
func checkPreparedUnchanged(t *testing.T, snap *titles.Snapshot) {
	t.Helper()
	storetest.CheckHealthyUnchanged(t, snap, "preparation of", observePrepared)
}

// preparationChecks are what preparation must make of each case.
var preparationChecks = storetest.Checks{Case: checkCasePrepared, Healthy: checkPreparedUnchanged}

// TestPrepareAdversarialStoreCases puts each case in its own store beside
// the healthy sessions and checks the preparation SPEC requires of it.
func TestPrepareAdversarialStoreCases(t *testing.T) {
	storetest.EachCaseAlone(t, preparationChecks)
}

// TestPrepareAdversarialAllCasesTogether writes every case of
// dshgen.AllCases into one store with the healthy sessions: the cases must
// not disturb each other or the healthy sessions.
func TestPrepareAdversarialAllCasesTogether(t *testing.T) {
	storetest.AllCasesTogether(t, preparationChecks)
}

// checkCasePrepared asserts what SPEC requires of preparing one case in
// snap.
func checkCasePrepared(t *testing.T, snap *titles.Snapshot, c dshgen.Case, sc storetest.Case) {
	t.Helper()
	if c.Expected == nil {
		for _, id := range sc.Hidden {
			_, err := prepareOne(context.Background(), snap, id, prepare.Limits{})
			storetest.WantReadFailed(t, err, id)
		}
		return
	}
	want := *c.Expected
	p, err := prepareOne(context.Background(), snap, want.ID, prepare.Limits{})
	if !want.Preparable {
		e := storetest.WantReadFailed(t, err, want.ID)
		if sc.ReadFailedSays != "" && !strings.Contains(e.Error(), sc.ReadFailedSays) {
			t.Errorf("READ_FAILED message %q does not say %q", e.Error(), sc.ReadFailedSays)
		}
		t.Logf("observed: Prepare: %v", err)
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
	t.Logf("observed: Prepare: %d messages", len(snaps[0].Conversation))
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
			healthy := storetest.WriteHealthy(t, root)
			victim := dshgen.NewSession("victim").Cwd("/work/victim").Turn(func(t *dshgen.Turn) {
				t.UserText("Remember this.")
				t.Title("Soon gone", "user")
				t.AssistantText("Remembered.")
			})
			path, err := victim.Save(root, dshgen.Raw)
			if err != nil {
				t.Fatal(err)
			}
			ix := storetest.BuildIndex(t, root, titles.IndexOptions{})
			snap := ix.Snapshot()
			want := victim.Expected()
			want.Path = path
			storetest.CheckListed(t, snap, want, true)
			if err := tt.remove(path); err != nil {
				t.Fatal(err)
			}
			_, err = prepareOne(context.Background(), snap, "victim", prepare.Limits{})
			e := storetest.WantReadFailed(t, err, "victim")
			t.Logf("observed: %v", e)
			refs := []sessionref.Reference{{SessionID: healthy[0].ID}, {SessionID: "victim"}}
			prep, err := prepare.Prepare(context.Background(), snap, storetest.TargetID, refs, prepare.Limits{})
			if prep != nil {
				t.Errorf("a partial preparation was returned: %+v", prep)
			}
			storetest.WantReadFailed(t, err, "victim")
			preview, err := prepare.PreviewSession(context.Background(), snap, "victim", prepare.Limits{})
			if err != nil {
				t.Fatalf("PreviewSession: %v", err)
			}
			if sessionref.CodeOf(preview.Err) != sessionref.CodeReadFailed {
				t.Errorf("preview error %v, want READ_FAILED", preview.Err)
			}
			checkPreparedUnchanged(t, snap)
		})
	}
}

// TestPrepareHugeLine indexes and prepares a log whose one message line is
// 64 MB: the snapshot stays within its budget and the heap stays bounded.
func TestPrepareHugeLine(t *testing.T) {
	longtest.Require(t)
	storetest.EachHugeLine(t, func(t *testing.T, enc dshgen.Encoding, h *storetest.Huge) {
		p, err := prepareOne(context.Background(), h.Index.Snapshot(), h.Want.ID, prepare.Limits{})
		if err != nil {
			t.Fatalf("Prepare: %v", err)
		}
		peakInuse := h.Peak()
		runtime.KeepAlive(h.Index)
		snaps := promptSnapshots(t, p.Prompt)
		if len(snaps) != 1 {
			t.Fatalf("%d snapshots", len(snaps))
		}
		wantConv := []dshgen.Message{{Role: "assistant", Text: "Done."}}
		if !reflect.DeepEqual(snaps[0].Conversation, wantConv) {
			t.Errorf("bounded conversation %.200q, want %q", snaps[0].Conversation, wantConv)
		}
		f := p.Facts[0]
		if f.OriginalMessages != 2 || f.RetainedMessages != 1 || f.OmittedMessages != 1 || f.OmittedBytes < storetest.HugeTextBytes || !f.Truncated {
			t.Errorf("facts %+v, want 2 original, 1 retained, 1 omitted of ≥ %d bytes", f, storetest.HugeTextBytes)
		}
		if len(p.Prompt) > 2*prepare.DefaultReferenceBytes {
			t.Errorf("prompt is %d bytes; the budget is %d per source", len(p.Prompt), prepare.DefaultReferenceBytes)
		}
		size, err := prepare.TagSafeSize(snaps[0])
		if err != nil {
			t.Fatal(err)
		}
		if size > prepare.DefaultReferenceBytes {
			t.Errorf("snapshot data is %d bytes, over the budget %d", size, prepare.DefaultReferenceBytes)
		}
		t.Logf("observed: %s log; written in %v, indexed by %v, prepared by %v; heap in use %d MB before, peak %d MB",
			enc, h.Written.Round(time.Millisecond), h.Indexed.Round(time.Millisecond), time.Since(h.Begin).Round(time.Millisecond),
			h.Before>>20, peakInuse>>20)
		if peakInuse > storetest.HugeHeapLimit {
			t.Errorf("heap in use peaked at %d MB, over %d MB", peakInuse>>20, storetest.HugeHeapLimit>>20)
		}
		checkPreparedUnchanged(t, h.Index.Snapshot())
	})
}

// TestPrepareRefusesAfterCorruptFrame appends a turn with a new title after
// the damaged frame of the checksum-failure case: Prepare keeps refusing
// the log.
func TestPrepareRefusesAfterCorruptFrame(t *testing.T) {
	for _, when := range []string{"before the first build", "after the first build"} {
		t.Run(when, func(t *testing.T) {
			ix, id := storetest.TitleAfterCorruptFrame(t, when == "after the first build")
			_, err := prepareOne(context.Background(), ix.Snapshot(), id, prepare.Limits{})
			storetest.WantReadFailed(t, err, id)
			checkPreparedUnchanged(t, ix.Snapshot())
		})
	}
}

// unreadableRootPrepareEnv, when set, makes TestPrepareUnreadableDirectory
// the unprivileged child (storetest.UnreadableDir).
const unreadableRootPrepareEnv = "DSH_REFLS_UNREADABLE_ROOT_PREPARE"

// TestPrepareUnreadableDirectory checks that a session in a directory this
// process cannot read is READ_FAILED while the others prepare as before.
func TestPrepareUnreadableDirectory(t *testing.T) {
	storetest.UnreadableDir(t, "TestPrepareUnreadableDirectory", unreadableRootPrepareEnv, func(t *testing.T, root, _ string) {
		snap := storetest.BuildIndex(t, root, titles.IndexOptions{}).Snapshot()
		_, err := prepareOne(context.Background(), snap, "case-unreadable-dir", prepare.Limits{})
		storetest.WantReadFailed(t, err, "case-unreadable-dir")
		checkPreparedUnchanged(t, snap)
	})
}

// TestPrepareSpecialFilesAsLogs puts a directory and a FIFO where a session
// log belongs, beside healthy sessions: the session is READ_FAILED, and
// Prepare of a session whose log became a FIFO must answer READ_FAILED
// instead of hanging.
func TestPrepareSpecialFilesAsLogs(t *testing.T) {
	for _, tt := range storetest.SpecialFiles {
		t.Run(tt.Name, func(t *testing.T) {
			root, ix, _ := storetest.SpecialFileStore(t, tt.Name, tt.Make)
			snap := ix.Snapshot()
			_, err := prepareOne(context.Background(), snap, "special-log", prepare.Limits{})
			storetest.WantReadFailed(t, err, "special-log")
			checkPreparedUnchanged(t, snap)

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
			if err := tt.Make(path); err != nil {
				t.Fatal(err)
			}
			err = storetest.UnblockAfter(t, path, func() error {
				_, err := prepareOne(context.Background(), snap, "victim", prepare.Limits{})
				return err
			})
			storetest.WantReadFailed(t, err, "victim")
		})
	}
}
