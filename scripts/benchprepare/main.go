// Command benchprepare measures the memory of preparing one session whose
// single user message is --mb megabytes (issue 12 item 8, issue 15 item 2):
// the peak of the Go heap during a call of prepare.PrepareText (sampled
// every millisecond from runtime/metrics), the bytes allocated, and the
// spill files written. The ratio printed is peak heap ÷ message size; the
// bound is < 2.
//
//	go run ./scripts/benchprepare --mb 64 --calls 3 [--memprofile /tmp/prep.pprof]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"strings"
	"sync/atomic"
	"time"

	"github.com/dsh-refls/dsh-refls/internal/dshgen"
	"github.com/dsh-refls/dsh-refls/sessionref"
	"github.com/dsh-refls/dsh-refls/sessionref/prepare"
	"github.com/dsh-refls/dsh-refls/sessionref/titles"
)

func main() {
	mb := flag.Int("mb", 64, "size of the one user message, MiB")
	calls := flag.Int("calls", 3, "preparations to run")
	zstd := flag.Bool("zstd", false, "write the log as zstd frames")
	memprofile := flag.String("memprofile", "", "write an allocation profile of the calls here")
	check := flag.Bool("check", false, "exit 1 when a call peaks at 2× the message or more, or more than one spill file is written (CI's short form)")
	flag.Parse()
	if err := run(*mb, *calls, *zstd, *memprofile, *check); err != nil {
		fmt.Fprintln(os.Stderr, "benchprepare:", err)
		os.Exit(1)
	}
}

// heapSampler records the peak of live heap objects.
type heapSampler struct {
	peak atomic.Uint64
	stop chan struct{}
	done chan struct{}
}

func startSampler() *heapSampler {
	h := &heapSampler{stop: make(chan struct{}), done: make(chan struct{})}
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	go func() {
		defer close(h.done)
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(s)
			if v := s[0].Value.Uint64(); v > h.peak.Load() {
				h.peak.Store(v)
			}
			select {
			case <-h.stop:
				return
			case <-t.C:
			}
		}
	}()
	return h
}

func (h *heapSampler) finish() uint64 {
	close(h.stop)
	<-h.done
	return h.peak.Load()
}

func run(mb, calls int, useZstd bool, memprofile string, check bool) error {
	dir, err := os.MkdirTemp("", "benchprepare-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	root := filepath.Join(dir, "sessions")
	size := mb << 20
	enc := dshgen.Raw
	if useZstd {
		enc = dshgen.Zstd
	}
	big := dshgen.NewSession("big-message").Cwd("/work/big").Turn(func(t *dshgen.Turn) {
		t.UserText(strings.Repeat("0123456789abcdef", size/16))
		t.Title("One big message", "user")
		t.AssistantText("Done.")
	})
	if _, err := big.Save(root, enc); err != nil {
		return err
	}
	ix := titles.NewIndex(root, titles.IndexOptions{})
	if err := ix.Build(context.Background(), nil); err != nil {
		return err
	}
	spillDir := filepath.Join(dir, "spill")
	text := "see " + sessionref.Mention("One big message", "big-message")
	if memprofile != "" {
		runtime.MemProfileRate = 64 << 10
	}
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	fmt.Printf("message %d MiB (%s), live heap before %.1f MiB\n", mb, enc, float64(before.HeapAlloc)/(1<<20))
	var failed error // with check, the first bound that failed
	for i := range calls {
		runtime.GC()
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		h := startSampler()
		start := time.Now()
		res, err := prepare.PrepareText(context.Background(), ix.Snapshot(), "target", text, prepare.ModeReplace, nil,
			prepare.Limits{SpillDir: spillDir})
		took := time.Since(start)
		peak := h.finish()
		runtime.ReadMemStats(&m1)
		if err != nil {
			return err
		}
		spills, _ := filepath.Glob(filepath.Join(spillDir, "*", "*"))
		var spillBytes int64
		for _, p := range spills {
			if info, err := os.Stat(p); err == nil {
				spillBytes += info.Size()
			}
		}
		_ = res
		if check && (peak >= uint64(2*size) || len(spills) != 1) && failed == nil {
			failed = fmt.Errorf("call %d: peak %.2f× the message (bound < 2×), %d spill files (want 1)",
				i+1, float64(peak)/float64(size), len(spills))
		}
		fmt.Printf("call %d: %v, peak heap %.1f MiB = %.2f× the message (bound < 2×), allocated %.1f MiB, %d spill files %.1f MiB in total\n",
			i+1, took.Round(time.Millisecond), float64(peak)/(1<<20), float64(peak)/float64(size),
			float64(m1.TotalAlloc-m0.TotalAlloc)/(1<<20), len(spills), float64(spillBytes)/(1<<20))
	}
	if memprofile != "" {
		f, err := os.Create(memprofile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
			return err
		}
	}
	return failed
}
