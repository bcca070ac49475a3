package cputime

import (
	"testing"
	"time"
)

func TestProcessGrowsWithWork(t *testing.T) {
	if !Measured {
		t.Skip("CPU time is not measured on this platform")
	}
	before := Process()
	if before <= 0 {
		t.Fatalf("Process() = %v before any work, want > 0 (the test binary has already run)", before)
	}
	// Spin until the clock has moved by a visible amount of CPU time; a
	// Process that never grows fails at the deadline.
	deadline := time.Now().Add(10 * time.Second)
	x := 0
	for Process()-before < 20*time.Millisecond {
		for i := 0; i < 1_000_000; i++ {
			x += i ^ x
		}
		if time.Now().After(deadline) {
			t.Fatalf("Process() grew %v in 10 s of spinning, want ≥ 20ms", Process()-before)
		}
	}
	_ = x
}

func TestProcessUsageSplitsTheCPUTimeItCounts(t *testing.T) {
	if !Measured {
		t.Skip("CPU time is not measured on this platform")
	}
	u0 := ProcessUsage()
	// Touch 64 MiB of fresh memory: each new page is a minor fault.
	b := make([]byte, 64<<20)
	for i := 0; i < len(b); i += 4096 {
		b[i] = 1
	}
	d := ProcessUsage().Sub(u0)
	if d.User < 0 || d.System < 0 || d.MinorFaults < 0 || d.MajorFaults < 0 {
		t.Fatalf("a usage went down: %+v", d)
	}
	// 16,384 pages of 4 KiB, or 32 huge pages of 2 MiB where the kernel
	// gives those.
	if d.MinorFaults < 32 {
		t.Errorf("touching 64 MiB of new memory counted %d minor faults, want at least 32", d.MinorFaults)
	}
	if u := ProcessUsage(); u.CPU() != u.User+u.System || u.CPU() < u0.CPU() {
		t.Errorf("CPU() = %v of user %v and system %v, before %v", u.CPU(), u.User, u.System, u0.CPU())
	}
	_ = b[len(b)-1]
}
