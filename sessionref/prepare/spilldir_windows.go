//go:build windows

package prepare

import (
	"fmt"
	"os"
	"path/filepath"
)

// createSpillFile creates root/dirName/name for writing. Windows has no
// POSIX modes: the files are protected by the ACL they inherit, which for
// the default spill directory under %LocalAppData% grants only the user,
// SYSTEM and administrators. dirName is refused when it is a symbolic link
// or junction (a reparse point, which Lstat reports as a link or as
// irregular), and the file is created exclusively. A taken name is
// os.ErrExist.
func createSpillFile(root, dirName, name string) (*os.File, error) {
	dirPath := filepath.Join(root, dirName)
	if err := os.MkdirAll(dirPath, 0o700); err != nil {
		return nil, fmt.Errorf("creating spill directory: %w", err)
	}
	info, err := os.Lstat(dirPath)
	if err != nil {
		return nil, fmt.Errorf("inspecting spill directory %s: %w", dirPath, err)
	}
	if !info.IsDir() || info.Mode()&(os.ModeSymlink|os.ModeIrregular) != 0 {
		return nil, fmt.Errorf("spill directory %s is a link or not a directory; refusing it", dirPath)
	}
	path := filepath.Join(dirPath, name)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("creating spill file %s: %w", path, err)
	}
	return f, nil
}
