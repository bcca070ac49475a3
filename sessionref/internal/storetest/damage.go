package storetest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/dsh-refls/dsh-refls/internal/dshgen"
	"github.com/dsh-refls/dsh-refls/sessionref"
	"github.com/dsh-refls/dsh-refls/sessionref/titles"
)

// WantReadFailed fails the test unless err is READ_FAILED naming id.
func WantReadFailed(t testing.TB, err error, id string) *sessionref.Error {
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

// TitleAfterDamage is the title TitleAfterCorruptFrame appends.
const TitleAfterDamage = "Title after the damage"

// TitleAfterCorruptFrame writes the healthy sessions and the
// checksum-failure case, and appends a frame with a new title,
// TitleAfterDamage, after the damaged one: before the index is first
// built, or after it and then refreshed. It returns the index and the
// damaged session's id.
func TitleAfterCorruptFrame(t *testing.T, afterBuild bool) (*titles.Index, string) {
	t.Helper()
	root := filepath.Join(t.TempDir(), "sessions")
	WriteHealthy(t, root)
	c, err := dshgen.ChecksumFailure(root)
	if err != nil {
		t.Fatal(err)
	}
	want := *c.Expected
	later := fmt.Sprintf(`{"type":"session/title","seq":%d,"time":%d,"data":{"title":%q,"messageSeqs":[1],"source":{"kind":"user"}}}`+"\n",
		want.LastSeq+1, want.CreatedAt+100000, TitleAfterDamage)
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
	if !afterBuild {
		appendFrame()
		return BuildIndex(t, root, titles.IndexOptions{}), want.ID
	}
	ix := BuildIndex(t, root, titles.IndexOptions{})
	appendFrame()
	if err := ix.Refresh(context.Background(), c.Paths); err != nil {
		t.Fatalf("Refresh: %v", err)
	}
	return ix, want.ID
}

// SpecialFiles are the files that are no log, put where a log belongs.
var SpecialFiles = []struct {
	Name string
	Make func(path string) error
}{
	{"directory", func(p string) error { return os.Mkdir(p, 0o755) }},
	{"fifo", Mkfifo},
}

// SpecialFileStore writes the healthy sessions and makeSpecial's file
// where the log of the session "special-log" belongs, and builds the index
// over them; a build that blocks on the file fails the test. It skips
// where the file system has no such file.
func SpecialFileStore(t *testing.T, name string, makeSpecial func(path string) error) (root string, ix *titles.Index, special string) {
	t.Helper()
	root = filepath.Join(t.TempDir(), "sessions")
	WriteHealthy(t, root)
	special = filepath.Join(dshgen.SessionDir(root, "special-log", "/work/special", true), "session.jsonl")
	if err := os.MkdirAll(filepath.Dir(special), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := makeSpecial(special); errors.Is(err, errors.ErrUnsupported) {
		t.Skipf("no %s on %s", name, runtime.GOOS)
	} else if err != nil {
		t.Fatal(err)
	}
	ix = titles.NewIndex(root, titles.IndexOptions{})
	if err := UnblockAfter(t, special, func() error { return ix.Build(context.Background(), nil) }); err != nil {
		t.Fatalf("Build: %v", err)
	}
	return root, ix, special
}

// UnreadableDir runs check on a store whose session directory
// "case-unreadable-dir", dir, this process cannot read, beside the
// healthy sessions. As root (which reads mode-000 directories) it runs
// the test named test again in a copy of the test binary as "nobody"
// (RunUnprivileged), which finds the store through the variable env and
// calls check.
func UnreadableDir(t *testing.T, test, env string, check func(t *testing.T, root, dir string)) {
	t.Helper()
	checkAt := func(root string) {
		dir := dshgen.SessionDir(root, "case-unreadable-dir", "/work/cases/perm", true)
		if !dshgen.PermissionsEnforced(dir) {
			t.Fatalf("uid %d can read %s: the case was not produced", os.Getuid(), dir)
		}
		check(t, root, dir)
	}
	if root := os.Getenv(env); root != "" {
		checkAt(root)
		return
	}
	base := t.TempDir()
	root := filepath.Join(base, "sessions")
	WriteHealthy(t, root)
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
		checkAt(root)
		return
	}
	RunUnprivileged(t, base, test, env+"="+root)
}
