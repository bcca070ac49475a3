package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// Bounds of TestBinaryConfigurationBurstHoldsFewWatchers.
const (
	burstChanges = 300
	// burstMaxInotify is the most inotify instances allowed at once: the
	// session root's watcher and, at a switch, none other (the old one is
	// closed first); the workspace is not watched (no rootUri).
	burstMaxInotify = 2
)

// inotifyCount is how many inotify instances pid holds.
func inotifyCount(pid int) (int, error) {
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, e := range ents {
		if target, err := os.Readlink(filepath.Join(dir, e.Name())); err == nil && target == "anon_inode:inotify" {
			n++
		}
	}
	return n, nil
}

// TestBinaryConfigurationBurstHoldsFewWatchers sends 300
// didChangeConfiguration alternating the sessions root with fsnotify
// watching: the server never holds more than two inotify instances (it
// held up to 128, the per-user limit, when each new root's watcher opened
// before the old one closed), and it still answers from the last root.
func TestBinaryConfigurationBurstHoldsFewWatchers(t *testing.T) {
	roots := []string{t.TempDir(), t.TempDir()}
	p := startWire(t, "--sessions-root", roots[0], "--watch", "fsnotify")
	if _, err := inotifyCount(p.cmd.Process.Pid); err != nil {
		t.Skipf("cannot list the descriptors of the process: %v", err)
	}
	p.send(map[string]any{"id": "init", "method": "initialize", "params": map[string]any{
		"processId": nil, "capabilities": map[string]any{}}})
	p.expectResult("initialize", `"init"`)
	p.send(map[string]any{"method": "initialized", "params": map[string]any{}})

	var peak atomic.Int64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			if n, err := inotifyCount(p.cmd.Process.Pid); err == nil && int64(n) > peak.Load() {
				peak.Store(int64(n))
			}
			select {
			case <-stop:
				return
			default:
			}
		}
	}()
	for i := 0; i < burstChanges; i++ {
		p.send(map[string]any{"method": "workspace/didChangeConfiguration", "params": map[string]any{
			"settings": map[string]any{"dsh": map[string]any{"sessionsRoot": roots[i%2]}}}})
	}
	p.send(map[string]any{"id": "st", "method": "dsh/status", "params": map[string]any{}})
	a := p.expectResult("status after the burst", `"st"`)
	close(stop)
	<-sampled
	t.Logf("%d root changes: at most %d inotify instances at once", burstChanges, peak.Load())
	if peak.Load() > burstMaxInotify {
		t.Errorf("%d inotify instances at once during the burst, want at most %d", peak.Load(), burstMaxInotify)
	}
	if want := fmt.Sprintf(`"sessionsRoot":%q`, roots[(burstChanges-1)%2]); !strings.Contains(string(a.Result), want) {
		t.Errorf("status %s, want the last root (%s)", a.Result, want)
	}
	_, _ = p.finish()
}
