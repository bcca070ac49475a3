package memtune

import (
	"math"
	"runtime"
	"runtime/debug"
	"sync/atomic"
	"testing"
	"time"
)

// gcPercent reads the collector's target (SetGCPercent returns the old one).
func gcPercent() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

func TestGCLoweringRestoresTheTargetAfterTheLastHolder(t *testing.T) {
	setGC(t, 100, math.MaxInt64)

	var g GC
	first := g.Lower(25)
	if got := gcPercent(); got != 25 {
		t.Fatalf("target while lowered = %d, want 25", got)
	}
	second := g.Lower(25)
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

	var g GC
	restore := g.Lower(25)
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
	setGC(t, 100, math.MaxInt64)

	var g GC
	title := g.Lower(50)
	recall := g.Lower(25)
	if got := gcPercent(); got != 25 {
		t.Fatalf("target with 50 and 25 held = %d, want 25", got)
	}
	title()
	if got := gcPercent(); got != 25 {
		t.Fatalf("target after 50 is done = %d, want 25", got)
	}
	title = g.Lower(50)
	recall()
	if got := gcPercent(); got != 50 {
		t.Fatalf("target after 25 is done = %d, want 50", got)
	}
	title()
	if got := gcPercent(); got != 100 {
		t.Fatalf("target after both = %d, want 100", got)
	}
}

// memoryLimit reads the soft memory limit (SetMemoryLimit(-1) only reads).
func memoryLimit() int64 { return debug.SetMemoryLimit(-1) }

// setGC sets the collector's target and the memory limit for the test and
// puts back what they were when it ends.
func setGC(t *testing.T, percent int, limit int64) {
	t.Helper()
	origGC := debug.SetGCPercent(percent)
	origLimit := debug.SetMemoryLimit(limit)
	t.Cleanup(func() {
		debug.SetGCPercent(origGC)
		debug.SetMemoryLimit(origLimit)
	})
}

func TestGCLoweringSetsTheMemoryLimitWhileHeld(t *testing.T) {
	setGC(t, 100, math.MaxInt64)

	g := GC{limit: 64 << 20, live: func() uint64 { return 1 << 20 }}
	recall := g.Lower(25)
	if got := memoryLimit(); got != math.MaxInt64 {
		t.Fatalf("limit while only lower holds = %d, want none", got)
	}
	title := g.LowerWithLimit(50)
	if got := memoryLimit(); got != 64<<20 {
		t.Fatalf("limit while held = %d, want %d", got, 64<<20)
	}
	again := g.LowerWithLimit(50)
	title()
	if got := memoryLimit(); got != 64<<20 {
		t.Fatalf("limit with one limited holder left = %d, want %d", got, 64<<20)
	}
	again()
	if got := memoryLimit(); got != math.MaxInt64 {
		t.Fatalf("limit after the last limited holder = %d, want none (what it was)", got)
	}
	if got := gcPercent(); got != 25 {
		t.Fatalf("target with lower(25) still held = %d, want 25", got)
	}
	recall()
}

func TestGCLoweringKeepsALimitGOMEMLIMITSet(t *testing.T) {
	setGC(t, 100, 1<<30)

	g := GC{limit: 64 << 20, live: func() uint64 { return 1 << 20 }}
	restore := g.LowerWithLimit(50)
	if got := memoryLimit(); got != 1<<30 {
		t.Errorf("limit while held = %d, want GOMEMLIMIT's %d", got, 1<<30)
	}
	restore()
	if got := memoryLimit(); got != 1<<30 {
		t.Errorf("limit after = %d, want %d", got, 1<<30)
	}
}

// TestGCLoweringLimitFollowsALiveHeapNearIt grows the live heap past the
// limit while held: the limit rises above it, and after the last holder
// the one found is back.
func TestGCLoweringLimitFollowsALiveHeapNearIt(t *testing.T) {
	setGC(t, 100, math.MaxInt64)

	var live atomic.Uint64
	live.Store(1 << 20)
	g := GC{limit: 64 << 20, live: live.Load}
	restore := g.LowerWithLimit(50)
	live.Store(100 << 20)
	deadline := time.Now().Add(10 * time.Second)
	for memoryLimit() != 125<<20 {
		if time.Now().After(deadline) {
			t.Fatalf("limit with a live heap of 100 MiB = %d, want %d", memoryLimit(), 125<<20)
		}
		time.Sleep(time.Millisecond)
	}
	restore()
	if got := memoryLimit(); got != math.MaxInt64 {
		t.Fatalf("limit after = %d, want none", got)
	}
}

