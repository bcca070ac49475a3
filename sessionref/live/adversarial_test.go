package live_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dsh-refls/dsh-refls/internal/dshgen"
	"github.com/dsh-refls/dsh-refls/sessionref"
	"github.com/dsh-refls/dsh-refls/sessionref/dshlog"
	"github.com/dsh-refls/dsh-refls/sessionref/internal/storetest"
	"github.com/dsh-refls/dsh-refls/sessionref/live"
	"github.com/dsh-refls/dsh-refls/sessionref/prepare"
	"github.com/dsh-refls/dsh-refls/sessionref/titles"
	"github.com/dsh-refls/dsh-refls/watch"
)

// These tests damage logs under a running Store — truncating them, tearing
// appends, filling the root with dshgen's adversarial cases — and check that
// the store rereads what changed, never crashes and keeps serving the
// healthy sessions.

// watchModes are the two ways a Store observes its root.
var watchModes = []watch.Mode{watch.ModeFsnotify, watch.ModePoll}

// bystander writes a healthy session that must stay listed throughout.
func bystander(t *testing.T, root string) dshgen.Expected {
	t.Helper()
	s := dshgen.NewSession("bystander").Cwd(cwd).Turn(func(t *dshgen.Turn) {
		t.UserText("I am not involved.")
		t.Title("Bystander", "user")
		t.AssistantText("Noted.")
	})
	if _, err := s.Save(root, dshgen.Zstd); err != nil {
		t.Fatal(err)
	}
	return s.Expected()
}

// entryIs reports that id is listed with the title and last seq given.
func entryIs(id, title string, lastSeq int64) func(*titles.Snapshot) bool {
	return func(s *titles.Snapshot) bool {
		e, ok := s.Locate(id)
		return ok && e.HasTitle && e.Title == title && e.LastSeq == lastSeq
	}
}

// skippedWithReason reports that id is not listed and its directory is
// skipped with a reason.
func skippedWithReason(id, dir string) func(*titles.Snapshot) bool {
	return func(s *titles.Snapshot) bool {
		if _, ok := s.Locate(id); ok {
			return false
		}
		for _, sk := range s.Skipped {
			if sk.Path == dir && sk.Reason != "" {
				return true
			}
		}
		return false
	}
}

// checkServing asserts the bystander is listed as written and the store
// reports no refresh failure.
func (h *harness) checkServing(by dshgen.Expected) {
	h.t.Helper()
	e, ok := h.store.Index().Snapshot().Locate(by.ID)
	if !ok || e.Title != by.Title || e.LastSeq != by.LastSeq {
		h.t.Errorf("bystander is %+v (listed %v), want title %q, last seq %d", e, ok, by.Title, by.LastSeq)
	}
	if st := h.store.Status(); st.RefreshError != "" {
		h.t.Errorf("store reports a refresh error: %s", st.RefreshError)
	}
}

// truncate cuts path to size bytes in place (same inode).
func truncate(t *testing.T, path string, size int64) {
	t.Helper()
	if err := os.Truncate(path, size); err != nil {
		t.Fatal(err)
	}
}

// fileSize returns the size of path.
func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return info.Size()
}

