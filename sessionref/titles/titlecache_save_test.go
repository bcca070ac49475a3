package titles

import (
	"bufio"
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"testing"
	"unsafe"
)

// TestSaveCacheHoldsNoCopyOfEveryRecord checks that a save makes each
// session's record only as its block is written, from the index itself:
// what encoding allocates for each further session is a small fraction of
// one record (cachedSession, the form the cache took before: over 500
// bytes a session, 56 MB at 100,000 sessions). A save also allocates a
// fixed amount (the buffers of one block, the cwd table, ~75 KB), so the
// figure is the difference between two stores, one twice the other, in
// blocks of 100 sessions: 120 and 240 sessions, a file each, which Wine
// makes slowly.
func TestSaveCacheHoldsNoCopyOfEveryRecord(t *testing.T) {
	s := newTestStore(t)
	const added = 120
	addSessions := func(from int) {
		for i := from; i < from+added; i++ {
			s.simple(fmt.Sprintf("s%04d", i), fmt.Sprintf("/w/%d", i%7), fixtureTime+int64(i), titleEvent(0, fmt.Sprintf("Title %d", i)))
		}
	}
	addSessions(0)
	smaller := encodingAllocates(t, s.index())
	addSessions(added)
	ix := s.index()
	larger := encodingAllocates(t, ix)
	perSession := float64(larger-smaller) / added
	var record cachedSession
	if size := float64(unsafe.Sizeof(record)); perSession > size/8 {
		t.Errorf("encoding allocated %.0f bytes for each further session, not well below the %.0f bytes of a record per session", perSession, size)
	}
	t.Logf("encoding %d sessions allocated %d bytes, %d sessions %d bytes: %.0f bytes for each further session", added, smaller, 2*added, larger, perSession)

	path := filepath.Join(t.TempDir(), "index.cache")
	if err := ix.SaveCache(path); err != nil {
		t.Fatal(err)
	}
	if got := len(readCacheFile(t, path).Sessions); got != 2*added {
		t.Errorf("the saved cache holds %d sessions, want %d", got, 2*added)
	}
}

// encodingAllocates returns the bytes that encoding ix's cache in blocks of
// 100 sessions allocates, from the records under its write lock on.
func encodingAllocates(t *testing.T, ix *Index) uint64 {
	t.Helper()
	w := bufio.NewWriter(io.Discard)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	ix.writeMu.Lock()
	err := encodeCacheBlocks(w, ix.savedLocked(), 100)
	ix.writeMu.Unlock()
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	return after.TotalAlloc - before.TotalAlloc
}
