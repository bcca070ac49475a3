package main

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"runtime/pprof"
	"sync"
	"time"

	"github.com/dsh-refls/dsh-refls/internal/cputime"
	"github.com/dsh-refls/dsh-refls/sessionref/recall"
	"github.com/dsh-refls/dsh-refls/sessionref/titles"
)

// runHeap measures, in process and independent of the machine's load, what
// the recall index's first build costs over the store at root: the live
// heap it keeps once built (after a collection), the peak of live plus
// unswept heap objects during the build (sampled every 5 ms) above the
// title index's, the bytes it allocated and the CPU it took. The server
// runs the build at GOGC 25 (server/internal/memtune/gc.go); so does this.
// profile, when set, receives a heap profile of the built index.
// cpuProfile, when set, receives a CPU profile of the build.
func runHeap(ctx context.Context, root string, workers int, profile, cpuProfile string) error {
	title := titles.NewIndex(root, titles.IndexOptions{})
	if err := title.Build(ctx, nil); err != nil {
		return fmt.Errorf("title index: %w", err)
	}
	snap := title.Snapshot()
	base := liveHeap()
	old := debug.SetGCPercent(25)
	defer debug.SetGCPercent(old)
	var alloc0 runtime.MemStats
	runtime.ReadMemStats(&alloc0)

	stop := make(chan struct{})
	var peak uint64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(s)
			peak = max(peak, s[0].Value.Uint64())
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
	ix := recall.New(recall.Options{Parallelism: workers})
	defer ix.Close()
	if cpuProfile != "" {
		f, err := os.Create(cpuProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
	}
	cpu0 := cputime.Process()
	t0 := time.Now()
	err := ix.Sync(ctx, snap)
	wall, cpu := time.Since(t0), cputime.Process()-cpu0
	if cpuProfile != "" {
		pprof.StopCPUProfile()
	}
	close(stop)
	wg.Wait()
	if err != nil {
		return err
	}
	var alloc1 runtime.MemStats
	runtime.ReadMemStats(&alloc1)
	built := liveHeap()
	st := ix.Stats()
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Printf("recall first build in process: %d sessions, projected text %d MB, %d workers, load %s",
		st.Sessions, st.TextBytes>>20, workers, load)
	fmt.Printf("  live heap kept by the index: %.1f MB (postings %.1f MB, %d tokens, %d grams; block cache %.1f MB)\n",
		mb(built-base), mb(uint64(st.PostingBytes)), st.Tokens, st.Grams, mb(uint64(st.CacheBytes)))
	fmt.Printf("  peak heap objects during the build above the title index's: %.1f MB\n", mb(peak-base))
	fmt.Printf("  allocated during the build: %.0f MB in %.2f M objects\n",
		mb(alloc1.TotalAlloc-alloc0.TotalAlloc), float64(alloc1.Mallocs-alloc0.Mallocs)/1e6)
	fmt.Printf("  CPU %.2f s (%.2f CPU-s per GB of projected text), wall %v\n",
		cpu.Seconds(), cpu.Seconds()/(float64(st.TextBytes)/(1<<30)), wall.Round(time.Millisecond))
	if profile != "" {
		f, err := os.Create(profile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
			return err
		}
	}
	runtime.KeepAlive(snap)
	runtime.KeepAlive(ix)
	return nil
}

func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

func mb(b uint64) float64 { return float64(int64(b)) / (1 << 20) }
