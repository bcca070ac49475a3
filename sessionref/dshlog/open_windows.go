//go:build windows

package dshlog

import (
	"fmt"
	"os"

	"golang.org/x/sys/windows"
)

// OpenRegular opens a file for reading (a log, a cache; what names it in
// errors), refusing anything but a regular file
// at path itself: FILE_FLAG_OPEN_REPARSE_POINT opens a symbolic link or
// junction as itself, which is then refused, and a pipe or device is
// refused by its type.
func OpenRegular(path, what string) (*os.File, error) {
	h, err := openNoFollow(path, 0)
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", what, err)
	}
	var info windows.ByHandleFileInformation
	if err := windows.GetFileInformationByHandle(h, &info); err != nil {
		windows.CloseHandle(h)
		return nil, fmt.Errorf("inspecting %s %s: %w", what, path, err)
	}
	if info.FileAttributes&windows.FILE_ATTRIBUTE_REPARSE_POINT != 0 {
		windows.CloseHandle(h)
		return nil, fmt.Errorf("%s %s is a symbolic link; only regular files are read", what, path)
	}
	if t, _ := windows.GetFileType(h); t != windows.FILE_TYPE_DISK || info.FileAttributes&windows.FILE_ATTRIBUTE_DIRECTORY != 0 {
		windows.CloseHandle(h)
		return nil, fmt.Errorf("%s %s is not a regular file", what, path)
	}
	return os.NewFile(uintptr(h), path), nil
}

// openNoFollow opens path itself for reading, a reparse point included.
func openNoFollow(path string, extra uint32) (windows.Handle, error) {
	p, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return windows.InvalidHandle, &os.PathError{Op: "open", Path: path, Err: err}
	}
	h, err := windows.CreateFile(p, windows.GENERIC_READ,
		windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE, nil,
		windows.OPEN_EXISTING, windows.FILE_FLAG_OPEN_REPARSE_POINT|extra, 0)
	if err != nil {
		return windows.InvalidHandle, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return h, nil
}

// StatIdentity describes path itself (a link is not followed) by size,
// modification time and file index.
func StatIdentity(path string) (FileIdentity, error) {
	h, err := openNoFollow(path, windows.FILE_FLAG_BACKUP_SEMANTICS)
	if err != nil {
		return FileIdentity{}, err
	}
	defer windows.CloseHandle(h)
	var info windows.ByHandleFileInformation
	if err := windows.GetFileInformationByHandle(h, &info); err != nil {
		return FileIdentity{}, &os.PathError{Op: "stat", Path: path, Err: err}
	}
	return FileIdentity{
		Size:    int64(info.FileSizeHigh)<<32 | int64(info.FileSizeLow),
		ModTime: info.LastWriteTime.Nanoseconds(),
		Inode:   uint64(info.FileIndexHigh)<<32 | uint64(info.FileIndexLow),
		Device:  uint64(info.VolumeSerialNumber),
	}, nil
}
