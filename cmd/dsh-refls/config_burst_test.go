package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dsh-refls/dsh-refls/internal/dshgen"
	"github.com/dsh-refls/dsh-refls/internal/lsptest"
)

// Bounds of TestBinaryConfigurationBurstHoldsFewWatchers.
const (
	burstChanges = 300
	// burstMaxInotify is the most inotify instances allowed at once: the
	// session root's watcher and, at a switch, none other (the old one is
	// closed first); the workspace is not watched (no rootUri).
	burstMaxInotify = 2
	// burstMaxLatency bounds the answer to a request sent in the middle of
	// the burst, and the time from the last change to a status of the
	// last root's built index: the read loop is never held up by a change
	// (300 changes used to hold it for 4.1 s).
	burstMaxLatency = time.Second
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
// A request sent halfway through the burst is answered within
// burstMaxLatency, and so is the status of the last root's built index
// after the last change.
func TestBinaryConfigurationBurstHoldsFewWatchers(t *testing.T) {
	roots := []string{t.TempDir(), t.TempDir()}
	expected, err := dshgen.DemoStoreFor(roots[(burstChanges-1)%2], t.TempDir(), time.Now())
	if err != nil {
		t.Fatal(err)
	}
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
	// The mid-burst request is read after half of the changes and before
	// the rest: its answer may come while the burst is still being
	// written, and the editor notes when it read each frame.
	var midStart time.Time
	for i := 0; i < burstChanges; i++ {
		if i == burstChanges/2 {
			midStart = time.Now()
			p.send(map[string]any{"id": "mid", "method": "dsh/candidates", "params": map[string]any{"query": ""}})
		}
		p.send(map[string]any{"method": "workspace/didChangeConfiguration", "params": map[string]any{
			"settings": map[string]any{"dsh": map[string]any{"sessionsRoot": roots[i%2]}}}})
	}
	last := time.Now()
	midAnswer := p.response()
	if string(midAnswer.ID) != `"mid"` || midAnswer.Error != nil {
		t.Errorf("mid-burst answer id %s error %+v, want the result of \"mid\"", midAnswer.ID, midAnswer.Error)
	}
	mid := midAnswer.Received.Sub(midStart)
	// Poll dsh/status until it reports the last root's index built; each
	// poll is a round trip, so this waits for the event, with a deadline.
	var a lsptest.Message
	for n := 0; ; n++ {
		id := fmt.Sprintf("st%d", n)
		p.send(map[string]any{"id": id, "method": "dsh/status", "params": map[string]any{}})
		a = p.expectResult("status after the burst", fmt.Sprintf("%q", id))
		var st struct {
			Root     string `json:"sessionsRoot"`
			Indexed  int    `json:"sessionsIndexed"`
			Building bool   `json:"building"`
		}
		if err := json.Unmarshal(a.Result, &st); err != nil {
			t.Fatalf("status %s: %v", a.Result, err)
		}
		if st.Root == roots[(burstChanges-1)%2] && st.Indexed == len(expected) && !st.Building {
			break
		}
		if time.Since(last) > abuseTimeout {
			t.Fatalf("status %s %v after the last change, want the last root with %d sessions built", a.Result, abuseTimeout, len(expected))
		}
	}
	settled := time.Since(last)
	close(stop)
	<-sampled
	t.Logf("%d root changes: at most %d inotify instances at once; mid-burst request answered in %v; last root built and reported %v after the last change",
		burstChanges, peak.Load(), mid.Round(time.Millisecond), settled.Round(time.Millisecond))
	if peak.Load() > burstMaxInotify {
		t.Errorf("%d inotify instances at once during the burst, want at most %d", peak.Load(), burstMaxInotify)
	}
	if mid > burstMaxLatency {
		t.Errorf("the request sent during the burst was answered after %v, want at most %v", mid, burstMaxLatency)
	}
	if settled > burstMaxLatency {
		t.Errorf("the last root was reported built %v after the last change, want at most %v", settled, burstMaxLatency)
	}
	_, _ = p.finish()
}
