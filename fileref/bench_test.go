package fileref

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// benchWords build realistic path names for generated trees.
var benchWords = []string{
	"server", "client", "handler", "config", "util", "parser", "render", "store",
	"cache", "index", "search", "query", "session", "model", "view", "router",
}

// genBenchTree writes files files (a quarter of them ignored through
// .gitignore) under a fresh temporary directory.
func genBenchTree(b *testing.B, files int) string {
	b.Helper()
	root := b.TempDir()
	rng := rand.New(rand.NewPCG(1, 2))
	if err := os.WriteFile(filepath.Join(root, ".gitignore"), []byte("build/\n*.log\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	for i := 0; i < files; i++ {
		w := func() string { return benchWords[rng.IntN(len(benchWords))] }
		var p string
		switch {
		case i%8 == 0:
			p = fmt.Sprintf("%s%d/build/%s%d.o", w(), i%20, w(), i)
		case i%8 == 1:
			p = fmt.Sprintf("%s%d/%s/%s%d.log", w(), i%20, w(), w(), i)
		default:
			p = fmt.Sprintf("%s%d/%s/%s_%s%d.go", w(), i%20, w(), w(), w(), i)
		}
		abs := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(abs, nil, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return root
}

// benchTreeFiles keeps the generated tree small enough to create quickly;
// scripts/bench-files.sh measures 200,000 files.
const benchTreeFiles = 10000

func BenchmarkBuild(b *testing.B) {
	root := genBenchTree(b, benchTreeFiles)
	env := isolatedEnv(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ix, err := Build(context.Background(), Options{Root: root, GitEnv: env})
		if err != nil {
			b.Fatal(err)
		}
		if ix.Files() == 0 {
			b.Fatal("empty index")
		}
	}
}

// BenchmarkTyping20 measures one whole 20-character typing session: 20
// searches, each narrowing the previous one.
func BenchmarkTyping20(b *testing.B) {
	root := genBenchTree(b, benchTreeFiles)
	ix, err := Build(context.Background(), Options{Root: root, GitEnv: isolatedEnv(b)})
	if err != nil {
		b.Fatal(err)
	}
	const query = "serverhandlerconfigg"
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ix.cacheMu.Lock()
		ix.cache = nil // each session starts cold
		ix.cacheMu.Unlock()
		for n := 1; n <= len(query); n++ {
			if _, _, err := ix.Search(context.Background(), query[:n], 0); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(query)), "ns/keystroke")
}

// BenchmarkFirstKeystroke measures the full scan a one-character query
// needs when nothing can be narrowed.
func BenchmarkFirstKeystroke(b *testing.B) {
	root := genBenchTree(b, benchTreeFiles)
	ix, err := Build(context.Background(), Options{Root: root, GitEnv: isolatedEnv(b)})
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ix.cacheMu.Lock()
		ix.cache = nil
		ix.cacheMu.Unlock()
		if _, _, err := ix.Search(context.Background(), "s", 0); err != nil {
			b.Fatal(err)
		}
	}
}
