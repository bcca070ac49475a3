package memtune

import (
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"time"
)

// Memory release after large work. The Go runtime keeps freed heap mapped
// and, in a server that goes quiet, runs no collection for up to two
// minutes: after one large request (a 30 MB document, a session with a
// 64 MB message prepared) the process stayed at ~250 MB where it idles at
// ~20 MB. Once the server has been quiet for releaseQuiet (no request
// handled, no frame written, no index update), the releaser compares the
// memory the process holds from the OS with what it held after its last
// release; when it grew by more than a quarter of that floor (at least
// releaseMinThreshold, at most releaseThreshold) it collects and returns
// the free heap to the OS (debug.FreeOSMemory: one full collection
// of the live heap, a few milliseconds for the indexes). Typing grows
// nothing, so it costs nothing.
const (
	releaseQuiet     = 500 * time.Millisecond
	releaseThreshold = 16 << 20
	// releaseMinThreshold is the least growth that is released: a small
	// idle process (12 MiB) must come back within 1.5× of idle, which a
	// fixed 16 MiB margin does not give (one 16 MiB request left it at
	// 2.4× idle for good).
	releaseMinThreshold = 4 << 20
	releaseRetries      = 4
)

// The runtime's metrics that give the memory it holds from the OS: all it
// mapped, less the heap it already returned.
const (
	totalMetric    = "/memory/classes/total:bytes"
	releasedMetric = "/memory/classes/heap/released:bytes"
)

// Releaser returns memory to the OS after the server goes quiet. The
// server tells it of its work: Begin and End around each message handled,
// Touch for any other activity.
type Releaser struct {
	quiet     time.Duration
	threshold uint64
	// retained and free are the runtime's (retained, debug.FreeOSMemory);
	// tests replace them to drive the floor.
	retained func() uint64
	free     func()
	// retryBase is the first retry's delay; each next one doubles it.
	retryBase time.Duration
	// mu guards timer, stopped, floor, retries, busy and releases.
	mu      sync.Mutex
	timer   *time.Timer
	stopped bool
	// floor is the least the process held from the OS after a release;
	// retries counts checks since the last activity; busy counts messages
	// being handled (no check runs while one is).
	floor   uint64
	retries int
	busy    int
	// releases counts collections the releaser started (tests read it).
	releases int
}

// NewReleaser returns a releaser that checks releaseQuiet after the last
// activity and releases a growth above releaseThreshold at most.
func NewReleaser() *Releaser { return newReleaser(releaseQuiet, releaseThreshold) }

func newReleaser(quiet time.Duration, threshold uint64) *Releaser {
	return &Releaser{quiet: quiet, threshold: threshold, retained: retained, free: debug.FreeOSMemory, retryBase: time.Second}
}

// Begin records that a message is being handled; End that it was.
func (m *Releaser) Begin() {
	m.mu.Lock()
	m.busy++
	m.mu.Unlock()
}

// End records that a message was handled, and is activity.
func (m *Releaser) End() {
	m.mu.Lock()
	m.busy--
	m.mu.Unlock()
	m.Touch()
}

// Touch records activity: the check runs quiet after the last touch.
func (m *Releaser) Touch() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.stopped {
		return
	}
	m.retries = 0
	if m.timer == nil {
		m.timer = time.AfterFunc(m.quiet, m.check)
		return
	}
	m.timer.Reset(m.quiet)
}

// retained is the memory the runtime holds from the OS.
func retained() uint64 {
	s := []metrics.Sample{{Name: totalMetric}, {Name: releasedMetric}}
	metrics.Read(s)
	total, released := s[0].Value.Uint64(), s[1].Value.Uint64()
	if released > total {
		return 0
	}
	return total - released
}

// check releases memory when the process holds more than its floor.
//
// The floor is the idle level: it only falls with what a release leaves,
// and rises only when memory stays up through every retry with nothing
// happening (the indexes grew). Memory still live at a release (an answer
// being written, a document being diagnosed) is retried, never taken as
// the floor: the first release after start used to do that, so one large
// request seen first left the process at 9× idle for good.
func (m *Releaser) check() {
	m.mu.Lock()
	floor, busy := m.floor, m.busy
	m.mu.Unlock()
	margin := m.margin(floor)
	if busy > 0 || m.retained() < floor+margin {
		return
	}
	m.free()
	after := m.retained()
	m.mu.Lock()
	defer m.mu.Unlock()
	m.releases++
	switch {
	case after < m.floor+m.margin(m.floor):
		if m.floor == 0 || after < m.floor {
			m.floor = after
		}
	case (m.retries < releaseRetries || m.busy > 0) && !m.stopped:
		d := m.retryBase << min(m.retries, releaseRetries)
		if m.timer == nil {
			m.timer = time.AfterFunc(d, m.check)
		} else {
			m.timer.Reset(d)
		}
		m.retries++
	default:
		m.floor = after // the indexes grew: this is the new idle level
	}
}

// margin is how far above floor the process may hold before a release: a
// quarter of the floor, within [min(releaseMinThreshold, threshold),
// threshold]; before the first floor is known, threshold.
func (m *Releaser) margin(floor uint64) uint64 {
	if floor == 0 {
		return m.threshold
	}
	return min(max(floor/4, min(releaseMinThreshold, m.threshold)), m.threshold)
}

// Stop ends the releaser; touches after it do nothing.
func (m *Releaser) Stop() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.stopped = true
	if m.timer != nil {
		m.timer.Stop()
	}
}
