package recall

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/dsh-refls/dsh-refls/internal/cputime"
	"github.com/dsh-refls/dsh-refls/internal/dshgen"
	"github.com/dsh-refls/dsh-refls/sessionref/titles"
)

// BenchmarkSearchVocabulary measures what the size of the text's
// vocabulary costs the index: dshgen's bench text is drawn from about 150
// words, where conversation text also holds identifiers, numbers, hashes
// and paths. Each store holds 1,000 sessions of 60 KB of text, seven
// tokens in ten drawn from 150 common words and three from a pool of
// distinct identifiers (the pool's size is the sub-benchmark's name). It
// reports the dictionary's tokens, the heap the built index keeps (once
// built, and once searched: a search joins the dictionary's tokens), the
// build's CPU, and times a search for a common word:
//
//	go test -run '^$' -bench SearchVocabulary -benchtime 30x ./sessionref/recall/
func BenchmarkSearchVocabulary(b *testing.B) {
	for _, pool := range []int{1_000, 100_000, 1_000_000} {
		b.Run(strconv.Itoa(pool), func(b *testing.B) {
			root := b.TempDir()
			if err := writeVocabularyStore(root, pool); err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			title := titles.NewIndex(root, titles.IndexOptions{})
			if err := title.Build(ctx, nil); err != nil {
				b.Fatal(err)
			}
			heap0 := liveHeap()
			ix := New(Options{Path: filepath.Join(b.TempDir(), "recall.idx"), Parallelism: 2})
			defer ix.Close()
			cpu := cputime.Process()
			if err := ix.Sync(ctx, title.Snapshot()); err != nil {
				b.Fatal(err)
			}
			buildCPU := cputime.Process() - cpu
			heap := liveHeap() - heap0
			for b.Loop() {
				res, err := ix.Search(ctx, Query{Text: "session", Limit: 20})
				if err != nil || len(res) != 20 {
					b.Fatalf("search: %d answers, %v", len(res), err)
				}
			}
			// After the loop: b.Loop's first call clears what was
			// reported before it.
			b.ReportMetric(buildCPU.Seconds(), "build-CPU-s")
			b.ReportMetric(float64(heap)/1e6, "heap-MB")
			b.ReportMetric(float64(liveHeap()-heap0)/1e6, "heap-searched-MB")
			b.ReportMetric(float64(len(ix.dict.list())), "tokens")
		})
	}
}

// vocabularyCommon are the common words of writeVocabularyStore's text.
var vocabularyCommon = strings.Fields(`the a to of and in that is for it on with as this was be by are not
or at function error test build config parser server client request response cache index query session
title file path module package import return value type struct interface method field slice map channel
goroutine context deadline timeout retry backoff token budget limit offset frame line byte string refactor
rename extract inline migrate deploy rollback release version branch merge commit review flaky slow fast
memory leak race lock mutex atomic pointer snapshot watcher event debounce poll`)

// vocabularyRare is identifier i of a pool: a name with a number, a hash,
// a handle or a path, in turn.
func vocabularyRare(i int) string {
	switch i % 4 {
	case 0:
		return "cfg" + strconv.Itoa(i)
	case 1:
		return fmt.Sprintf("0x%08x", uint32(i*2654435761))
	case 2:
		return fmt.Sprintf("handle_%d_v2", i)
	default:
		return fmt.Sprintf("src/pkg%d/x.go", i)
	}
}

// writeVocabularyStore writes BenchmarkSearchVocabulary's store under
// root: 1,000 sessions of 15 turns of 4 KB of text.
func writeVocabularyStore(root string, pool int) error {
	r := rand.New(rand.NewPCG(uint64(pool), 7))
	for i := range 1000 {
		s := dshgen.NewSession(fmt.Sprintf("00000000-0000-4000-8000-%012d", i)).
			CreatedAt(1_700_000_000_000 + int64(i)*60_000).Cwd("/home/dev/src/app")
		for turn := range 15 {
			var text strings.Builder
			for text.Len() < 4096 {
				if r.IntN(10) < 3 {
					text.WriteString(vocabularyRare(r.IntN(pool)))
				} else {
					text.WriteString(vocabularyCommon[r.IntN(len(vocabularyCommon))])
				}
				text.WriteByte(' ')
			}
			t := text.String()
			s.Turn(func(tr *dshgen.Turn) {
				tr.UserText(t[:512])
				if turn == 0 {
					tr.Title(fmt.Sprintf("Session %d", i), "fallback")
				}
				tr.AssistantText(t[512:])
			})
		}
		if _, err := s.Save(root, dshgen.Raw); err != nil {
			return err
		}
	}
	return nil
}
