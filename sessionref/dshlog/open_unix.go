//go:build unix

package dshlog

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// OpenRegular opens a file for reading (a log, a cache; what names it in
// errors), refusing anything but a regular file
// at path itself: O_NOFOLLOW refuses a symbolic link (which could lead out
// of the sessions root, or to another session's log), and O_NONBLOCK keeps
// a FIFO from blocking the open; its type is then refused like a device's.
func OpenRegular(path, what string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
	if err != nil {
		if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.EMLINK) {
			return nil, fmt.Errorf("%s %s is a symbolic link; only regular files are read", what, path)
		}
		return nil, fmt.Errorf("opening %s: %w", what, err)
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("inspecting %s: %w", what, err)
	}
	if !info.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%s %s is not a regular file (%s)", what, path, info.Mode().Type())
	}
	return f, nil
}

// StatIdentity lstats path without building an os.FileInfo (a restart
// stats every log, so the allocation per call shows). A symbolic link is
// described as itself, never as what it points to.
func StatIdentity(path string) (FileIdentity, error) {
	var st unix.Stat_t
	if err := unix.Lstat(path, &st); err != nil {
		return FileIdentity{}, &os.PathError{Op: "lstat", Path: path, Err: err}
	}
	return FileIdentity{Size: st.Size, ModTime: st.Mtim.Nano(), Inode: uint64(st.Ino), Device: uint64(st.Dev)}, nil
}
