//go:build !unix

// Package cputime reads the CPU time the current process has used, for
// benchmarks that report CPU seconds beside wall time: on a shared machine
// the wall time mostly says how long a step waited for a core, the CPU time
// what it cost.
package cputime

import "time"

// Process is not measured on this platform: it reads as zero.
func Process() time.Duration { return 0 }

// ProcessUsage is not measured on this platform: it reads as zero.
func ProcessUsage() Usage { return Usage{} }

// Measured reports whether Process reads real figures on this platform.
const Measured = false
