//go:build unix

package prepare

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// createSpillFile creates root/dirName/name for writing. root, which the
// user configured, may be reached through links; dirName is created and
// opened relative to root's descriptor with O_NOFOLLOW, so a link planted in
// its place (by anyone who can write to root) is refused instead of
// redirecting the file or having its target's mode changed. Both
// directories must be owned by this user; their group and other permission
// bits are removed through the descriptor (securePrivateDir). The file is created
// exclusively, O_NOFOLLOW, 0600. A taken name is os.ErrExist.
func createSpillFile(root, dirName, name string) (*os.File, error) {
	if err := os.MkdirAll(root, 0o700); err != nil {
		return nil, fmt.Errorf("creating spill directory: %w", err)
	}
	rootFD, err := unix.Open(root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("opening spill directory %s: %w", root, err)
	}
	defer unix.Close(rootFD)
	if err := securePrivateDir(rootFD, root); err != nil {
		return nil, err
	}
	dirPath := filepath.Join(root, dirName)
	if err := unix.Mkdirat(rootFD, dirName, 0o700); err != nil && !errors.Is(err, unix.EEXIST) {
		return nil, fmt.Errorf("creating spill directory %s: %w", dirPath, err)
	}
	dirFD, err := unix.Openat(rootFD, dirName, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) {
			return nil, fmt.Errorf("spill directory %s is a link or not a directory; refusing it", dirPath)
		}
		return nil, fmt.Errorf("opening spill directory %s: %w", dirPath, err)
	}
	defer unix.Close(dirFD)
	if err := securePrivateDir(dirFD, dirPath); err != nil {
		return nil, err
	}
	path := filepath.Join(dirPath, name)
	fd, err := unix.Openat(dirFD, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		if errors.Is(err, unix.EEXIST) {
			return nil, fmt.Errorf("spill file %s: %w", path, os.ErrExist)
		}
		return nil, fmt.Errorf("creating spill file %s: %w", path, err)
	}
	return os.NewFile(uintptr(fd), path), nil
}

// securePrivateDir checks that the open directory fd belongs to this user
// and removes its group and other permission bits through the descriptor.
// The owner's bits stay as they are: a root its owner made read-only
// (0555) becomes 0500, not 0700, and the save then fails.
func securePrivateDir(fd int, path string) error {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return fmt.Errorf("inspecting spill directory %s: %w", path, err)
	}
	if uint64(st.Uid) != uint64(os.Geteuid()) {
		return fmt.Errorf("spill directory %s belongs to uid %d, not to this user; refusing it", path, st.Uid)
	}
	if mode := uint32(st.Mode) & 0o7777; mode&0o077 != 0 {
		if err := unix.Fchmod(fd, mode&0o700); err != nil {
			return fmt.Errorf("securing spill directory %s: %w", path, err)
		}
	}
	return nil
}
