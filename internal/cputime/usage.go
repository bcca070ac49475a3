package cputime

import "time"

// Usage is what a process used: CPU time in user and in system (kernel)
// mode, and page faults, minor (the page was in memory) and major (it was
// read from disk). Where a measured step took longer than its kind
// usually does, the split says whether the kernel's work, on the
// process's behalf, made the difference.
type Usage struct {
	User, System             time.Duration
	MinorFaults, MajorFaults int64
}

// CPU is the user and system time together.
func (u Usage) CPU() time.Duration { return u.User + u.System }

// Sub is what was used from u0 to u.
func (u Usage) Sub(u0 Usage) Usage {
	return Usage{
		User:        u.User - u0.User,
		System:      u.System - u0.System,
		MinorFaults: u.MinorFaults - u0.MinorFaults,
		MajorFaults: u.MajorFaults - u0.MajorFaults,
	}
}
