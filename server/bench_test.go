package server

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/dsh-refls/dsh-refls/internal/dshgen"
)

// Size of the large benchmark store: as many sessions as a heavy user
// keeps, at small logs so generating it takes seconds, not minutes.
const (
	largeStoreSessions = 10000
	largeStoreBytes    = 100 << 20
	// largeStoreBuildTimeout bounds the first index build of that store.
	largeStoreBuildTimeout = 5 * time.Minute
)

// BenchmarkCompletion measures one completion round trip (request framed
// over net.Pipe, the `@` token parsed, sessions and workspace files
// searched, the list encoded and decoded) on the demo store, as an editor
// sees it. It reports p50 and p99 latency besides ns/op.
func BenchmarkCompletion(b *testing.B) {
	store := b.TempDir()
	if err := dshgen.DemoStore(store, time.Now()); err != nil {
		b.Fatal(err)
	}
	benchCompletion(b, store, time.Minute)
}

// BenchmarkCompletionLargeStore is BenchmarkCompletion on a generated
// store of largeStoreSessions sessions (largeStoreBytes of logs).
func BenchmarkCompletionLargeStore(b *testing.B) {
	store := b.TempDir()
	start := time.Now()
	rep, err := dshgen.BenchStoreWith(context.Background(), store, dshgen.BenchConfig{
		Sessions: largeStoreSessions, TargetBytes: largeStoreBytes, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("generated %d sessions (%d MB) in %v", rep.Sessions, rep.DiskBytes>>20, time.Since(start).Round(time.Millisecond))
	benchCompletion(b, store, largeStoreBuildTimeout)
}

// benchCompletion serves store and a small workspace, waits for both
// indexes, and measures completion of a bare `@` and of a query after an
// emoji.
func benchCompletion(b *testing.B, store string, buildTimeout time.Duration) {
	ws := b.TempDir()
	for _, f := range []string{"README.md", "api/middleware/ratelimit.go", "tests/login.spec.ts", "docs/rate limits.md"} {
		p := filepath.Join(ws, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(f), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	h := newBenchHarness(b, Options{
		Logger:       zap.NewNop(),
		SessionsRoot: store,
		OpenSessions: NewLiveSessionsFactory(false),
		OpenFiles:    NewFilerefFactory(zap.NewNop()),
	})
	h.initialize(initOptions{root: ws, settings: map[string]any{"sessionId": "bench-target", "cwd": dshgen.DefaultDemoWorkspace}})
	start := time.Now()
	for {
		var st statusResult
		h.mustCall(MethodStatus, nil, &st)
		if !st.Building && st.SessionsIndexed > 0 && st.FilesIndexed > 0 {
			b.Logf("indexed %d sessions in %v", st.SessionsIndexed, time.Since(start).Round(time.Millisecond))
			break
		}
		if time.Since(start) > buildTimeout {
			b.Fatal("indexes never finished")
		}
		time.Sleep(time.Millisecond)
	}
	for _, q := range []struct{ name, line string }{{"at", "see @‸"}, {"query", "😀 see @rate‸"}} {
		b.Run(q.name, func(b *testing.B) {
			pos := h.open("file:///bench-"+q.name+".md", q.line, EncodingUTF16)
			params := map[string]any{"textDocument": map[string]any{"uri": "file:///bench-" + q.name + ".md"}, "position": pos}
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				start := time.Now()
				var list wireList
				if err := h.call("textDocument/completion", params, &list); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(start))
				if len(list.Items) == 0 {
					b.Fatal("no items")
				}
			}
			b.StopTimer()
			sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
		})
	}
}
