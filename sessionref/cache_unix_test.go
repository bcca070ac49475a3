//go:build unix

package sessionref

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestCacheAtAFIFODoesNotBlock puts a FIFO where the cache belongs: loading
// refuses it at once and saving replaces it with a cache.
func TestCacheAtAFIFODoesNotBlock(t *testing.T) {
	s := newTestStore(t)
	s.simple("fifo-1", "/work/f", fixtureTime, titleEvent(0, "Kept"))
	path := filepath.Join(t.TempDir(), "index.gob")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	ix := NewIndex(s.root, IndexOptions{})
	done := make(chan error, 1)
	go func() { done <- ix.LoadCache(path) }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("LoadCache of a FIFO: %v", err)
		}
	case <-time.After(10 * time.Second):
		w, _ := os.OpenFile(path, os.O_WRONLY, 0) // unblock the reader before failing
		if w != nil {
			w.Close()
		}
		t.Fatal("LoadCache blocks on a FIFO")
	}
	if err := ix.Build(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if err := ix.SaveCache(path); err != nil {
		t.Fatal(err)
	}
	again := NewIndex(s.root, IndexOptions{})
	if err := again.LoadCache(path); err != nil {
		t.Errorf("the cache that replaced the FIFO does not load: %v", err)
	}
}

// TestFailedCacheWriteKeepsTheOldCache lets a save run into the file size
// limit: the save fails, the old cache stays in place and loads, and no
// temporary file is left.
func TestFailedCacheWriteKeepsTheOldCache(t *testing.T) {
	s := newTestStore(t)
	s.simple("small", "/work/w", fixtureTime, titleEvent(0, "Small"))
	dir := t.TempDir()
	path := filepath.Join(dir, "index.gob")
	if err := s.index().SaveCache(path); err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 50 {
		s.simple(fmt.Sprintf("more-%02d", i), "/work/w", fixtureTime+int64(i)+1, titleEvent(0, strings.Repeat("long title ", 20)))
	}
	big := s.index()
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
		t.Skipf("no file size limit here: %v", err)
	}
	small := lim
	small.Cur = uint64(len(before)) + 512 // the new cache is several KB
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &small); err != nil {
		t.Skipf("cannot lower the file size limit: %v", err)
	}
	// Go ignores SIGXFSZ, so the write returns EFBIG.
	err = big.SaveCache(path)
	if rerr := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &lim); rerr != nil {
		t.Fatal(rerr)
	}
	if err == nil {
		t.Fatal("SaveCache succeeded beyond the file size limit")
	}
	t.Logf("save failed as it should: %v", err)
	after, rerr := os.ReadFile(path)
	if rerr != nil || !bytes.Equal(after, before) {
		t.Errorf("the old cache was replaced (%d bytes, was %d): %v", len(after), len(before), rerr)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, cacheTempPattern)); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
	ix := NewIndex(s.root, IndexOptions{})
	if err := ix.LoadCache(path); err != nil {
		t.Errorf("the old cache no longer loads: %v", err)
	}
}
