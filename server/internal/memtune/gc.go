package memtune

import (
	"math"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"time"
)

// RecallBuildGCPercent is the garbage collector's target while the recall
// index reads every log for its first build: the build allocates the text of
// every session it reads (gigabytes on a large store) and keeps little of
// it, so at the runtime's default of 100 the heap grew to twice the live
// indexes between collections and RSS with it. Measured with benchmemory on
// 100,000 sessions and a 150,002-path workspace: see the commit that set it.
const RecallBuildGCPercent = 25

// TitleBuildGCPercent is the collector's target while the session index's
// first build runs. The build's live heap grows to the whole index, and
// publishing it copies the sessions and their search texts, so at 100 the
// peak was twice the index; see the commit that set it for the measurement.
const TitleBuildGCPercent = 50

// buildMemoryLimit is the soft memory limit (debug.SetMemoryLimit, what
// GOMEMLIMIT sets) while the session index's first build holds the
// lowering (LowerWithLimit), and from then on while the index is open
// (HoldLimit). A target in
// percent bounds the heap's objects only: at 100,000 sessions and a
// 200,000-file workspace the process still held ~280 MB from the OS at the
// end of the title build (live heap ~157 MB at its publish, GOGC 50), the
// rest being freed spans not yet returned and the heap goal of 100 after
// the build. With this limit the collector works harder near it and the
// scavenger returns what is free: peak RSS ~196 MB there, for ~11% more
// CPU (see the commit that set it). The recall index's first build, which
// comes after the title build, does not lower it further: it allocates
// gigabytes and keeps little, and runs under the limit HoldLimit keeps
// (at 100,000 sessions: peak 238 -> 211 MB, 58 -> 77 server CPU seconds
// for both builds; its collections run every ~0.4 s near the end, when
// the live heap is ~165 MB).
const buildMemoryLimit = 180 << 20

// followEvery is how often the limit is checked against the live heap
// while a build holds it; followSteadyEvery while only HoldLimit holds it,
// once the indexes are built and the live heap grows slowly, so that an
// idle server wakes once a second for it, not ten times.
const (
	followEvery       = 100 * time.Millisecond
	followSteadyEvery = time.Second
)

// GC holds the collector's target and soft memory limit for the phases
// that ask for them. It lowers the target while at least one holder asks
// for it, to the lowest target a holder asks for, and puts back the target
// it found when the last one is done. While a holder of LowerWithLimit
// holds it, it also sets a soft memory limit, unless the process has one
// (GOMEMLIMIT). The target and the limit are the process's: use the one GC
// of Process.
type GC struct {
	// limit is the memory limit while held; 0 sets none.
	limit int64
	// live reads the live heap; nil reads the runtime's.
	live func() uint64

	mu sync.Mutex
	// asked counts the holders of each target.
	asked map[int]int
	// pauses counts the holders of a pause: while there is one, the
	// collector is off, whatever is asked (the memory limit still holds).
	pauses int
	prev   int
	// limited counts the holders that asked for the memory limit too;
	// steady counts those of them that hold it alone (HoldLimit).
	limited, steady int
	// prevLimit is the memory limit found; following is closed when the
	// last holder is done, to stop the goroutine that keeps the limit
	// above the live heap; nil when no limit was set.
	prevLimit int64
	following chan struct{}
}

// idleLocked reports whether nobody holds a target or a pause, so that
// the target and limit found are the process's own.
func (g *GC) idleLocked() bool { return len(g.asked) == 0 && g.pauses == 0 }

// holdLocked records the target found when the first holder comes.
func (g *GC) holdLocked(percent int) {
	if g.idleLocked() {
		g.prev = debug.SetGCPercent(percent)
		g.asked = map[int]int{}
	}
}

// settleLocked puts back the target found when nobody holds one any more,
// and applies what is held otherwise.
func (g *GC) settleLocked() {
	if g.idleLocked() {
		debug.SetGCPercent(g.prev)
		return
	}
	g.applyLocked()
}

// Lower sets the collector's target to percent unless it is lower already,
// and returns the func that undoes it; call that once.
func (g *GC) Lower(percent int) (restore func()) {
	return g.hold(percent, false)
}

// LowerWithLimit is Lower, and sets the memory limit too while held.
func (g *GC) LowerWithLimit(percent int) (restore func()) {
	return g.hold(percent, true)
}

func (g *GC) hold(percent int, limit bool) (restore func()) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.holdLocked(percent)
	g.asked[percent]++
	g.applyLocked()
	if limit {
		g.takeLimitLocked()
	}
	return g.undoOnce(func() {
		if limit {
			g.releaseLimitLocked()
		}
		if g.asked[percent]--; g.asked[percent] == 0 {
			delete(g.asked, percent)
		}
		g.settleLocked()
	})
}

