package storetest

import (
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dsh-refls/dsh-refls/internal/dshgen"
	"github.com/dsh-refls/dsh-refls/sessionref/titles"
)

// HugeTextBytes is the size of the one-line message of the huge-line case:
// far beyond any read buffer. Under -race, which reads about ten times
// slower, it is 16 MB, still far beyond any buffer.
const HugeTextBytes = (64 << 20) >> (2 * raceShift)

// Memory bounds of the huge-line case.
const (
	// HugeHeapLimit is the generous bound on the heap in use while a huge
	// line is indexed and prepared: a few copies of the line at once,
	// nothing unbounded.
	HugeHeapLimit = 512 << 20
	// HugeRetainLimit bounds what the index keeps after indexing the huge
	// line: it holds no message bodies (§1.5), so a few MB of entries and
	// buffers at most, far below the 64 MB line.
	HugeRetainLimit = HugeTextBytes / 4
	// HugeGCPercent makes the collector run often while the peak is
	// measured, so the peak shows the copies the code holds at once
	// rather than how much garbage the default setting lets pile up.
	HugeGCPercent = 20
)

// HeapInuseAfterGC collects twice (the second run also empties sync.Pool
// victim caches) and returns the heap in use.
func HeapInuseAfterGC() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

// heapSampleEvery is how often WatchHeap samples the heap: often enough to
// catch a peak that lasts as long as one decode of a huge line.
const heapSampleEvery = 2 * time.Millisecond

// WatchHeap samples HeapInuse until the returned function is called, which
// returns the highest value seen.
func WatchHeap(t *testing.T) func() uint64 {
	var peak atomic.Uint64
	sample := func() {
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		if m.HeapInuse > peak.Load() {
			peak.Store(m.HeapInuse)
		}
	}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(heapSampleEvery)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				sample()
			}
		}
	}()
	var once sync.Once
	finish := func() uint64 {
		once.Do(func() {
			close(stop)
			<-done
			sample()
		})
		return peak.Load()
	}
	t.Cleanup(func() { finish() })
	return finish
}

// Huge is the huge-line case of one encoding beside the healthy sessions,
// indexed while the heap was watched.
type Huge struct {
	Want  dshgen.Expected
	Index *titles.Index
	// Before is the heap in use before indexing; Peak stops watching and
	// returns the highest heap in use seen since.
	Before uint64
	Peak   func() uint64
	// Begin is when writing the store began; Written and Indexed are how
	// long after it the store was written and indexed.
	Begin            time.Time
	Written, Indexed time.Duration
}

// EachHugeLine runs check, as a subtest per encoding, on the huge-line
// case (dshgen.HugeLine, one message line of HugeTextBytes), with the
// collector at HugeGCPercent. It skips under -short; the test itself calls
// longtest.Require first.
func EachHugeLine(t *testing.T, check func(t *testing.T, enc dshgen.Encoding, h *Huge)) {
	if testing.Short() {
		t.Skip("writes and reads a 64 MB line; run without -short")
	}
	for _, enc := range []dshgen.Encoding{dshgen.Raw, dshgen.Zstd} {
		t.Run(enc.String(), func(t *testing.T) {
			h := &Huge{Begin: time.Now()}
			root := filepath.Join(t.TempDir(), "sessions")
			WriteHealthy(t, root)
			c, err := dshgen.HugeLine(root, enc, HugeTextBytes)
			if err != nil {
				t.Fatal(err)
			}
			h.Written = time.Since(h.Begin)
			h.Want = *c.Expected

			h.Before = HeapInuseAfterGC()
			defer debug.SetGCPercent(debug.SetGCPercent(HugeGCPercent))
			h.Peak = WatchHeap(t)
			h.Index = BuildIndex(t, root, titles.IndexOptions{Parallelism: 2})
			h.Indexed = time.Since(h.Begin)
			check(t, enc, h)
		})
	}
}
