// Package longtest marks the tests that run for many seconds — storms of
// thousands of requests, the soak, 64 MB lines, a client that stops
// reading — so that the main `go test -race ./...` stays short. They run in
// CI's step of their own (scripts/long-tests.sh, which finds them with
// ./internal/longtest/list and sets EnvVar); anywhere else they skip and
// say how to run them, which scripts/testreport lists.
package longtest

import (
	"os"
	"testing"
)

// EnvVar switches the long tests on when it is "1".
const EnvVar = "DSH_REFLS_LONG_TESTS"

// Enabled reports whether the long tests run in this process; a test
// that calls it (to run a smaller case in the main run) is listed for the
// long step as well.
func Enabled() bool { return os.Getenv(EnvVar) == "1" }

// Require skips t unless the long tests are enabled. Call it first in the
// test function (or a subtest of it): the lister finds long tests by this
// call in their body.
func Require(t testing.TB) {
	t.Helper()
	if !Enabled() {
		t.Skipf("long test: runs in CI's long step (scripts/long-tests.sh); set %s=1 to run it here", EnvVar)
	}
}
