package sessionref

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
// session's record only as its block is written, from the index itself: in
// blocks of 100 sessions, encoding 3,000 allocates a small fraction of what
// one record per session held at once (cachedSession, the form the cache
// took before: over 500 bytes a session, 56 MB at 100,000 sessions).
func TestSaveCacheHoldsNoCopyOfEveryRecord(t *testing.T) {
	s := newTestStore(t)
	const sessions = 3000
	for i := range sessions {
		s.simple(fmt.Sprintf("s%04d", i), fmt.Sprintf("/w/%d", i%7), fixtureTime+int64(i), titleEvent(0, fmt.Sprintf("Title %d", i)))
	}
	ix := s.index()
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
	perSession := float64(after.TotalAlloc-before.TotalAlloc) / sessions
	var record cachedSession
	if size := float64(unsafe.Sizeof(record)); perSession > size/8 {
		t.Errorf("encoding allocated %.0f bytes per session, not well below the %.0f bytes of a record per session", perSession, size)
	}
	t.Logf("encoding %d sessions in blocks of 100 allocated %.0f bytes per session", sessions, perSession)

	path := filepath.Join(t.TempDir(), "index.cache")
	if err := ix.SaveCache(path); err != nil {
		t.Fatal(err)
	}
	if got := len(readCacheFile(t, path).Sessions); got != sessions {
		t.Errorf("the saved cache holds %d sessions, want %d", got, sessions)
	}
}
