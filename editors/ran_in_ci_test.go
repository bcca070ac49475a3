package editors

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"testing"
	"time"
)

// ranEnv names the `go test -json` output of an earlier step of the same
// CI run (.ci/run sets it, only for the run that wrote the file). A test
// that passed there is not run a second time in the README's test command.
const ranEnv = "DSH_REFLS_CI_RAN"

// ranPartSuffix marks the events while that step still runs: .ci/run
// writes them to the path plus this suffix and renames the file to the
// path when the step ends, so the README's command, which starts before
// the step ends, waits for its verdict.
const ranPartSuffix = ".part"

// ranWaitMargin is the part of the test binary's deadline that waiting
// for the step leaves to running the test here.
const ranWaitMargin = 5 * time.Minute

// skipIfPassedEarlier skips t when the file named by DSH_REFLS_CI_RAN
// records a pass of this package's test of t's name, and says so; a
// failed, skipped or missing earlier run runs the test here.
func skipIfPassedEarlier(t *testing.T) {
	t.Helper()
	path := os.Getenv(ranEnv)
	if path == "" {
		return
	}
	deadline := time.Now().Add(15 * time.Minute)
	if d, ok := t.Deadline(); ok {
		deadline = d.Add(-ranWaitMargin)
	}
	passed, err := passedIn(path, t.Name(), deadline, nil)
	if err != nil {
		t.Logf("%s=%s: %v; running the test here", ranEnv, path, err)
		return
	}
	if passed {
		t.Skipf("passed earlier in this CI run (its events: %s), not run twice", path)
	}
}

// passedIn reports whether the `go test -json` events at path record a
// pass of this package's test name, waiting until deadline while the step
// still writes them; waiting, when not nil, is called once when the wait
// begins. An error says why the events could not be read.
func passedIn(path, name string, deadline time.Time, waiting func()) (bool, error) {
	if err := waitForEvents(path, deadline, waiting); err != nil {
		return false, err
	}
	f, err := os.Open(path)
	if err != nil {
		return false, err
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
		if ev.Action == "pass" && ev.Package == pkg && ev.Test == name {
			return true, nil
		}
	}
	if err := sc.Err(); err != nil {
		return false, fmt.Errorf("reading %s: %w", path, err)
	}
	return false, nil
}

// waitForEvents returns nil once path exists. While path+ranPartSuffix
// exists instead, the step is still running, and it waits (polling,
// until deadline); with neither file there, nothing will write path.
func waitForEvents(path string, deadline time.Time, waiting func()) error {
	for told := false; ; {
		if _, err := os.Stat(path); err == nil {
			return nil
		}
		if _, err := os.Stat(path + ranPartSuffix); err != nil {
			// The step may have renamed the file between the two looks.
			if _, err := os.Stat(path); err == nil {
				return nil
			}
			return fmt.Errorf("no such file, and no step writing %s%s", path, ranPartSuffix)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the step writing %s%s had not ended by %s", path, ranPartSuffix, deadline.Format(time.TimeOnly))
		}
		if !told && waiting != nil {
			waiting()
			told = true
		}
		time.Sleep(100 * time.Millisecond)
	}
}
