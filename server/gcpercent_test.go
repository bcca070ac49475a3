package server

import (
	"runtime/debug"
	"testing"
)

// gcPercent reads the collector's target (SetGCPercent returns the old one).
func gcPercent() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

func TestGCLoweringRestoresTheTargetAfterTheLastHolder(t *testing.T) {
	orig := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(orig) })

	var g gcLowering
	first := g.lower(25)
	if got := gcPercent(); got != 25 {
		t.Fatalf("target while lowered = %d, want 25", got)
	}
	second := g.lower(25)
	first()
	first() // a second call of the same restore changes nothing
	if got := gcPercent(); got != 25 {
		t.Fatalf("target with one holder left = %d, want 25", got)
	}
	second()
	if got := gcPercent(); got != 100 {
		t.Fatalf("target after the last holder = %d, want 100 (what it was)", got)
	}
}

func TestGCLoweringKeepsALowerTarget(t *testing.T) {
	orig := debug.SetGCPercent(10)
	t.Cleanup(func() { debug.SetGCPercent(orig) })

	var g gcLowering
	restore := g.lower(25)
	if got := gcPercent(); got != 10 {
		t.Errorf("target while lowered = %d, want 10 (GOGC asked for less)", got)
	}
	restore()
	if got := gcPercent(); got != 10 {
		t.Errorf("target after = %d, want 10", got)
	}
}

// TestGCLoweringTakesTheLowestTargetAskedFor overlaps the title index's
// first build (50) with the recall index's (25), in both orders: while
// both hold, the target is 25; when one ends, the other's; after both,
// the one found.
func TestGCLoweringTakesTheLowestTargetAskedFor(t *testing.T) {
	orig := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(orig) })

	var g gcLowering
	title := g.lower(50)
	recall := g.lower(25)
	if got := gcPercent(); got != 25 {
		t.Fatalf("target with 50 and 25 held = %d, want 25", got)
	}
	title()
	if got := gcPercent(); got != 25 {
		t.Fatalf("target after 50 is done = %d, want 25", got)
	}
	title = g.lower(50)
	recall()
	if got := gcPercent(); got != 50 {
		t.Fatalf("target after 25 is done = %d, want 50", got)
	}
	title()
	if got := gcPercent(); got != 100 {
		t.Fatalf("target after both = %d, want 100", got)
	}
}
