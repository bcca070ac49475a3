//go:build unix

package titles

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
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

// fileSizeLimitEnv, in the environment of a child of the sessionref test
// binary, holds LIMIT, ROOT and CACHE, a line each: the child's
// TestFailedCacheWriteKeepsTheOldCache then saves the index of ROOT to
// CACHE with its file size limit lowered to LIMIT bytes.
const fileSizeLimitEnv = "DSH_REFLS_TEST_FILE_SIZE_LIMIT"

// TestFailedCacheWriteKeepsTheOldCache lets a save run into the file size
// limit: the save fails, the old cache stays in place and loads, and no
// temporary file is left. The limit is lowered in a child process that
// runs only the save: it holds for every write of the process, and in this
// one it would also fail go test's own log of the files the tests open
// (seen in CI: "can't write testlog.txt: file too large").
func TestFailedCacheWriteKeepsTheOldCache(t *testing.T) {
	if spec := os.Getenv(fileSizeLimitEnv); spec != "" {
		saveUnderFileSizeLimit(t, spec)
		return
	}
	if testing.CoverMode() != "" {
		// The child would write its coverage data under the lowered limit
		// too, and fail on that instead of on the cache.
		t.Skip("the lowered file size limit cannot be tested under -cover: the child's coverage data would hit it")
	}
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
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// The child builds an index of 51 sessions and saves it once.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, "-test.run=^TestFailedCacheWriteKeepsTheOldCache$", "-test.v", "-test.count=1")
	// The new cache is several KB.
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%d\n%s\n%s", fileSizeLimitEnv, len(before)+512, s.root, path))
	out, err := cmd.CombinedOutput()
	t.Logf("the save with the lowered limit:\n%s", out)
	switch {
	case bytes.Contains(out, []byte("--- SKIP")):
		t.Skip("the child could not lower its file size limit")
	case err != nil:
		t.Fatalf("the child failed: %v", err)
	case !bytes.Contains(out, []byte("save failed as it should")):
		t.Fatal("the child did not report the failed save")
	}
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

// saveUnderFileSizeLimit is TestFailedCacheWriteKeepsTheOldCache's child:
// spec is fileSizeLimitEnv's value.
func saveUnderFileSizeLimit(t *testing.T, spec string) {
	parts := strings.Split(spec, "\n")
	if len(parts) != 3 {
		t.Fatalf("%s=%q: want three lines", fileSizeLimitEnv, spec)
	}
	limit, err := strconv.ParseUint(parts[0], 10, 64)
	if err != nil {
		t.Fatalf("%s=%q: %v", fileSizeLimitEnv, spec, err)
	}
	ix := (&testStore{t: t, root: parts[1]}).index()
	path := parts[2]
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
		t.Skipf("no file size limit here: %v", err)
	}
	lim.Cur = limit
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
		t.Skipf("cannot lower the file size limit: %v", err)
	}
	// Go ignores SIGXFSZ, so the write returns EFBIG.
	if err = ix.SaveCache(path); err == nil {
		t.Fatal("SaveCache succeeded beyond the file size limit")
	}
	t.Logf("save failed as it should: %v", err)
}
