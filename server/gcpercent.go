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

// gcLowering lowers the collector's target while at least one holder asks
// for it and puts back the target it found when the last one is done.
type gcLowering struct {
	mu      sync.Mutex
	holders int
	prev    int
}

// lower sets the collector's target to percent unless it is lower already,
// and returns the func that undoes it; call that once.
func (g *gcLowering) lower(percent int) (restore func()) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.holders == 0 {
		g.prev = debug.SetGCPercent(percent)
		if g.prev >= 0 && g.prev < percent {
			debug.SetGCPercent(g.prev) // GOGC asked for less: keep it
		}
	}
	g.holders++
	var once sync.Once
	return func() {
		once.Do(func() {
			g.mu.Lock()
			defer g.mu.Unlock()
			g.holders--
			if g.holders == 0 {
				debug.SetGCPercent(g.prev)
			}
		})
	}
}

// processGC coordinates the servers of one process (tests run many) around
// the collector's target, which is the process's own and not a server's:
// with one coordinator per server, two overlapping builds would put back
// each other's lowered target and leave it lowered.
var processGC gcLowering
