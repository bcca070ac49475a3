package editors

import (
	"bufio"
	"encoding/json"
	"os"
	"testing"
)

// ranEnv names the `go test -json` output of an earlier step of the same
// CI run (.ci/run sets it, only for the run that wrote the file). A test
// that passed there is not run a second time in the README's test command.
const ranEnv = "DSH_REFLS_CI_RAN"

// skipIfPassedEarlier skips t when the file named by DSH_REFLS_CI_RAN
// records a pass of this package's test of t's name, and says so; a
// failed, skipped or missing earlier run runs the test here.
func skipIfPassedEarlier(t *testing.T) {
	t.Helper()
	path := os.Getenv(ranEnv)
	if path == "" {
		return
	}
	f, err := os.Open(path)
	if err != nil {
		t.Logf("%s=%s: %v; running the test here", ranEnv, path, err)
		return
	}
	defer f.Close()
	const pkg = "github.com/dsh-refls/dsh-refls/editors"
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		var ev struct{ Action, Package, Test string }
		if json.Unmarshal(sc.Bytes(), &ev) != nil {
			continue
		}
		if ev.Action == "pass" && ev.Package == pkg && ev.Test == t.Name() {
			t.Skipf("passed earlier in this CI run (its events: %s), not run twice", path)
		}
	}
	if err := sc.Err(); err != nil {
		t.Logf("reading %s: %v; running the test here", path, err)
	}
}
