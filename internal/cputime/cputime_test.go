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
