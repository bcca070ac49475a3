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
	return sharedDir(t, "fixtures")
}

// DirV4 returns the absolute path of ../shared/fixtures-v4 (dsh-recorded
// logs of format v4), or skips t when it does not exist.
func DirV4(t testing.TB) string {
	t.Helper()
	return sharedDir(t, "fixtures-v4")
}

func sharedDir(t testing.TB, name string) string {
	t.Helper()
	root, err := RepoRoot()
	if err != nil {
		t.Fatalf("finding the repository root: %v", err)
	}
	dir := filepath.Join(filepath.Dir(root), "shared", name)
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
	// The fields below are in the v4 set only.
	FormatVersion         int             `json:"formatVersion"`
	CapturedFormatVersion *int            `json:"capturedFormatVersion"`
	SnapshotTruncated     *Truncated      `json:"snapshotTruncated"`
	ReadFailed            json.RawMessage `json:"readFailed"`
	LogFile               string          `json:"logFile"`
}

// Truncated is a snapshot at a budget small enough to force retention.
type Truncated struct {
	MaxBytes int             `json:"maxBytes"`
	Data     json.RawMessage `json:"data"`
	Stats    json.RawMessage `json:"stats"`
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