func TestFollowLimit(t *testing.T) {
	const base = 100 << 20
	for _, c := range []struct {
		live uint64
		want int64
	}{
		{0, base},
		{50 << 20, base},
		{90 << 20, base},                        // a tenth below: still base
		{90<<20 + 4, 90<<20 + 4 + (90<<20+4)/4}, // within a tenth: live + live/4
		{200 << 20, 250 << 20},
		{math.MaxUint64, math.MaxInt64},
	} {
		if got := followLimit(base, c.live); got != c.want {
			t.Errorf("followLimit(%d, %d) = %d, want %d", base, c.live, got, c.want)
		}
	}
}

// TestGCPauseTurnsTheCollectorOffOverEveryTarget pauses the collector (a
// cache restore) while the title build's 50 is held, lowers it further
// (recall's 25) during the pause, and ends them in turn: while a pause is
// held the collector is off, then the lowest target held applies, and
// after the last holder the one found. A pause alone holds the memory
// limit too, and puts it back after.
func TestGCPauseTurnsTheCollectorOffOverEveryTarget(t *testing.T) {
	setGC(t, 100, math.MaxInt64)

	g := GC{limit: 64 << 20, live: func() uint64 { return 1 << 20 }}
	title := g.Lower(50)
	resume := g.Pause()
	if got := gcPercent(); got != -1 {
		t.Fatalf("target while paused = %d, want -1 (off)", got)
	}
	recall := g.Lower(25)
	if got := gcPercent(); got != -1 {
		t.Fatalf("target after a lowering during the pause = %d, want -1 (off)", got)
	}
	resume()
	resume() // a second call changes nothing
	if got := gcPercent(); got != 25 {
		t.Fatalf("target after the pause = %d, want 25 (the lowest held)", got)
	}
	recall()
	title()
	if got, limit := gcPercent(), memoryLimit(); got != 100 || limit != math.MaxInt64 {
		t.Fatalf("target and limit after every holder = %d, %d; want 100, none", got, limit)
	}
	resume = g.Pause()
	if got, limit := gcPercent(), memoryLimit(); got != -1 || limit != 64<<20 {
		t.Fatalf("target and limit while paused alone = %d, %d; want -1 (off), %d", got, limit, 64<<20)
	}
	resume()
	if got, limit := gcPercent(), memoryLimit(); got != 100 || limit != math.MaxInt64 {
		t.Fatalf("target and limit after a pause alone = %d, %d; want 100, none (what they were)", got, limit)
	}
}

// TestGCHoldLimitKeepsTheLimitAfterTheBuild holds the limit alone across
// the end of a build's LowerWithLimit, as a server does once its first
// build ends: the limit stays set with the target the one found, and after
// the release both are what they were.
func TestGCHoldLimitKeepsTheLimitAfterTheBuild(t *testing.T) {
	setGC(t, 100, math.MaxInt64)

	g := GC{limit: 64 << 20, live: func() uint64 { return 1 << 20 }}
	build := g.LowerWithLimit(50)
	steady := g.HoldLimit()
	build()
	if got, limit := gcPercent(), memoryLimit(); got != 100 || limit != 64<<20 {
		t.Fatalf("target and limit held alone after the build = %d, %d; want 100, %d", got, limit, 64<<20)
	}
	recall := g.Lower(25)
	if got, limit := gcPercent(), memoryLimit(); got != 25 || limit != 64<<20 {
		t.Fatalf("target and limit with a lowering too = %d, %d; want 25, %d", got, limit, 64<<20)
	}
	recall()
	steady()
	steady() // a second call changes nothing
	if got, limit := gcPercent(), memoryLimit(); got != 100 || limit != math.MaxInt64 {
		t.Fatalf("target and limit after the release = %d, %d; want 100, none (what they were)", got, limit)
	}
}

// TestGCHoldLimitFollowsALiveHeapNearIt grows the live heap past the
// limit while only HoldLimit holds it: the limit still rises above it.
func TestGCHoldLimitFollowsALiveHeapNearIt(t *testing.T) {
	setGC(t, 100, math.MaxInt64)

	var live atomic.Uint64
	live.Store(1 << 20)
	g := GC{limit: 64 << 20, live: live.Load}
	steady := g.HoldLimit()
	defer steady()
	live.Store(100 << 20)
	deadline := time.Now().Add(30 * time.Second)
	for memoryLimit() != 125<<20 {
		if time.Now().After(deadline) {
			t.Fatalf("limit with a live heap of 100 MiB = %d, want %d", memoryLimit(), 125<<20)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestLiveHeapReadsTheRuntime: without a reader of its own, the live heap
// is the runtime's, which a running process never has at zero.
func TestLiveHeapReadsTheRuntime(t *testing.T) {
	runtime.GC()
	var g GC
	if got := g.liveHeap(); got == 0 {
		t.Fatal("liveHeap() = 0 after a collection")
	}
}
