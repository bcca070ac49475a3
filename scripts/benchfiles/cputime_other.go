//go:build !unix

package main

import "time"

// cpuTime is unknown where getrusage does not exist; the benchmark then
// reports 0 CPU time and its wall-clock numbers only.
func cpuTime() time.Duration { return 0 }