// TestTruncatedWhileWatched cuts a watched log back, in place, to a shorter
// complete log, into the middle of a line or frame, and to nothing, then
// writes it again: each time the store rereads the log and shows what is
// there now, and the bystander is untouched.
func TestTruncatedWhileWatched(t *testing.T) {
	for _, mode := range watchModes {
		for _, enc := range []dshgen.Encoding{dshgen.Raw, dshgen.Zstd} {
			t.Run(string(mode)+"/"+enc.String(), func(t *testing.T) {
				root := filepath.Join(t.TempDir(), "sessions")
				by := bystander(t, root)
				s := dshgen.NewSession("shrinking").Cwd(cwd).Turn(func(t *dshgen.Turn) {
					t.UserText("First question.")
					t.Title("First title", "fallback")
					t.AssistantText("First answer.")
				})
				path, err := s.Save(root, enc)
				if err != nil {
					t.Fatal(err)
				}
				first := s.Expected()
				firstSize := fileSize(t, path)
				s.Turn(func(t *dshgen.Turn) {
					t.UserText("Second question.")
					t.Title("Second title", "provider")
					t.AssistantText("Second answer.")
				})
				if err := s.Append(path); err != nil {
					t.Fatal(err)
				}
				second := s.Expected()

				h := start(t, root, mode, live.NoCache)
				h.waitFor("both turns", entryIs(s.ID(), second.Title, second.LastSeq))

				truncate(t, path, firstSize)
				h.waitFor("cut back to the first turn", entryIs(s.ID(), first.Title, first.LastSeq))
				snap := h.store.Index().Snapshot()
				prep, err := prepare.Prepare(context.Background(), snap, "target", []sessionref.Reference{{SessionID: s.ID()}}, prepare.Limits{})
				if err != nil {
					t.Fatalf("Prepare after the cut: %v", err)
				}
				if text := prep.Context.Content[0].Text; strings.Contains(text, "Second") || !strings.Contains(text, "First answer.") {
					t.Errorf("prepared snapshot does not match the cut log:\n%s", text)
				}

				// Into the middle of the last line (raw: the turn/end, so the
				// seq before it) or of the last frame (zstd: the whole turn is
				// torn, only the header frame stays).
				truncate(t, path, firstSize-5)
				if enc == dshgen.Raw {
					h.waitFor("cut inside the last line", entryIs(s.ID(), first.Title, first.LastSeq-1))
				} else {
					h.waitFor("cut inside the last frame", func(snap *titles.Snapshot) bool {
						e, ok := snap.Locate(s.ID())
						return ok && !e.HasTitle && e.LastSeq == -1
					})
				}

				truncate(t, path, 0)
				h.waitFor("emptied log skipped", skippedWithReason(s.ID(), filepath.Dir(path)))
				h.checkServing(by)

				// dsh writes the log again from scratch.
				again := dshgen.NewSession(s.ID()).Cwd(cwd).Turn(func(t *dshgen.Turn) {
					t.UserText("Rewritten question, longer than anything before it in this log.")
					t.Title("Rewritten title", "user")
					t.AssistantText("Rewritten answer.")
				}).Turn(func(t *dshgen.Turn) {
					t.UserText("One more turn so the log outgrows its old size.")
					t.AssistantText("Done.")
				})
				data, err := again.Bytes(enc)
				if err != nil {
					t.Fatal(err)
				}
				f, err := os.OpenFile(path, os.O_WRONLY, 0)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := f.Write(data); err != nil {
					t.Fatal(err)
				}
				if err := f.Close(); err != nil {
					t.Fatal(err)
				}
				want := again.Expected()
				h.waitFor("log written again", entryIs(s.ID(), want.Title, want.LastSeq))
				h.checkServing(by)
			})
		}
	}
}

