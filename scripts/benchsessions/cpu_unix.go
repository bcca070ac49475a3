//go:build unix

package main

import (
	"syscall"
	"time"
)

// processCPU is the user and system CPU time this process used so far (all
// threads, the collector's included): on a shared machine it says what a
// step costs when the wall time mostly says how long it waited for a core.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
