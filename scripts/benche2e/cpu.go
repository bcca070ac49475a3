package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// processCPU returns the CPU time the process pid has run so far, summed
// over its threads from /proc/<pid>/task/*/schedstat (nanoseconds, unlike
// the 10 ms ticks of /proc/<pid>/stat), and false where that file does not
// exist (not Linux, or no schedstats). A Go server keeps its threads for
// its lifetime, so no thread's time is lost between two readings.
func processCPU(pid int) (time.Duration, bool) {
	tasks, err := filepath.Glob(filepath.Join("/proc", strconv.Itoa(pid), "task", "*", "schedstat"))
	if err != nil || len(tasks) == 0 {
		return 0, false
	}
	var total time.Duration
	for _, t := range tasks {
		raw, err := os.ReadFile(t)
		if err != nil {
			continue // the thread exited between Glob and ReadFile
		}
		fields := strings.Fields(string(raw))
		if len(fields) == 0 {
			return 0, false
		}
		ns, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil {
			return 0, false
		}
		total += time.Duration(ns)
	}
	return total, true
}
