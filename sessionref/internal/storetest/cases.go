package storetest

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dsh-refls/dsh-refls/internal/dshgen"
	"github.com/dsh-refls/dsh-refls/sessionref/titles"
)

// Case is one adversarial case to put beside the healthy sessions.
type Case struct {
	Name string
	Make func(root string) (dshgen.Case, error)
	// Hidden are ids that must not be listed (for skipped cases).
	Hidden []string
	// ReadFailedSays is text the READ_FAILED message must contain.
	ReadFailedSays string
}

// Cases are the adversarial cases, each under the name dshgen gives it.
func Cases() []Case {
	var cases []Case
	for _, enc := range []dshgen.Encoding{dshgen.Raw, dshgen.Zstd} {
		cases = append(cases,
			Case{Name: "unparsable-before-turn-end-" + enc.String(), Make: func(r string) (dshgen.Case, error) { return dshgen.UnparsableBeforeTurnEnd(r, enc) }},
			Case{Name: "unparsable-after-turn-end-" + enc.String(), Make: func(r string) (dshgen.Case, error) { return dshgen.UnparsableAfterTurnEnd(r, enc) }},
			Case{Name: "torn-tail-" + enc.String(), Make: func(r string) (dshgen.Case, error) { return dshgen.TornTail(r, enc) }},
			Case{Name: "nul-in-text-" + enc.String(), Make: func(r string) (dshgen.Case, error) { return dshgen.NULInText(r, enc) }},
			Case{Name: "header-only-" + enc.String(), Make: func(r string) (dshgen.Case, error) { return dshgen.HeaderOnly(r, enc) }},
			Case{Name: "version-5-" + enc.String(), Make: func(r string) (dshgen.Case, error) { return dshgen.Version5(r, enc) }, ReadFailedSays: "newer dsh"},
		)
	}
	return append(cases,
		Case{Name: "checksum-failure", Make: dshgen.ChecksumFailure},
		Case{Name: "invalid-utf8", Make: dshgen.InvalidUTF8},
		Case{Name: "nul-padding", Make: dshgen.NULPadding},
		Case{Name: "empty-file", Make: dshgen.EmptyFile, Hidden: []string{"case-empty-file"}},
		Case{Name: "duplicate-ids", Make: dshgen.DuplicateIDs, Hidden: []string{"case-duplicate-id"}},
		Case{Name: "identity-mismatch-id", Make: dshgen.IdentityMismatchID, Hidden: []string{"case-identity-header-id", "case-identity-directory-id"}},
		Case{Name: "identity-mismatch-cwd", Make: dshgen.IdentityMismatchCwd, Hidden: []string{"case-identity-cwd"}},
		Case{Name: "flat-layout", Make: dshgen.FlatLayout, Hidden: []string{"case-flat-layout"}},
		Case{Name: "symlink-loop", Make: dshgen.SymlinkLoop, Hidden: []string{"case-symlink-loop"}},
		Case{Name: "unreadable-dir", Make: dshgen.UnreadableDir, Hidden: []string{"case-unreadable-dir"}},
	)
}

// Checks are what one package asserts of the stores the cases are put in.
type Checks struct {
	// Case checks one case in snap, the snapshot of a store that holds it.
	Case func(t *testing.T, snap *titles.Snapshot, c dshgen.Case, sc Case)
	// Healthy checks that snap serves the healthy sessions exactly as a
	// store without the damage does.
	Healthy func(t *testing.T, snap *titles.Snapshot)
}

// checkCase runs checks.Case, unless the case cannot be produced here.
func (checks Checks) checkCase(t *testing.T, snap *titles.Snapshot, c dshgen.Case, sc Case) {
	t.Helper()
	t.Logf("SPEC: %s", c.Want)
	if sc.Name == "unreadable-dir" && !dshgen.PermissionsEnforced(c.Paths[0]) {
		t.Logf("not asserting the skip here: this process (uid %d) can read a mode-000 directory; TestUnreadableDirectory checks it as an unprivileged user", os.Getuid())
		return
	}
	checks.Case(t, snap, c, sc)
}