// HoldLimit sets the memory limit, leaving the collector's target as it
// is, until the returned func is called (once). A server holds it from
// the end of the session index's first build for as long as the index is
// open: at GOGC 100 the heap grows to twice the live indexes between
// collections, and at 100,000 sessions and a 150,002-path workspace the
// live heap is ~110–130 MB, so a client typing for a while took the
// process past 200 MB; under the limit a collection runs when the heap
// nears it instead, which typing (tens of kilobytes per request) reaches
// every few hundred requests (see the commit that set it).
func (g *GC) HoldLimit() (release func()) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.steady++
	g.takeLimitLocked()
	return g.undoOnce(func() {
		g.steady--
		g.releaseLimitLocked()
	})
}

// undoOnce returns a func that runs undo, under g.mu, the first time it
// is called and does nothing after: what hold, HoldLimit and Pause hand
// back.
func (g *GC) undoOnce(undo func()) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			g.mu.Lock()
			defer g.mu.Unlock()
			undo()
		})
	}
}

// Pause turns the collector off until the returned func is called (once):
// for a phase whose heap stays nearly all live, such as restoring the
// session index from its cache, where every collection would only mark
// what it cannot free. A pause holds the memory limit too, so a
// collection runs if the heap reaches it. When the last pause ends, the
// lowest target asked for applies again, or the one found.
func (g *GC) Pause() (resume func()) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.holdLocked(-1)
	g.pauses++
	g.applyLocked()
	g.takeLimitLocked() // the collector is off: the limit is what bounds the heap
	return g.undoOnce(func() {
		g.releaseLimitLocked()
		g.pauses--
		g.settleLocked()
	})
}

// applyLocked turns the collector off while a pause is held, and sets the
// lowest target asked for otherwise, or the one it found when that is
// lower still (GOGC asked for less).
func (g *GC) applyLocked() {
	if g.pauses > 0 {
		debug.SetGCPercent(-1)
		return
	}
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

// takeLimitLocked counts a limited holder; for the first, it sets the
// memory limit and starts following the live heap with it.
func (g *GC) takeLimitLocked() {
	if g.limited++; g.limited > 1 {
		return
	}
	g.prevLimit = debug.SetMemoryLimit(-1)
	if g.limit <= 0 || g.prevLimit != math.MaxInt64 {
		return // none asked for, or GOMEMLIMIT chose one
	}
	debug.SetMemoryLimit(followLimit(g.limit, g.liveHeap()))
	stop := make(chan struct{})
	g.following = stop
	go g.follow(stop)
}

// releaseLimitLocked counts a limited holder out; after the last, it puts
// back the memory limit found.
func (g *GC) releaseLimitLocked() {
	if g.limited--; g.limited > 0 || g.following == nil {
		return
	}
	close(g.following)
	g.following = nil
	debug.SetMemoryLimit(g.prevLimit)
}

// follow raises the memory limit with the live heap until stop is closed:
// every followEvery while a build holds the limit, every
// followSteadyEvery while only HoldLimit does.
func (g *GC) follow(stop chan struct{}) {
	every := followEvery
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
		}
		live := g.liveHeap()
		g.mu.Lock()
		if g.following == stop { // not put back meanwhile
			debug.SetMemoryLimit(followLimit(g.limit, live))
		}
		next := followEvery
		if g.limited <= g.steady {
			next = followSteadyEvery
		}
		g.mu.Unlock()
		if next != every {
			every = next
			tick.Reset(every)
		}
	}
}

// followLimit is the memory limit for a live heap of live bytes: base, or
// live + live/4 once the live heap comes within a tenth of base. A store
// whose index outgrows the limit then builds as with a target of 25
// instead of with the collector running all the time (the runtime caps it
// at half the CPU when the live heap is at the limit).
func followLimit(base int64, live uint64) int64 {
	if live > math.MaxInt64/2 {
		return math.MaxInt64
	}
	if l := int64(live); l > base-base/10 {
		return l + l/4
	}
	return base
}

// liveHeap is the live heap as of the last collection.
func (g *GC) liveHeap() uint64 {
	if g.live != nil {
		return g.live()
	}
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// process coordinates the servers of one process (tests run many) around
// the collector's target and memory limit, which are the process's own and
// not a server's: with one coordinator per server, two overlapping builds
// would put back each other's lowered target and leave it lowered. It is
// the package's only state, and process-wide for that reason.
var process = GC{limit: buildMemoryLimit}

// Process returns the process's one GC, which every server shares.
func Process() *GC { return &process }
