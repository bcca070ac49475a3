//go:build !unix

package sessionref_test

import "time"

// processCPU is not measured here: the benchmark then reports wall-clock
// MB/s only.
func processCPU() time.Duration { return 0 }
