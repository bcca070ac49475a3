package main

import (
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/dsh-refls/dsh-refls/internal/longtest"
)

// shortDuration is the short form of the soak that CI runs.
const shortDuration = 20 * time.Second

// TestSoakShort runs the short form of the soak (20 s of load on the real
// binary) and fails on any bound it breaks. The full 3-minute run is
// scripts/soak.sh; this test runs the short form, in CI's step for long
// tests (internal/longtest), so that `go test ./...` stays short.
func TestSoakShort(t *testing.T) {
	longtest.Require(t)
	if runtime.GOOS != "linux" {
		t.Skip("the soak samples /proc, which only Linux has")
	}
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skipf("no /proc: %v", err)
	}
	cfg := config{
		Duration: shortDuration,
		Sessions: defaultSessions,
		Files:    defaultFiles,
		Typists:  2,
		Dir:      t.TempDir(),
		Logf:     t.Logf,
	}
	rep, err := run(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	rep.print(&out)
	t.Log("\n" + out.String())
	for _, f := range rep.failures() {
		t.Error(f)
	}
	if rep.counts["appends"] == 0 || rep.counts["sessions created"] == 0 || rep.counts["workspace changes"] == 0 {
		t.Errorf("the writer did not run: %v", rep.counts)
	}
}

// TestPercentile checks the nearest-rank percentile the report uses.
func TestPercentile(t *testing.T) {
	ms := func(ns ...int) []time.Duration {
		var d []time.Duration
		for _, n := range ns {
			d = append(d, time.Duration(n)*time.Millisecond)
		}
		return d
	}
	tests := []struct {
		d    []time.Duration
		p    float64
		want time.Duration
	}{
		{nil, 50, 0},
		{ms(5), 99, 5 * time.Millisecond},
		{ms(4, 1, 3, 2), 50, 2 * time.Millisecond},
		{ms(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), 90, 9 * time.Millisecond},
		{ms(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), 100, 10 * time.Millisecond},
	}
	for _, tt := range tests {
		if got := percentile(tt.d, tt.p); got != tt.want {
			t.Errorf("percentile(%v, %v) = %v, want %v", tt.d, tt.p, got, tt.want)
		}
	}
}

// TestFailuresJudgeBounds feeds the verdict samples and latencies that
// break each bound, and ones that keep them.
func TestFailuresJudgeBounds(t *testing.T) {
	base := func() *report {
		r := &report{cfg: config{Warmup: 5 * time.Second}, latencies: map[string][]time.Duration{}, errors: map[string]int{}}
		for i := range 10 {
			r.samples = append(r.samples, sample{at: time.Duration(i+1) * time.Second, rssKiB: 10000, fds: 12})
		}
		r.latencies["textDocument/completion"] = []time.Duration{time.Millisecond}
		return r
	}
	tests := []struct {
		name  string
		edit  func(r *report)
		wants string // "" means no failure
	}{
		{"steady", func(*report) {}, ""},
		{"RSS grows 60%", func(r *report) {
			for i := 6; i < 10; i++ {
				r.samples[i].rssKiB = 16000
			}
		}, "RSS grew 60%"},
		{"a descriptor leak", func(r *report) { r.samples[8].fds = 20 }, "open descriptors 20"},
		{"slow completion", func(r *report) {
			r.latencies["textDocument/completion"] = []time.Duration{60 * time.Millisecond}
		}, "completion p99"},
		{"slow completion on a quiet machine", func(r *report) {
			r.latencies["textDocument/completion"] = []time.Duration{60 * time.Millisecond}
			r.latencies["dsh/status"] = []time.Duration{time.Millisecond, 2 * time.Millisecond}
		}, "completion p99 60ms, bound 50ms (dsh/status p99 2ms)"},
		{"a busy machine delays every request alike", func(r *report) {
			r.latencies["textDocument/completion"] = []time.Duration{84 * time.Millisecond}
			r.latencies["dsh/status"] = []time.Duration{time.Millisecond, 109 * time.Millisecond}
		}, ""},
		{"a busy machine with few status calls", func(r *report) {
			r.latencies["textDocument/completion"] = []time.Duration{55 * time.Millisecond}
			r.latencies["dsh/status"] = []time.Duration{time.Millisecond, 17 * time.Millisecond}
		}, ""},
		{"completion slower than the busy machine explains", func(r *report) {
			r.latencies["textDocument/completion"] = []time.Duration{600 * time.Millisecond}
			r.latencies["dsh/status"] = []time.Duration{time.Millisecond, 109 * time.Millisecond}
		}, "bound 545ms (5× the dsh/status p99 109ms of this run"},
		{"an internal error", func(r *report) { r.errors["dsh/prepare: -32603 boom"] = 2 }, "2 × dsh/prepare"},
		{"a contract error is an answer", func(r *report) { r.errors["dsh/prepare: -32014 READ_FAILED"] = 1 }, ""},
	}
	for _, tt := range tests {
		r := base()
		tt.edit(r)
		got := strings.Join(r.failures(), "; ")
		if (tt.wants == "") != (got == "") || !strings.Contains(got, tt.wants) {
			t.Errorf("%s: failures %q, want %q", tt.name, got, tt.wants)
		}
	}
}

// TestCompletionBound: a quiet run keeps the fixed bound; a busy one
// scales the larger p99 of dsh/status and hover.
func TestCompletionBound(t *testing.T) {
	ms := func(n int, v time.Duration) []time.Duration {
		d := make([]time.Duration, n)
		for i := range d {
			d[i] = v
		}
		return d
	}
	for _, c := range []struct {
		name          string
		status, hover []time.Duration
		want          time.Duration
	}{
		{"quiet", ms(36, time.Millisecond), ms(176, 2*time.Millisecond), maxCompletionP99},
		{"busy, seen by status", ms(36, 20*time.Millisecond), ms(176, 2*time.Millisecond), machineFactor * 20 * time.Millisecond},
		{"busy, seen by hover only", ms(36, 7*time.Millisecond), ms(176, 11*time.Millisecond), machineFactor * 11 * time.Millisecond},
		{"no hover", ms(36, 12*time.Millisecond), nil, machineFactor * 12 * time.Millisecond},
	} {
		if got, why := completionBound(c.status, c.hover); got != c.want {
			t.Errorf("%s: bound %s (%s), want %s", c.name, got, why, c.want)
		}
	}
}
