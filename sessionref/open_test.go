//go:build linux

package sessionref_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dsh-refls/dsh-refls/internal/dshgen"
	"github.com/dsh-refls/dsh-refls/sessionref"
	"github.com/dsh-refls/dsh-refls/sessionref/dshlog"
)

// secretBytes opens a file that is not a log; its first byte is one no
// reason of the package spells on its own.
const secretBytes = "Qsecret:$6$SALT$HASHOFTHEPASSWORD:19000:0:99999:7:::\n"

// TestSymlinkedLogsAreNotFollowed places session logs that are symbolic
// links — to a file outside the root and to a well-formed log elsewhere —
// and a regular non-log file: the links are skipped as links without being
// opened, nothing is listed or prepared through them, and no skip reason
// quotes a byte of any file.
func TestSymlinkedLogsAreNotFollowed(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "store", "sessions")
	writeHealthy(t, root)
	outside := filepath.Join(base, "outside")
	if err := os.MkdirAll(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(outside, "shadow")
	if err := os.WriteFile(secret, []byte(secretBytes), 0o600); err != nil {
		t.Fatal(err)
	}
	const linkedID, shadowID, zstdID, plainID = "linked-elsewhere", "linked-shadow", "linked-zstd", "plain-not-a-log"
	elsewhere := filepath.Join(outside, "session.jsonl")
	if err := dshgen.NewSession(linkedID).Cwd(secCwd).Turn(func(tr *dshgen.Turn) {
		tr.UserText("ELSEWHERE-LOG outside the root")
		tr.Title("Elsewhere", "user")
	}).SaveAs(elsewhere, dshgen.Raw); err != nil {
		t.Fatal(err)
	}
	project := filepath.Join(root, dshlog.ProjectDir(secCwd, true))
	place := func(id, name, target string) string {
		dir := filepath.Join(project, dshlog.EncodeSegment(id))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if target == "" {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(secretBytes), 0o644); err != nil {
				t.Fatal(err)
			}
		} else if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	linkDirs := []string{
		place(linkedID, "session.jsonl", elsewhere),
		place(shadowID, "session.jsonl", secret),
		place(zstdID, "session.jsonl.zstd", secret),
	}
	plainDir := place(plainID, "session.jsonl", "")
	opens := watchOpens(t, []string{secret, elsewhere})

	ix := buildIndex(t, root, sessionref.IndexOptions{})
	snap := ix.Snapshot()
	reasons := map[string]string{}
	for _, s := range snap.Skipped {
		reasons[s.Path] = s.Reason
		if strings.Contains(s.Reason, "Q") || strings.Contains(s.Reason, "secret") || strings.Contains(s.Reason, "ELSEWHERE") {
			t.Errorf("skip reason of %s quotes file bytes: %q", s.Path, s.Reason)
		}
	}
	for _, dir := range linkDirs {
		if r := reasons[dir]; !strings.Contains(r, "symbolic link") {
			t.Errorf("%s: skip reason %q, want it to name the symbolic link", dir, r)
		}
	}
	if r := reasons[plainDir]; !strings.Contains(r, "header unreadable") {
		t.Errorf("%s: skip reason %q, want an unreadable header", plainDir, r)
	}
	for _, id := range []string{linkedID, shadowID, zstdID, plainID} {
		if _, ok := snap.Locate(id); ok {
			t.Errorf("%q is listed", id)
		}
		_, err := prepareOne(context.Background(), snap, id, sessionref.Limits{})
		wantReadFailed(t, err, id)
	}
	text := "see " + sessionref.Mention("Elsewhere", linkedID)
	if _, err := sessionref.PrepareText(context.Background(), snap, targetID, text, sessionref.ModeReplace, nil, sessionref.Limits{}); err == nil {
		t.Errorf("a mention of the linked session was prepared")
	}
	if got := opens.drain(t); len(got) > 0 {
		t.Errorf("link targets were opened: %v", got)
	}
	opens.control(t, secret)
	checkHealthyUnchanged(t, snap)
}
