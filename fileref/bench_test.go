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
	"auth", "token", "stream", "buffer", "encoder", "decoder", "worker", "metrics", "logger",
	"format", "queue", "schema", "record", "widget", "layout", "event",
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
		ix.answers = nil
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
		ix.answers = nil
		ix.cacheMu.Unlock()
		if _, _, err := ix.Search(context.Background(), "s", 0); err != nil {
			b.Fatal(err)
		}
	}
}

// genBenchPaths returns the paths of a tree shaped like the one
// scripts/bench-files.sh generates (25 × 10 × 30 directories of 20 files:
// 157,775 paths), built in memory.
func genBenchPaths() []string {
	rng := rand.New(rand.NewPCG(42, 4242))
	w := func() string { return benchWords[rng.IntN(len(benchWords))] }
	exts := []string{".go", ".ts", ".tsx", ".py", ".rs", ".md", ".json", ".c", ".h", ".yaml"}
	var out []string
	for t := 0; t < 25; t++ {
		top := fmt.Sprintf("%s%02d", w(), t)
		out = append(out, top+"/")
		for m := 0; m < 10; m++ {
			mid := fmt.Sprintf("%s/%s_%s%d", top, w(), w(), m)
			out = append(out, mid+"/")
			for l := 0; l < 30; l++ {
				leaf := fmt.Sprintf("%s/%s%d", mid, w(), l)
				out = append(out, leaf+"/")
				for f := 0; f < 20; f++ {
					out = append(out, fmt.Sprintf("%s/%s_%s%d%s", leaf, w(), w(), f, exts[rng.IntN(len(exts))]))
				}
			}
		}
	}
	return out
}

// benchTitleWords are the first words of generated session titles, which
// scripts/benche2e types into mixed completion.
var benchTitleWords = []string{"Refactor", "Document", "Review", "Remove", "Speed", "Migrate", "Add", "Test", "Fix"}

// BenchmarkTypingWords types each title word over the 157,775-path tree,
// starting cold: short prefixes match most paths.
func BenchmarkTypingWords(b *testing.B) {
	ix := memIndex(b, genBenchPaths())
	keys := 0
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, word := range benchTitleWords {
			ix.cacheMu.Lock()
			ix.cache = nil
			ix.answers = nil
			ix.cacheMu.Unlock()
			for n := 1; n <= len(word); n++ {
				if _, _, err := ix.Search(context.Background(), word[:n], DefaultLimit+8); err != nil {
					b.Fatal(err)
				}
				keys++
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(keys), "ns/keystroke")
}

// BenchmarkFirstKeystrokeLarge is the full scan of a one-character query
// over the 157,775-path tree.
func BenchmarkFirstKeystrokeLarge(b *testing.B) {
	ix := memIndex(b, genBenchPaths())
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ix.cacheMu.Lock()
		ix.cache = nil
		ix.answers = nil
		ix.cacheMu.Unlock()
		if _, _, err := ix.Search(context.Background(), "r", DefaultLimit+8); err != nil {
			b.Fatal(err)
		}
	}
}

// memSnapshot packs a snapshot of the shape of scripts/benchfiles' tree
// in memory: 25 × 10 × 30 leaf directories of 20 files, every size known.
func memSnapshot() *snapshot {
	var raw []rawEntry
	exts := []string{".go", ".ts", ".png", ".md", ".json"}
	for t := 0; t < 25; t++ {
		top := fmt.Sprintf("%s%02d", benchWords[t%len(benchWords)], t)
		raw = append(raw, newRawEntry(top, true, false))
		for m := 0; m < 10; m++ {
			mid := fmt.Sprintf("%s/%s_%d", top, benchWords[m], m)
			raw = append(raw, newRawEntry(mid, true, false))
			for l := 0; l < 30; l++ {
				leaf := fmt.Sprintf("%s/%s%d", mid, benchWords[l%len(benchWords)], l)
				raw = append(raw, newRawEntry(leaf, true, false))
				for f := 0; f < 20; f++ {
					raw = append(raw, newRawEntry(fmt.Sprintf("%s/%s_%d%s", leaf, benchWords[f], f, exts[f%len(exts)]), false, false))
				}
			}
		}
	}
	sizes := make([]uint32, len(raw))
	for i := range sizes {
		sizes[i] = uint32(100 * i % 50000)
	}
	return newSnapshot(nil, nil, raw, sizes)
}

// BenchmarkSumDirs: what Apply and MeasureSizes add to sum 150,000 files
// by directory.
func BenchmarkSumDirs(b *testing.B) {
	s := memSnapshot()
	ix := &Index{}
	b.ReportMetric(float64(s.files), "files")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ix.sumDirs(s)
	}
}
