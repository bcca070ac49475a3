//go:build linux

package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dsh-refls/dsh-refls/internal/longtest"
)

// rssKB reads the resident set size of pid.
func rssKB(t *testing.T, pid int) int64 {
	t.Helper()
	return statusKB(t, pid, "VmRSS")
}

// statusKB reads a field of /proc/<pid>/status given in kB.
func statusKB(t *testing.T, pid int, field string) int64 {
	t.Helper()
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatalf("no %s in /proc/%d/status", field, pid)
	return 0
}

// steadyRSS waits until the RSS of pid changes by less than 5% over a
// second and returns it.
func steadyRSS(t *testing.T, pid int) int64 {
	t.Helper()
	deadline := time.Now().Add(abuseTimeout)
	prev := rssKB(t, pid)
	for {
		time.Sleep(time.Second) // the interval over which the RSS must hold still
		cur := rssKB(t, pid)
		if d := cur - prev; d*20 < prev && -d*20 < prev {
			return cur
		}
		if time.Now().After(deadline) {
			t.Fatalf("RSS never settled (last %d kB, before %d kB)", cur, prev)
		}
		prev = cur
	}
}

// TestBinaryReturnsMemoryAfterALargeRequest sends the real binary a 24 MiB
// dsh/prepare over its pipes and opens and closes a 24 MiB document: its
// RSS peaks far above idle, and must be back within 1.5× idle within 10 s
// (issue 15: the process used to stay near 250 MB).
func TestBinaryReturnsMemoryAfterALargeRequest(t *testing.T) {
	longtest.Require(t)
	if testing.Short() {
		t.Skip("sends 48 MiB over the pipes")
	}
	// This held in every run once the releaser stopped taking the level of
	// its first release (made while the answer was still live) as the idle
	// floor (server/internal/memtune/releaser.go); before, it failed about one run in three
	// (38–111 MB = 3–9× idle after 10 s). scripts/benchmemory measures the
	// same release with larger inputs.
	_, store, ws, expected := demoStoreUnder(t)
	p := startWire(t, "--sessions-root", store, "--watch", "poll", "--no-index-cache")
	p.initialize(ws, expected[0].ID)
	pid := p.cmd.Process.Pid
	idle := steadyRSS(t, pid)
	// The peak (VmHWM) counts from here (Linux ≥ 4.0): it shows the request
	// did raise the process's memory, which a slow reader of the answer
	// could otherwise miss, the release having come first.
	if err := os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0); err != nil {
		t.Fatal(err)
	}

	text := strings.Repeat("lorem ipsum ", (24<<20)/12)
	uri := "file://" + ws + "/big.md"
	p.send(map[string]any{"method": "textDocument/didOpen", "params": map[string]any{"textDocument": map[string]any{
		"uri": uri, "languageId": "markdown", "version": 1, "text": text}}})
	p.send(map[string]any{"method": "textDocument/didClose", "params": map[string]any{"textDocument": map[string]any{"uri": uri}}})
	p.send(map[string]any{"id": "big", "method": "dsh/prepare", "params": map[string]any{"text": text}})
	a := p.expectResult("large prepare", `"big"`)
	if len(a.Result) < len(text) {
		t.Fatalf("prepare answered %d bytes", len(a.Result))
	}
	answered := time.Now()
	deadline := answered.Add(10 * time.Second)
	for {
		rss := rssKB(t, pid)
		if float64(rss) <= 1.5*float64(idle) {
			peak := statusKB(t, pid, "VmHWM")
			t.Logf("idle %d kB, peak %d kB, %d kB %v after the answer", idle, peak, rss, time.Since(answered).Round(10*time.Millisecond))
			if peak < 2*idle {
				t.Fatalf("peak %d kB is not 2× idle (%d kB): the request did not raise the memory this test checks is returned", peak, idle)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("RSS %d kB = %.1f× idle (%d kB) 10 s after a 24 MiB request (peak %d kB)", rss, float64(rss)/float64(idle), idle, statusKB(t, pid, "VmHWM"))
		}
		time.Sleep(50 * time.Millisecond) // polling /proc until the deadline
	}
	p.send(map[string]any{"id": "down", "method": "shutdown"})
	p.expectResult("shutdown", `"down"`)
	p.send(map[string]any{"method": "exit"})
	if _, code := p.finish(); code != 0 {
		t.Errorf("exit code %d", code)
	}
}
