package live_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dsh-refls/dsh-refls/sessionref/live"
	"github.com/dsh-refls/dsh-refls/sessionref/prepare"
	"github.com/dsh-refls/dsh-refls/sessionref/titles"
	"github.com/dsh-refls/dsh-refls/watch"
)

func headerV4(id string) string {
	return fmt.Sprintf(`{"type":"session","version":4,"id":%q,"createdAt":1783350000000,"cwd":%q,"isSeeded":false,"delegationDepth":0}`+"\n", id, cwd)
}

func userLine(seq int, text string) string {
	return fmt.Sprintf(`{"type":"user/message","seq":%d,"time":1783350000050,"data":{"content":[{"type":"text","text":%q}],"source":{"kind":"user"},"role":"user","id":"u%d"},"surfaceOp":"append"}`+"\n", seq, text, seq)
}

// TestMigratedGenerationReplacesTheOriginal: when dsh resumes an older
// session it writes session.v4.jsonl.zstd beside the untouched original
// (through a temporary file, beside a lock file). The index switches to the
// new generation within the freshness bound, reading only the new file,
// and the old one is never read again; candidates and previews follow.
func TestMigratedGenerationReplacesTheOriginal(t *testing.T) {
	for _, mode := range []watch.Mode{watch.ModeFsnotify, watch.ModePoll} {
		t.Run(string(mode), func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "sessions")
			dir := sessionDir(root, "mig-1")
			oldPath := filepath.Join(dir, "session.jsonl.zstd")
			writeFile(t, oldPath, string(frame(t, header("mig-1")))+string(frame(t, userLine(0, "old prompt")+titleLine(1, "Old title"))))
			h := start(t, root, mode, live.NoCache)
			h.waitFor("original generation", titleIs("mig-1", "Old title"))
			ix := h.store.Index()

			// dsh's lock and staging files are not generations.
			writeFile(t, filepath.Join(dir, "session.lock"), "")
			body := string(frame(t, headerV4("mig-1"))) +
				string(frame(t, userLine(0, "old prompt")+titleLine(1, "Old title")+userLine(2, "resumed prompt")+titleLine(3, "Migrated title")))
			staging := filepath.Join(dir, "session.migration.0123456789abcdef.jsonl.zstd.tmp")
			writeFile(t, staging, body)
			before := ix.BytesRead()
			if err := os.Link(staging, filepath.Join(dir, "session.v4.jsonl.zstd")); err != nil {
				t.Fatal(err)
			}
			if err := os.Remove(staging); err != nil {
				t.Fatal(err)
			}
			h.waitFor("migrated generation", func(s *titles.Snapshot) bool {
				e, ok := s.Locate("mig-1")
				return ok && e.Title == "Migrated title" && e.FormatVersion == 4 && strings.HasSuffix(e.Path, "session.v4.jsonl.zstd")
			})
			if read := ix.BytesRead() - before; read > int64(2*len(body)) {
				t.Errorf("read %d bytes to switch to a %d-byte generation", read, len(body))
			}
			snap := ix.Snapshot()
			if len(snap.Sessions) != 1 || len(snap.Skipped) != 0 {
				t.Errorf("sessions %+v, skipped %+v; want the one session", snap.Sessions, snap.Skipped)
			}
			if got, _, err := snap.Candidates(titles.CandidateQuery{Query: "migrated"}); err != nil || len(got) != 1 {
				t.Errorf("candidates for the new title: %+v, %v", got, err)
			}
			if got, _, err := snap.Candidates(titles.CandidateQuery{Query: "old title"}); err != nil || len(got) != 0 {
				t.Errorf("candidates for the old title: %+v, %v", got, err)
			}
			p, err := prepare.PreviewSession(context.Background(), snap, "mig-1", prepare.Limits{})
			if err != nil || p.Err != nil || p.CapturedFormatVersion == nil || *p.CapturedFormatVersion != 4 {
				t.Fatalf("preview %+v, %v", p, err)
			}
			if p.CapturedThroughSeq == nil || *p.CapturedThroughSeq != 3 || len(p.Excerpt) != 2 {
				t.Errorf("preview read %v through seq %v, want the v4 file's two prompts through seq 3", p.Excerpt, p.CapturedThroughSeq)
			}

			// The original is never read again: growing it changes nothing.
			before = ix.BytesRead()
			appendFile(t, oldPath, frame(t, titleLine(2, "Written to the old file")))
			appendFile(t, filepath.Join(dir, "session.v4.jsonl.zstd"), frame(t, titleLine(4, "Newest title")))
			h.waitFor("append to the new generation", titleIs("mig-1", "Newest title"))
			if read := ix.BytesRead() - before; read > int64(2*len(frame(t, titleLine(4, "Newest title")))) {
				t.Errorf("read %d bytes for one appended frame", read)
			}
		})
	}
}
