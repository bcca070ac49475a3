package titles_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/dsh-refls/dsh-refls/internal/dshgen"
	"github.com/dsh-refls/dsh-refls/sessionref/internal/storetest"
	"github.com/dsh-refls/dsh-refls/sessionref/titles"
)

// TestWorkingDirectoryChange: dsh 0.2.1's working-directory/change {cwd}
// makes cwd the session's effective directory while header.cwd stays the
// directory it started in (packages/session/working-directory/src/index.ts
// at zq0929/deepseek-harness@5593cc250aae228449197efd2413192165e3377f: the
// workingDirectory projection starts from header.cwd and takes each
// change's cwd). A session that moved into the workspace ranks with the
// workspace's sessions (SPEC §2.2's group, Candidate.SameWorkspace), is
// listed with its header cwd and its workingDirectory, and the index
// learns a change from an appended tail and keeps it across a cache.
func TestWorkingDirectoryChange(t *testing.T) {
	for _, enc := range []dshgen.Encoding{dshgen.Raw, dshgen.Zstd} {
		t.Run(enc.String(), func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "sessions")
			ws, elsewhere := "/work/wd/project", "/work/wd/elsewhere"
			at := func(s *dshgen.Session, ms int64) *dshgen.Session { return s.CreatedAt(dshgen.DefaultCreatedAt + ms) }
			home := at(dshgen.NewV4Session("home").Cwd(ws), 0).Turn(func(tr *dshgen.Turn) {
				tr.UserText("Plan the rate limiter.")
				tr.AssistantText("Token bucket.")
				tr.Title("Rate limiter plan", "fallback")
			})
			moved := at(dshgen.NewV4Session("moved").Cwd(elsewhere), 1000).Turn(func(tr *dshgen.Turn) {
				tr.UserText("Review the rate limiter.")
				tr.ChangeDirectory(ws)
				tr.AssistantText("Looks fine.")
				tr.Title("Rate limiter review", "fallback")
			})
			later := at(dshgen.NewV4Session("later").Cwd(elsewhere), 2000).Turn(func(tr *dshgen.Turn) {
				tr.UserText("Rate the docs.")
				tr.AssistantText("Good.")
				tr.Title("Rate the docs", "fallback")
			})
			var paths []string
			for _, s := range []*dshgen.Session{home, moved, later} {
				p, err := s.Save(root, enc)
				if err != nil {
					t.Fatal(err)
				}
				paths = append(paths, p)
			}
			ix := storetest.BuildIndex(t, root, titles.IndexOptions{})
			check := func(t *testing.T, snap *titles.Snapshot, query string, wantOrder []string, wantSame map[string]bool) {
				t.Helper()
				cands, _, err := snap.Candidates(titles.CandidateQuery{Query: query, TargetCwd: ws})
				if err != nil {
					t.Fatal(err)
				}
				var got []string
				for _, c := range cands {
					got = append(got, c.SessionID)
					if c.SameWorkspace != wantSame[c.SessionID] {
						t.Errorf("%q: %s sameWorkspace %v", query, c.SessionID, c.SameWorkspace)
					}
					if c.SessionID == "moved" && wantSame["moved"] {
						if c.Cwd == nil || *c.Cwd != elsewhere || c.WorkingDirectory == nil || *c.WorkingDirectory != ws {
							t.Errorf("moved: cwd %v, workingDirectory %v; want %s, %s", derefString(c.Cwd), derefString(c.WorkingDirectory), elsewhere, ws)
						}
					}
				}
				if len(got) != len(wantOrder) {
					t.Fatalf("%q: candidates %v, want %v", query, got, wantOrder)
				}
				for i := range got {
					if got[i] != wantOrder[i] {
						t.Fatalf("%q: candidates %v, want %v", query, got, wantOrder)
					}
				}
			}
			// The moved session is the workspace's: before the newer
			// session of the other directory, newest first within the group.
			same := map[string]bool{"home": true, "moved": true}
			check(t, ix.Snapshot(), "", []string{"moved", "home", "later"}, same)
			check(t, ix.Snapshot(), "rate", []string{"moved", "home", "later"}, same)
			if e, _ := ix.Snapshot().Locate("moved"); e.Cwd != elsewhere || e.WorkDir != ws {
				t.Errorf("moved: cwd %q, effective %q", e.Cwd, e.WorkDir)
			}

			// An appended change moves "later" into the workspace too, and
			// a change back moves "moved" out: the last change decides.
			later.NewBatch().ChangeDirectory(ws)
			moved.NewBatch().ChangeDirectory(elsewhere)
			if err := later.Append(paths[2]); err != nil {
				t.Fatal(err)
			}
			if err := moved.Append(paths[1]); err != nil {
				t.Fatal(err)
			}
			if err := ix.Refresh(context.Background(), paths); err != nil {
				t.Fatal(err)
			}
			after := map[string]bool{"home": true, "later": true}
			check(t, ix.Snapshot(), "", []string{"later", "home", "moved"}, after)

			// The cache keeps the effective directories.
			cache := filepath.Join(t.TempDir(), "index.cache")
			if err := ix.SaveCache(cache); err != nil {
				t.Fatal(err)
			}
			warm := titles.NewIndex(root, titles.IndexOptions{})
			if err := warm.LoadCache(cache); err != nil {
				t.Fatal(err)
			}
			check(t, warm.Snapshot(), "", []string{"later", "home", "moved"}, after)
			check(t, warm.Snapshot(), "rate", []string{"later", "home", "moved"}, after)
		})
	}
}

func derefString(p *string) any {
	if p == nil {
		return nil
	}
	return *p
}
