//go:build unix

package watch

import (
	"io/fs"
	"syscall"
)

// inode returns the file's inode number, or 0 when unknown.
func inode(info fs.FileInfo) uint64 {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Ino)
	}
	return 0
}
