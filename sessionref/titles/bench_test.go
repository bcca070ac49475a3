package titles_test

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/dsh-refls/dsh-refls/sessionref/dshlog/layout"
	"github.com/dsh-refls/dsh-refls/sessionref/titles"
)

// benchWords make believable titles for the benchmark store.
var benchWords = []string{"refactor", "parser", "fix", "flaky", "test", "deploy", "cache", "index", "rename",
	"server", "client", "review", "migration", "schema", "logging", "retry", "timeout", "budget", "watcher", "docs"}

var (
	benchStoreOnce sync.Once
	benchStoreDir  string
	benchStoreRoot string
	benchStoreErr  error
)

// TestMain removes the benchmark store, which benchmarks share, at the end.
func TestMain(m *testing.M) {
	code := m.Run()
	if benchStoreDir != "" {
		os.RemoveAll(benchStoreDir)
	}
	os.Exit(code)
}

// benchStore writes 10,000 small sessions over 40 projects once per run.
func benchStore(b *testing.B) string {
	b.Helper()
	benchStoreOnce.Do(func() {
		dir, err := os.MkdirTemp("", "dsh-refls-bench-store-")
		if err != nil {
			benchStoreErr = err
			return
		}
		benchStoreDir = dir
		benchStoreRoot = filepath.Join(dir, "sessions")
		rnd := rand.New(rand.NewSource(1))
		for i := 0; i < 10000; i++ {
			cwd := fmt.Sprintf("/home/dev/project-%02d", i%40)
			id := fmt.Sprintf("%08x-0000-4000-8000-%012x", rnd.Uint32(), i)
			title := fmt.Sprintf("%s the %s %s", benchWords[rnd.Intn(len(benchWords))], benchWords[rnd.Intn(len(benchWords))], benchWords[rnd.Intn(len(benchWords))])
			sdir := filepath.Join(benchStoreRoot, layout.ProjectDir(cwd, true), layout.EncodeSegment(id))
			if benchStoreErr = os.MkdirAll(sdir, 0o755); benchStoreErr != nil {
				return
			}
			log := fmt.Sprintf(`{"type":"session","version":0,"id":%q,"createdAt":%d,"cwd":%q,"delegationDepth":0}
{"type":"user/message","seq":0,"time":1,"data":{"content":[{"type":"text","text":%q}],"source":{"kind":"user"},"role":"user","id":"m"},"surfaceOp":"append"}
{"type":"session/title","seq":1,"time":2,"data":{"title":%q,"messageSeqs":[0],"source":{"kind":"fallback"}}}
`, id, 1783350000000+int64(i), cwd, title, title)
			if benchStoreErr = os.WriteFile(filepath.Join(sdir, "session.jsonl"), []byte(log), 0o644); benchStoreErr != nil {
				return
			}
		}
	})
	if benchStoreErr != nil {
		b.Fatalf("writing the bench store: %v", benchStoreErr)
	}
	return benchStoreRoot
}

// BenchmarkCandidatesTyping measures one candidate query per keystroke while
// typing 20 characters of a title over 10,000 sessions (SPEC §5: p50 ≤ 250 µs).
func BenchmarkCandidatesTyping(b *testing.B) {
	root := benchStore(b)
	ix := titles.NewIndex(root, titles.IndexOptions{})
	if err := ix.Build(context.Background(), nil); err != nil {
		b.Fatal(err)
	}
	snap := ix.Snapshot()
	if len(snap.Sessions) != 10000 {
		b.Fatalf("indexed %d sessions", len(snap.Sessions))
	}
	query := []rune("fix the parser retry")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		q := string(query[:1+i%len(query)])
		if _, _, err := snap.Candidates(titles.CandidateQuery{Query: q, TargetCwd: "/home/dev/project-07"}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCandidatesTypingScoped is BenchmarkCandidatesTyping with
// completion's scopes: "hide kinds" classifies every session it walks (the
// bench store's are all interactive, so none is left out: the cost of
// asking); "workspace" walks one directory's 250 sessions; "recent, none"
// asks for sessions active in the last week of a store whose events are all
// older, the worst case, in which every match is tested and none listed.
func BenchmarkCandidatesTypingScoped(b *testing.B) {
	root := benchStore(b)
	ix := titles.NewIndex(root, titles.IndexOptions{})
	if err := ix.Build(context.Background(), nil); err != nil {
		b.Fatal(err)
	}
	snap := ix.Snapshot()
	query := []rune("fix the parser retry")
	for _, sc := range []struct {
		name  string
		scope titles.Scope
	}{
		{"none", titles.Scope{}},
		{"hide kinds", titles.Scope{HideKinds: true}},
		{"workspace", titles.Scope{WorkspaceOnly: true, HideKinds: true}},
		{"recent, none", titles.Scope{ActiveSince: 1783350000000, HideKinds: true}},
	} {
		b.Run(sc.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				q := string(query[:i%(len(query)+1)])
				if _, _, err := snap.Candidates(titles.CandidateQuery{Query: q, TargetCwd: "/home/dev/project-07", ByActivity: true, Scope: sc.scope}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkIndexWarmRestart measures a restart over an unchanged root from
// the cache (SPEC §5: ≤ 100 ms at 10,000 sessions).
func BenchmarkIndexWarmRestart(b *testing.B) {
	root := benchStore(b)
	ix := titles.NewIndex(root, titles.IndexOptions{})
	if err := ix.Build(context.Background(), nil); err != nil {
		b.Fatal(err)
	}
	cache := filepath.Join(b.TempDir(), "index.gob")
	if err := ix.SaveCache(cache); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		warm := titles.NewIndex(root, titles.IndexOptions{})
		if err := warm.LoadCache(cache); err != nil {
			b.Fatal(err)
		}
		if err := warm.Build(context.Background(), nil); err != nil {
			b.Fatal(err)
		}
		if warm.BytesRead() != 0 {
			b.Fatalf("warm restart read %d bytes", warm.BytesRead())
		}
	}
}

// BenchmarkIndexColdBuild measures a build with no cache over 10,000 small logs.
func BenchmarkIndexColdBuild(b *testing.B) {
	root := benchStore(b)
	for i := 0; i < b.N; i++ {
		ix := titles.NewIndex(root, titles.IndexOptions{})
		if err := ix.Build(context.Background(), nil); err != nil {
			b.Fatal(err)
		}
	}
}