// EachCaseAlone puts each case in its own store beside the healthy
// sessions and runs checks on the store's snapshot; for a torn write,
// again once the write finished and the index was refreshed.
func EachCaseAlone(t *testing.T, checks Checks) {
	for _, sc := range Cases() {
		t.Run(sc.Name, func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "sessions")
			WriteHealthy(t, root)
			c, err := sc.Make(root)
			if sc.Name == "unreadable-dir" {
				t.Cleanup(func() {
					if err := dshgen.RestoreReadable(c); err != nil {
						t.Error(err)
					}
				})
			}
			if err != nil {
				t.Fatalf("writing case: %v", err)
			}
			if c.Name != sc.Name {
				t.Fatalf("case is named %q, want %q", c.Name, sc.Name)
			}
			c = CompleteLinesOfTornRaw(t, c)
			ix := BuildIndex(t, root, titles.IndexOptions{})
			checks.checkCase(t, ix.Snapshot(), c, sc)
			checks.Healthy(t, ix.Snapshot())
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
			checks.checkCase(t, ix.Snapshot(), dshgen.Case{Name: c.Name, Paths: c.Paths, Expected: c.After, Want: c.Want}, sc)
			checks.Healthy(t, ix.Snapshot())
		})
	}
}

// AllCasesTogether writes every case of dshgen.AllCases into one store
// with the healthy sessions and runs checks on its snapshot, each case as
// a subtest: the cases must not disturb each other or the healthy
// sessions. A case that only AllCases or only Cases holds fails the test.
func AllCasesTogether(t *testing.T, checks Checks) {
	root := filepath.Join(t.TempDir(), "sessions")
	WriteHealthy(t, root)
	cases := WriteAllCases(t, root)
	specs := map[string]Case{}
	for _, sc := range Cases() {
		specs[sc.Name] = sc
	}
	ix := BuildIndex(t, root, titles.IndexOptions{Parallelism: 2})
	snap := ix.Snapshot()
	for _, c := range cases {
		sc, ok := specs[c.Name]
		if !ok {
			t.Errorf("AllCases has case %q that this test does not know; add it to storetest.Cases", c.Name)
			continue
		}
		delete(specs, c.Name)
		c = CompleteLinesOfTornRaw(t, c)
		t.Run(c.Name, func(t *testing.T) { checks.checkCase(t, snap, c, sc) })
	}
	for name := range specs {
		t.Errorf("case %q is tested alone but missing from AllCases", name)
	}
	checks.Healthy(t, snap)
}

// CompleteLinesOfTornRaw corrects the facts of the raw torn-tail case.
// dshgen tears the last line of the appended turn (its turn/end) and states
// the facts from before the turn; but the turn's other lines are complete,
// and §1.2 says to read what is complete. So a correct reader sees the whole
// second turn except its turn/end: the facts after the write, one seq less.
// The file is checked to be torn exactly there.
func CompleteLinesOfTornRaw(t *testing.T, c dshgen.Case) dshgen.Case {
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

// WriteAllCases writes every case of dshgen.AllCases under root, making
// what a case left unreadable readable again when the test ends.
func WriteAllCases(t *testing.T, root string) []dshgen.Case {
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

// SpecialFileTimeout bounds how long reading a store with a special file
// in place of a log may take before it counts as blocked: the store holds
// seven tiny sessions, read in milliseconds even under -race on a loaded
// machine.
const SpecialFileTimeout = 2 * time.Second

// UnblockAfter runs fn; when it has not returned within
// SpecialFileTimeout the test fails, and path, when it is a FIFO, is
// opened for writing and closed so that a reader blocked on it sees end of
// file and fn returns.
func UnblockAfter(t *testing.T, path string, fn func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- fn() }()
	select {
	case err := <-done:
		return err
	case <-time.After(SpecialFileTimeout):
	}
	t.Errorf("still blocked after %v on %s", SpecialFileTimeout, path)
	if info, err := os.Lstat(path); err == nil && info.Mode()&os.ModeNamedPipe != 0 {
		if f, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
	}
	select {
	case err := <-done:
		return err
	case <-time.After(SpecialFileTimeout):
		t.Fatalf("still blocked after unblocking %s", path)
		return nil
	}
}
