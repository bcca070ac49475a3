package storetest

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/dsh-refls/dsh-refls/internal/dshgen"
	"github.com/dsh-refls/dsh-refls/sessionref/dshlog/layout"
)

// SecCwd is the cwd of every session the path tests write.
const SecCwd = "/work/sec"

// HostileIDs are session ids made of path syntax. Each must reach the file
// system only as layout.EncodeSegment(id), one directory below its project.
var HostileIDs = []string{
	"../../etc/passwd",
	"../../outside",
	"../evil",
	"a/b",
	"..",
	".",
	"...",
	"a\x00b",
	`..\..\outside`,
	`a\b`,
	`C:\evil`,
	"/abs/evil",
	"~002E~002E",
}

// NaiveLogPath is where a reader that joined the raw id into a path would
// look for the log of id.
func NaiveLogPath(root, id string) string {
	return filepath.Join(root, layout.ProjectDir(SecCwd, true), id, "session.jsonl")
}

// TemptingSession is a well-formed log for id whose text gives away where
// it was read from.
func TemptingSession(id string) *dshgen.Session {
	return dshgen.NewSession(id).Cwd(SecCwd).Turn(func(t *dshgen.Turn) {
		t.UserText("TEMPTING-LOG read from a path built from the raw id " + id)
		t.Title("Tempting", "user")
		t.AssistantText("TEMPTING-LOG reply")
	})
}

// RealSession is the session dsh itself would write for id.
func RealSession(id string) *dshgen.Session {
	return dshgen.NewSession(id).Cwd(SecCwd).Turn(func(t *dshgen.Turn) {
		t.UserText("REAL-LOG of a session with a hostile id")
		t.Title("Real", "user")
		t.AssistantText("REAL-LOG reply")
	})
}

// WriteTempting writes a tempting log at the naive path of every hostile id
// that names a possible path, and returns the paths a reader has no reason
// to open: those outside the root and those inside it but off the layout of
// §1.1. A naive path that is itself a well-placed session directory (a
// backslash is an ordinary name byte on Linux) is scanned legitimately and
// must fail the identity check instead.
func WriteTempting(t *testing.T, root string) (forbidden []string) {
	t.Helper()
	for _, id := range HostileIDs {
		if strings.ContainsRune(id, 0) || EncodedInPlace(id) {
			continue // no path holds a NUL; an id that encodes to itself is its own real path
		}
		path := NaiveLogPath(root, id)
		if err := TemptingSession(id).SaveAs(path, dshgen.Raw); err != nil {
			t.Fatalf("writing tempting log for %q: %v", id, err)
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			t.Fatal(err)
		}
		parts := strings.Split(rel, string(filepath.Separator))
		inLayout := len(parts) == 3 && parts[0] != ".." && parts[2] == "session.jsonl"
		if !inLayout {
			forbidden = append(forbidden, path)
			if parts[0] == ".." { // outside the root: its directory too
				forbidden = append(forbidden, filepath.Dir(path))
			}
		}
	}
	return forbidden
}

// EncodedInPlace reports whether id is its own directory name ("..." is a
// plain name, not path syntax).
func EncodedInPlace(id string) bool { return layout.EncodeSegment(id) == id }
