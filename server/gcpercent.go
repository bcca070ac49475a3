package server

import (
	"runtime/debug"
	"sync"
)

// recallBuildGCPercent is the garbage collector's target while the recall
// index reads every log for its first build: the build allocates the text of
// every session it reads (gigabytes on a large store) and keeps little of
// it, so at the runtime's default of 100 the heap grew to twice the live
// indexes between collections and RSS with it. Measured with benchmemory on
// 100,000 sessions and a 150,002-path workspace: see the commit that set it.
const recallBuildGCPercent = 25

// titleBuildGCPercent is the collector's target while the session index's
// first build runs. The build's live heap grows to the whole index, and
// publishing it copies the sessions and their search texts, so at 100 the
// peak was twice the index; see the commit that set it for the measurement.
const titleBuildGCPercent = 50

// gcLowering lowers the collector's target while at least one holder asks
// for it, to the lowest target a holder asks for, and puts back the target
// it found when the last one is done.
type gcLowering struct {
	mu sync.Mutex
	// asked counts the holders of each target.
	asked map[int]int
	prev  int
}

// lower sets the collector's target to percent unless it is lower already,
// and returns the func that undoes it; call that once.
func (g *gcLowering) lower(percent int) (restore func()) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.asked) == 0 {
		g.prev = debug.SetGCPercent(percent)
		g.asked = map[int]int{}
	}
	g.asked[percent]++
	g.applyLocked()
	var once sync.Once
	return func() {
		once.Do(func() {
			g.mu.Lock()
			defer g.mu.Unlock()
			if g.asked[percent]--; g.asked[percent] == 0 {
				delete(g.asked, percent)
			}
			if len(g.asked) == 0 {
				debug.SetGCPercent(g.prev)
				return
			}
			g.applyLocked()
		})
	}
}

// applyLocked sets the lowest target asked for, or the one it found when
// that is lower still (GOGC asked for less).
func (g *gcLowering) applyLocked() {
	target := -1
	for p := range g.asked {
		if target < 0 || p < target {
			target = p
		}
	}
	if g.prev >= 0 && g.prev < target {
		target = g.prev
	}
	debug.SetGCPercent(target)
}

// processGC coordinates the servers of one process (tests run many) around
// the collector's target, which is the process's own and not a server's:
// with one coordinator per server, two overlapping builds would put back
// each other's lowered target and leave it lowered.
var processGC gcLowering
