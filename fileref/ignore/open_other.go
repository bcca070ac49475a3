//go:build !unix

package ignore

import (
	"errors"
	"io/fs"
	"os"
)

// errSymlink is returned when a symlink is refused.
var errSymlink = errors.New("symlink not followed")

// openNonBlocking opens path for reading; unless follow is set, a symlink
// at path is refused. Without FIFOs that block an open, a check before
// opening suffices here.
func openNonBlocking(path string, follow bool) (*os.File, error) {
	if !follow {
		fi, err := os.Lstat(path)
		if err != nil {
			return nil, err
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return nil, errSymlink
		}
	}
	return os.Open(path)
}

// isSymlinkRefusal reports the error of a refused symlink.
func isSymlinkRefusal(err error) bool { return errors.Is(err, errSymlink) }
