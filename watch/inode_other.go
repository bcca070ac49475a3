//go:build !unix

package watch

import "io/fs"

// inode is unknown on this platform; size and mtime still detect changes.
func inode(fs.FileInfo) uint64 { return 0 }
