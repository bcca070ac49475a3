//go:build !linux

package editors

import "testing"

// testInCodeServer needs Linux: Node's linux-x64 build, Debian's Chromium.
func testInCodeServer(t *testing.T, _, _ string) {
	t.Skip("the code-server end-to-end test runs on Linux (Node linux-x64, Debian chromium)")
}
