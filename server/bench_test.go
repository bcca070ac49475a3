package server

import (
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/dsh-refls/dsh-refls/internal/dshgen"
	"github.com/dsh-refls/dsh-refls/sessionref"
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
		OpenSessions: NewSessionrefFactory(sessionref.IndexOptions{}, false),
		OpenFiles:    NewFilerefFactory(zap.NewNop()),
	})
	h.initialize(initOptions{root: ws, settings: map[string]any{"sessionId": "bench-target", "cwd": dshgen.DefaultDemoWorkspace}})
	for i := 0; ; i++ {
		var st statusResult
		h.mustCall(MethodStatus, nil, &st)
		if !st.Building && st.SessionsIndexed > 0 && st.FilesIndexed > 0 {
			break
		}
		if i > 1000 {
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
