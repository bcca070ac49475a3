package watch

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"go.uber.org/zap"
)

// BenchmarkPollPass measures one full stat pass over a tree, the cost that
// DefaultPollInterval and pollLoadFactor are chosen against:
//
//	go test -run '^$' -bench PollPass ./watch
func BenchmarkPollPass(b *testing.B) {
	const dirs, filesPerDir = 200, 100
	root := b.TempDir()
	for d := range dirs {
		dir := filepath.Join(root, fmt.Sprintf("d%03d", d))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		for f := range filesPerDir {
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%03d", f)), nil, 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	w, err := New(Options{Root: root, Mode: ModePoll, Logger: zap.NewNop()})
	if err != nil {
		b.Fatal(err)
	}
	p := &poller{w: w, unreadable: make(map[string]struct{}), readDir: readDirUnsorted}
	ctx := context.Background()
	b.ResetTimer()
	for b.Loop() {
		next, _ := p.scan(ctx)
		if len(next) != dirs*filesPerDir+dirs+1 {
			b.Fatalf("pass saw %d paths", len(next))
		}
		p.snap = next
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(dirs*filesPerDir), "ns/file")
}
