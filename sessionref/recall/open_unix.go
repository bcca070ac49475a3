//go:build unix

package recall

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// openReadWrite opens the regular file at path for reading and writing; a
// symbolic link there is refused (O_NOFOLLOW), as is anything but a
// regular file.
func openReadWrite(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("opening the recall text file: %w", err)
	}
	if info, err := f.Stat(); err != nil || !info.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("recall text file %s is not a regular file", path)
	}
	return f, nil
}
