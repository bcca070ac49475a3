package dshlog_test

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/dsh-refls/dsh-refls/internal/cputime"
	"github.com/dsh-refls/dsh-refls/internal/dshgen"
	"github.com/dsh-refls/dsh-refls/sessionref/dshlog"
	"github.com/dsh-refls/dsh-refls/sessionref/titles"
)

// projBenchRootEnv names an existing store to read instead of the small
// generated one, for full-size measurements (scripts run them under the
// benchmark lock): BenchmarkReadProjection then reads every session of it.
const projBenchRootEnv = "DSH_REFLS_PROJ_BENCH_ROOT"

// projBenchRoots are the stores BenchmarkReadProjection reads: the one
// projBenchRootEnv names, else a v0 and a v4 store of 200 raw sessions,
// 48 MB each, generated under b's temporary directory.
func projBenchRoots(b *testing.B) map[string]string {
	b.Helper()
	if root := os.Getenv(projBenchRootEnv); root != "" {
		return map[string]string{filepath.Base(root): root}
	}
	roots := map[string]string{}
	for _, v4 := range []bool{false, true} {
		name := "v0"
		if v4 {
			name = "v4"
		}
		root := filepath.Join(b.TempDir(), name)
		cfg := dshgen.BenchConfig{Sessions: 200, TargetBytes: 48 << 20, Seed: 7, V4: v4}
		if _, err := dshgen.BenchStoreWith(context.Background(), root, cfg); err != nil {
			b.Fatalf("writing the projection bench store: %v", err)
		}
		roots[name] = root
	}
	return roots
}

// projBenchEntries lists the sessions of root and the total size of
// their logs (the generation each entry names).
func projBenchEntries(b *testing.B, root string) ([]dshlog.Entry, int64) {
	b.Helper()
	ix := titles.NewIndex(root, titles.IndexOptions{})
	if err := ix.Build(context.Background(), nil); err != nil {
		b.Fatal(err)
	}
	entries := ix.Snapshot().Sessions
	var total int64
	for _, e := range entries {
		info, err := os.Stat(e.Path)
		if err != nil {
			b.Fatal(err)
		}
		total += info.Size()
	}
	return entries, total
}

// BenchmarkReadProjection reads the projection of every session of a store
// on one goroutine: its MB/s (log bytes on disk per second) and MB/cpu-s
// are the projection read's speed per core.
func BenchmarkReadProjection(b *testing.B) {
	for name, root := range projBenchRoots(b) {
		b.Run(name, func(b *testing.B) {
			entries, total := projBenchEntries(b, root)
			b.SetBytes(total)
			b.ReportAllocs()
			runtime.GC()
			b.ResetTimer()
			cpu := cputime.Process()
			for i := 0; i < b.N; i++ {
				for _, e := range entries {
					dshlog.ReadProjection(context.Background(), e) //nolint:errcheck // unreadable logs count as read
				}
			}
			// CPU time, unlike wall-clock time, hardly depends on what
			// else the machine runs: MB per CPU-second is the figure to
			// compare on a shared machine.
			if used := cputime.Process() - cpu; cpu > 0 && used > 0 {
				b.ReportMetric(float64(total)*float64(b.N)/used.Seconds()/1e6, "MB/cpu-s")
			}
		})
	}
}
