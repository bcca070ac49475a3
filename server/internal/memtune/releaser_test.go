package memtune

import (
	"sync/atomic"
	"testing"
	"time"
)

// fakeHeap stands for the runtime in Releaser: retained is live plus
// garbage, and a release returns the garbage.
type fakeHeap struct {
	live, garbage atomic.Uint64
	frees         atomic.Int32
}

func (h *fakeHeap) releaser() *Releaser {
	m := newReleaser(time.Hour, 16<<20)
	m.retryBase = time.Hour // the test runs every check itself
	m.retained = func() uint64 { return h.live.Load() + h.garbage.Load() }
	m.free = func() { h.frees.Add(1); h.garbage.Store(0) }
	return m
}

// TestReleaserDoesNotTakeLiveMemoryAsItsFloor: the first release after
// start happens while a large answer is still live. That level is not the
// idle floor: once the answer is garbage the next check releases it. (The
// releaser used to take the first release's level as its floor, and the
// process stayed at 9× idle after one large request.)
func TestReleaserDoesNotTakeLiveMemoryAsItsFloor(t *testing.T) {
	h := &fakeHeap{}
	m := h.releaser()
	defer m.Stop()
	h.live.Store(100 << 20) // the answer being written
	h.garbage.Store(40 << 20)
	m.check()
	if got := h.frees.Load(); got != 1 {
		t.Fatalf("%d releases at 140 MiB held, want 1", got)
	}
	h.live.Store(12 << 20) // written: the answer is garbage now
	h.garbage.Store(100 << 20)
	m.check()
	if got := h.frees.Load(); got != 2 {
		t.Fatalf("%d releases, want 2: the 100 MiB still live at the first release were taken as the floor", got)
	}
	if m.floor != 12<<20 {
		t.Errorf("floor %d MiB after the release, want 12", m.floor>>20)
	}
}

// TestReleaserTakesGrownIndexesAsItsFloor: memory that stays live through
// every retry is the new idle level, and is not released over and over.
func TestReleaserTakesGrownIndexesAsItsFloor(t *testing.T) {
	h := &fakeHeap{}
	m := h.releaser()
	defer m.Stop()
	h.live.Store(10 << 20)
	h.garbage.Store(20 << 20)
	m.check()
	if m.floor != 10<<20 {
		t.Fatalf("floor %d MiB, want 10", m.floor>>20)
	}
	h.live.Store(80 << 20) // the indexes grew
	h.garbage.Store(20 << 20)
	for range releaseRetries + 1 {
		m.check()
	}
	if m.floor != 80<<20 {
		t.Fatalf("floor %d MiB after %d checks with 80 MiB live, want 80", m.floor>>20, releaseRetries+1)
	}
	frees := h.frees.Load()
	h.garbage.Store(4 << 20) // typing: little garbage
	m.check()
	if h.frees.Load() != frees {
		t.Errorf("released again at 84 MiB with an 80 MiB floor")
	}
}

// TestReleaserWaitsWhileBusy: no release while a message is handled.
func TestReleaserWaitsWhileBusy(t *testing.T) {
	h := &fakeHeap{}
	m := h.releaser()
	defer m.Stop()
	h.garbage.Store(200 << 20)
	m.Begin()
	m.check()
	if h.frees.Load() != 0 {
		t.Fatalf("released while a message was being handled")
	}
	m.End()
	m.check()
	if h.frees.Load() != 1 {
		t.Fatalf("%d releases once quiet, want 1", h.frees.Load())
	}
}

// TestReleaserMarginFollowsASmallFloor: a small idle process is released
// once it holds a quarter more than its floor, so one request of a few
// MiB does not leave it above 1.5× idle (a fixed 16 MiB margin left a
// 12 MiB process at 29 MiB after a 16 MiB request).
func TestReleaserMarginFollowsASmallFloor(t *testing.T) {
	h := &fakeHeap{}
	m := h.releaser()
	defer m.Stop()
	h.live.Store(12 << 20)
	h.garbage.Store(8 << 20)
	m.check()
	if h.frees.Load() != 1 || m.floor != 12<<20 {
		t.Fatalf("%d releases, floor %d MiB; want 1 and 12", h.frees.Load(), m.floor>>20)
	}
	h.garbage.Store(2 << 20) // below a quarter of the floor: left alone
	m.check()
	if h.frees.Load() != 1 {
		t.Errorf("released 2 MiB of garbage over a 12 MiB floor")
	}
	h.garbage.Store(6 << 20) // above it: released
	m.check()
	if h.frees.Load() != 2 {
		t.Errorf("%d releases with 6 MiB of garbage over a 12 MiB floor, want 2", h.frees.Load())
	}
}

// awaitFrees waits until h counted want releases.
func awaitFrees(t *testing.T, h *fakeHeap, want int32) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for h.frees.Load() != want {
		if time.Now().After(deadline) {
			t.Fatalf("%d releases after 5 s, want %d", h.frees.Load(), want)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestReleaserChecksOnceQuiet: the end of a message, and any activity,
// schedules a check quiet after it, which releases what is held over the
// threshold.
func TestReleaserChecksOnceQuiet(t *testing.T) {
	h := &fakeHeap{}
	m := h.releaser()
	m.quiet = time.Millisecond
	defer m.Stop()
	h.garbage.Store(32 << 20)
	m.Begin()
	m.End()
	awaitFrees(t, h, 1)
	h.garbage.Store(32 << 20)
	m.Touch() // the timer of the first check is reset
	awaitFrees(t, h, 2)
}

// TestReleaserStopped: activity after stop schedules nothing.
func TestReleaserStopped(t *testing.T) {
	h := &fakeHeap{}
	m := h.releaser()
	m.Stop()
	m.Touch()
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.timer != nil {
		t.Fatal("a check was scheduled after stop")
	}
}

// TestRetainedReadsTheRuntime: the runtime's metrics the releaser reads
// exist, and a running process holds memory.
func TestRetainedReadsTheRuntime(t *testing.T) {
	if got := retained(); got == 0 {
		t.Fatal("retained() = 0")
	}
}

// TestServersShareThePolicy: every server of the process gets the same GC,
// with the build's memory limit, and releasers with the release settings.
func TestServersShareThePolicy(t *testing.T) {
	first, again := Process(), Process()
	if first != again || first.limit != buildMemoryLimit {
		t.Fatalf("Process() is not one GC with the build's limit")
	}
	m := NewReleaser()
	defer m.Stop()
	if m.quiet != releaseQuiet || m.threshold != releaseThreshold {
		t.Fatalf("NewReleaser() checks %v after activity over %d bytes, want %v and %d", m.quiet, m.threshold, releaseQuiet, releaseThreshold)
	}
}
