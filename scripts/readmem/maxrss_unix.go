//go:build unix

package main

import (
	"os"
	"syscall"
)

// maxRSS is the peak resident set of a finished process as getrusage
// reports it (KiB on Linux, bytes on macOS), or 0 when unknown.
func maxRSS(ps *os.ProcessState) int64 {
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok && ru != nil {
		return int64(ru.Maxrss)
	}
	return 0
}
