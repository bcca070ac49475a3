//go:build !unix

package recall

import (
	"fmt"
	"os"
)

// openReadWrite opens the regular file at path for reading and writing;
// anything but a regular file there, a link included, is refused: the
// file opened must be the one path names itself.
func openReadWrite(path string) (*os.File, error) {
	before, err := os.Lstat(path)
	if err != nil {
		return nil, fmt.Errorf("opening the recall text file: %w", err)
	}
	if !before.Mode().IsRegular() {
		return nil, fmt.Errorf("recall text file %s is not a regular file", path)
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, fmt.Errorf("opening the recall text file: %w", err)
	}
	if after, err := f.Stat(); err != nil || !os.SameFile(before, after) {
		f.Close()
		return nil, fmt.Errorf("recall text file %s changed while being opened", path)
	}
	return f, nil
}
