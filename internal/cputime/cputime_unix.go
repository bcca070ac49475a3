//go:build unix

// Package cputime reads the CPU time the current process has used, for
// benchmarks that report CPU seconds beside wall time: on a shared machine
// the wall time mostly says how long a step waited for a core, the CPU time
// what it cost.
package cputime

import (
	"syscall"
	"time"
)

// Process is the user and system CPU time this process has used so far,
// every thread's (the collector's included). It is zero where the platform
// does not say (see Measured).
func Process() time.Duration { return ProcessUsage().CPU() }

// ProcessUsage is what this process has used so far, every thread's: CPU
// time split into user and system time, and page faults. It is zero where
// the platform does not say (see Measured).
func ProcessUsage() Usage {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return Usage{}
	}
	return Usage{
		User:        time.Duration(ru.Utime.Nano()),
		System:      time.Duration(ru.Stime.Nano()),
		MinorFaults: int64(ru.Minflt),
		MajorFaults: int64(ru.Majflt),
	}
}

// Measured reports whether Process reads real figures on this platform.
const Measured = true
