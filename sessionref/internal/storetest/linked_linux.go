package storetest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/dsh-refls/dsh-refls/internal/dshgen"
	"github.com/dsh-refls/dsh-refls/sessionref/dshlog/layout"
)

// SecretBytes fills a file that is not a log; its first byte is one no
// reason of the reader spells on its own.
const SecretBytes = "Qsecret:$6$SALT$HASHOFTHEPASSWORD:19000:0:99999:7:::\n"

// Linked is a store, beside the healthy sessions, whose session logs are
// symbolic links — to a file outside the root and to a well-formed log
// elsewhere — or a regular file that is not a log.
type Linked struct {
	Root string
	// IDs are the sessions of LinkDirs, then of PlainDir.
	IDs []string
	// LinkDirs are the session directories whose log is a link, PlainDir
	// the one whose log is SecretBytes.
	LinkDirs []string
	PlainDir string
	// Secret is the file outside the root that links point at.
	Secret string
	// Opens watches the link targets, from before the store is read.
	Opens *OpenWatch
}

// WriteLinked writes a Linked store under t.TempDir().
func WriteLinked(t *testing.T) *Linked {
	t.Helper()
	base := t.TempDir()
	root := filepath.Join(base, "store", "sessions")
	WriteHealthy(t, root)
	outside := filepath.Join(base, "outside")
	if err := os.MkdirAll(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(outside, "shadow")
	if err := os.WriteFile(secret, []byte(SecretBytes), 0o600); err != nil {
		t.Fatal(err)
	}
	const linkedID, shadowID, zstdID, plainID = "linked-elsewhere", "linked-shadow", "linked-zstd", "plain-not-a-log"
	elsewhere := filepath.Join(outside, "session.jsonl")
	if err := dshgen.NewSession(linkedID).Cwd(SecCwd).Turn(func(tr *dshgen.Turn) {
		tr.UserText("ELSEWHERE-LOG outside the root")
		tr.Title("Elsewhere", "user")
	}).SaveAs(elsewhere, dshgen.Raw); err != nil {
		t.Fatal(err)
	}
	project := filepath.Join(root, layout.ProjectDir(SecCwd, true))
	place := func(id, name, target string) string {
		dir := filepath.Join(project, layout.EncodeSegment(id))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if target == "" {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(SecretBytes), 0o644); err != nil {
				t.Fatal(err)
			}
		} else if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	l := &Linked{Root: root, Secret: secret, IDs: []string{linkedID, shadowID, zstdID, plainID}}
	l.LinkDirs = []string{
		place(linkedID, "session.jsonl", elsewhere),
		place(shadowID, "session.jsonl", secret),
		place(zstdID, "session.jsonl.zstd", secret),
	}
	l.PlainDir = place(plainID, "session.jsonl", "")
	l.Opens = WatchOpens(t, []string{secret, elsewhere})
	return l
}
