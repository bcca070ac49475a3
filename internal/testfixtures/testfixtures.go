// Package testfixtures finds the dsh-recorded fixtures that live beside the
// repository in ../shared/fixtures. Tests that use them skip, saying why,
// when that directory is absent (a fresh clone).
package testfixtures

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// Dir returns the absolute path of ../shared/fixtures relative to the
// repository root, or skips t when it does not exist.
func Dir(t testing.TB) string {
	t.Helper()
	root, err := RepoRoot()
	if err != nil {
		t.Fatalf("finding the repository root: %v", err)
	}
	dir := filepath.Join(filepath.Dir(root), "shared", "fixtures")
	if _, err := os.Stat(filepath.Join(dir, "expected.json")); err != nil {
		t.Skipf("skipping: the dsh-recorded fixtures are not at %s (%v); CI provides them beside the clone", dir, err)
	}
	return dir
}

// RepoRoot returns the directory holding go.mod, searching upwards from
// the working directory.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", os.ErrNotExist
		}
		dir = parent
	}
}

// Expected is one session of expected.json.
type Expected struct {
	Name               string          `json:"name"`
	SessionID          string          `json:"sessionId"`
	Cwd                *string         `json:"cwd"`
	CreatedAt          int64           `json:"createdAt"`
	Title              *string         `json:"title"`
	DisplayTitle       string          `json:"displayTitle"`
	CapturedThroughSeq *int64          `json:"capturedThroughSeq"`
	Mention            string          `json:"mention"`
	URI                string          `json:"uri"`
	Snapshot           json.RawMessage `json:"snapshot65536"`
	RelativeDir        string          `json:"relativeDir"`
}

// LoadExpected reads expected.json from the fixtures directory.
func LoadExpected(t testing.TB, dir string) []Expected {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, "expected.json"))
	if err != nil {
		t.Fatalf("reading expected.json: %v", err)
	}
	var out []Expected
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("decoding expected.json: %v", err)
	}
	if len(out) == 0 {
		t.Fatal("expected.json lists no sessions")
	}
	return out
}

// SameJSON reports whether two JSON texts hold the same value, whatever
// their spacing, key order or escaping.
func SameJSON(t testing.TB, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatalf("decoding %s: %v", a, err)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatalf("decoding %s: %v", b, err)
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return string(xa) == string(ya)
}
