package ignore

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"syscall"
)

// MaxFileBytes is the largest ignore file read. Real ignore files are a
// few kilobytes; a larger one is skipped with a reported reason rather
// than read, so that a hostile or mistaken file (a sparse multi-gigabyte
// file, a device behind a symlink) cannot grow memory without bound.
const MaxFileBytes = 1 << 20

// maxConfigBytes bounds a git configuration file the same way.
const maxConfigBytes = 4 << 20

// maxSmallFileBytes bounds the one-line files of a git directory (a
// ".git" file holding "gitdir: …", commondir).
const maxSmallFileBytes = 64 << 10

// errNotRegular reports a path that exists but is not a regular file:
// a FIFO (which would block the reader), a device (/dev/zero never ends),
// a directory, or — when links are not followed — a symlink.
var errNotRegular = errors.New("not a regular file")

// readRegular reads the regular file at path, at most limit bytes. It
// never blocks on a FIFO or reads a device: the file is opened without
// waiting for a writer and must be regular once open. With follow false
// a symlink at path is refused instead of followed. A missing file gives
// (nil, fs.ErrNotExist-wrapping error). fi describes the file read.
func readRegular(path string, follow bool, limit int64) (data []byte, fi fs.FileInfo, err error) {
	f, err := openNonBlocking(path, follow)
	if err != nil {
		if isSymlinkRefusal(err) {
			return nil, nil, fmt.Errorf("%s is a symlink, which is not followed: %w", path, errNotRegular)
		}
		return nil, nil, err
	}
	defer f.Close()
	fi, err = f.Stat()
	if err != nil {
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, nil, fmt.Errorf("%s is a %s: %w", path, modeName(fi.Mode()), errNotRegular)
	}
	if fi.Size() > limit {
		return nil, nil, fmt.Errorf("%s holds %d bytes, more than the %d read: skipped", path, fi.Size(), limit)
	}
	data, err = io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, nil, err
	}
	if int64(len(data)) > limit {
		return nil, nil, fmt.Errorf("%s grew past %d bytes while read: skipped", path, limit)
	}
	return data, fi, nil
}

// modeName names the type of a file for messages.
func modeName(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "directory"
	case m&fs.ModeNamedPipe != 0:
		return "FIFO"
	case m&fs.ModeCharDevice != 0:
		return "character device"
	case m&fs.ModeDevice != 0:
		return "device"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeSymlink != 0:
		return "symlink"
	}
	return "special file"
}

// isAbsent reports an error that means "no such file": git treats a
// missing ignore or config file as empty.
func isAbsent(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}
