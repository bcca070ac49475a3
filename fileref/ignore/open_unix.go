//go:build unix

package ignore

import (
	"errors"
	"os"
	"syscall"
)

// openNonBlocking opens path for reading without waiting for a writer
// (O_NONBLOCK: opening a FIFO returns at once) and, unless follow is set,
// without following a symlink in its last component (O_NOFOLLOW).
func openNonBlocking(path string, follow bool) (*os.File, error) {
	flags := os.O_RDONLY | syscall.O_NONBLOCK
	if !follow {
		flags |= syscall.O_NOFOLLOW
	}
	return os.OpenFile(path, flags, 0)
}

// isSymlinkRefusal reports the error O_NOFOLLOW gives for a symlink.
func isSymlinkRefusal(err error) bool { return errors.Is(err, syscall.ELOOP) }