// TestRewrittenInPlaceWhileWatched truncates a watched log and at once
// writes a different, longer log into the same file, so the store sees a
// file that only seems to have grown. dsh never does this (§1.2: nothing is
// rewritten), but a store must not read the new bytes from the old offset as
// if they were an append: it must show the new log.
func TestRewrittenInPlaceWhileWatched(t *testing.T) {
	for _, mode := range watchModes {
		for _, enc := range []dshgen.Encoding{dshgen.Raw, dshgen.Zstd} {
			t.Run(string(mode)+"/"+enc.String(), func(t *testing.T) {
				root := filepath.Join(t.TempDir(), "sessions")
				by := bystander(t, root)
				old := dshgen.NewSession("rewritten").Cwd(cwd).Turn(func(t *dshgen.Turn) {
					t.UserText("Old question.")
					t.Title("Old title", "fallback")
					t.AssistantText("Old answer.")
				})
				path, err := old.Save(root, enc)
				if err != nil {
					t.Fatal(err)
				}
				h := start(t, root, mode, live.NoCache)
				h.waitFor("old log", entryIs(old.ID(), "Old title", old.Expected().LastSeq))

				// The new title comes early, before the old log's length; the
				// long question after it makes the file larger than before.
				fresh := dshgen.NewSession("rewritten").Cwd(cwd).Turn(func(t *dshgen.Turn) {
					t.Title("New title", "user")
					t.UserText(strings.Repeat("A much longer first question. ", 40))
					t.AssistantText("A first answer.")
				})
				data, err := fresh.Bytes(enc)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, data, 0o644); err != nil { // O_TRUNC, same inode
					t.Fatal(err)
				}
				want := fresh.Expected()
				var seen dshlog.Entry
				defer func() {
					if t.Failed() {
						t.Logf("the store shows title %q, last seq %d, corrupt %q; the new log has title %q, last seq %d",
							seen.Title, seen.LastSeq, seen.Corrupt, want.Title, want.LastSeq)
					}
				}()
				h.waitFor("rewritten log", func(snap *titles.Snapshot) bool {
					seen, _ = snap.Locate(fresh.ID())
					return entryIs(fresh.ID(), want.Title, want.LastSeq)(snap)
				})
				h.checkServing(by)
			})
		}
	}
}

// TestAdversarialStoreUnderWatch starts a Store over a root holding every
// dshgen adversarial case: the first build finishes (no symlink loop is
// followed), the cases are listed or skipped as SPEC says, a torn write
// completed later is picked up, and a session added afterwards still shows.
func TestAdversarialStoreUnderWatch(t *testing.T) {
	for _, mode := range watchModes {
		t.Run(string(mode), func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "sessions")
			by := bystander(t, root)
			cases := storetest.WriteAllCases(t, root)
			h := start(t, root, mode, live.NoCache)
			snap := h.store.Index().Snapshot()
			h.checkServing(by)
			listed, skipped := 0, 0
			for _, c := range cases {
				switch {
				case c.Name == "unreadable-dir" && !dshgen.PermissionsEnforced(c.Paths[0]):
					t.Logf("%s: not asserted, this process (uid %d) can read a mode-000 directory", c.Name, os.Getuid())
				case c.Expected != nil:
					e, ok := snap.Locate(c.Expected.ID)
					if !ok {
						t.Errorf("%s: session %q not listed (%s)", c.Name, c.Expected.ID, c.Want)
					} else if c.Finish == nil && (e.Title != c.Expected.Title || e.DisplayTitle() != c.Expected.DisplayTitle) {
						// A torn raw tail may already show lines of the torn
						// turn; its facts are checked once the write is done.
						t.Errorf("%s: listed as %q / %q, want %q / %q", c.Name, e.Title, e.DisplayTitle(), c.Expected.Title, c.Expected.DisplayTitle)
					}
					listed++
				default:
					found := false
					for _, sk := range snap.Skipped {
						for _, p := range c.Paths {
							found = found || sk.Path == p || sk.Path == filepath.Dir(p)
						}
					}
					if !found {
						t.Errorf("%s: no skip reason for %v (%s)", c.Name, c.Paths, c.Want)
					}
					skipped++
				}
			}
			t.Logf("observed: %d cases listed, %d skipped with reasons, %d skip entries in the snapshot", listed, skipped, len(snap.Skipped))

			for _, c := range cases {
				if c.Finish == nil {
					continue
				}
				if err := c.Finish(); err != nil {
					t.Fatalf("finishing %s: %v", c.Name, err)
				}
				h.waitFor(c.Name+" completed", entryIs(c.After.ID, c.After.Title, c.After.LastSeq))
			}

			late := dshgen.NewSession("late-arrival").Cwd(cwd).Turn(func(t *dshgen.Turn) {
				t.UserText("Still listening?")
				t.Title("Late arrival", "user")
			})
			if _, err := late.Save(root, dshgen.Raw); err != nil {
				t.Fatal(err)
			}
			h.waitFor("session added after the damage", titleIs("late-arrival", "Late arrival"))
			h.checkServing(by)
		})
	}
}
