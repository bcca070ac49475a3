package server

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when a test leaves goroutines behind: every
// connection, watcher and debounce timer must end with its Serve call.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
