package recall

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/dsh-refls/dsh-refls/internal/cputime"
	"github.com/dsh-refls/dsh-refls/sessionref/dshlog"
	"github.com/dsh-refls/dsh-refls/sessionref/titles"

	"github.com/dsh-refls/dsh-refls/internal/dshgen"
)

// The stages of a first build, each over the same projected text of a
// generated store, so that their CPU per GB compares in one run (one
// core: go test -run '^$' -bench BuildStage -cpu 1 ./sessionref/recall/).
// MB/s is of projected text. RECALL_STAGE_MB sets the size of the store's
// logs (default 24, 60 sessions), smaller for valgrind --tool=callgrind
// --toggle-collect='*BenchmarkBuildStageTokens*', whose instruction counts
// do not depend on the load.

// reportCPU reports the process CPU since cpu0 per GB of the n bytes each
// of b.N iterations went over: load-independent, where MB/s is not.
func reportCPU(b *testing.B, cpu0 time.Duration, n int64) {
	b.ReportMetric((cputime.Process()-cpu0).Seconds()/(float64(b.N)*float64(n)/(1<<30)), "CPU-s/GB")
}

// stageSessions is the projected text of a generated store, one slice of
// messages per session, made once per test binary.
var stageSessions = sync.OnceValues(func() ([][]dshlog.ProjectedMessage, error) {
	root, err := os.MkdirTemp("", "recall-stages-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(root)
	ctx := context.Background()
	mb := envInt("RECALL_STAGE_MB", 24)
	if _, err := dshgen.BenchStoreWith(ctx, root, dshgen.BenchConfig{Sessions: max(4, 5*mb/2), TargetBytes: int64(mb) << 20, Seed: 3}); err != nil {
		return nil, err
	}
	title := titles.NewIndex(root, titles.IndexOptions{})
	if err := title.Build(ctx, nil); err != nil {
		return nil, err
	}
	var out [][]dshlog.ProjectedMessage
	for _, e := range title.Snapshot().Sessions {
		p, err := dshlog.ReadProjection(ctx, e)
		if err != nil {
			return nil, err
		}
		out = append(out, p.Messages)
	}
	return out, nil
})

func stageText(b *testing.B) ([][]dshlog.ProjectedMessage, int64) {
	b.Helper()
	s, err := stageSessions()
	if err != nil {
		b.Fatal(err)
	}
	var n int64
	for _, msgs := range s {
		for _, m := range msgs {
			n += int64(len(m.Text))
		}
	}
	if n == 0 {
		b.Fatal("the generated store projects no text")
	}
	return s, n
}

func BenchmarkBuildStageFold(b *testing.B) {
	sessions, n := stageText(b)
	f := newFolder()
	var buf []byte
	b.SetBytes(n)
	defer reportCPU(b, cputime.Process(), n)
	for b.Loop() {
		for _, msgs := range sessions {
			for _, m := range msgs {
				buf = f.appendFold(buf[:0], m.Text)
			}
		}
	}
}

func BenchmarkBuildStageTokens(b *testing.B) {
	sessions, n := stageText(b)
	f := newFolder()
	var folded [][][]byte
	for _, msgs := range sessions {
		var fs [][]byte
		for _, m := range msgs {
			fs = append(fs, f.appendFold(nil, m.Text))
		}
		folded = append(folded, fs)
	}
	ts, gs := newTokenSet(), newGramSet()
	var filter []byte
	b.SetBytes(n)
	defer reportCPU(b, cputime.Process(), n)
	for b.Loop() {
		for _, fs := range folded {
			ts.reset()
			gs.reset()
			// Blocks of blockTarget bytes, each with its pair filter, as
			// a build cuts them.
			size := 0
			for k, m := range fs {
				if size == 0 {
					ts.startBlock(foldedBlock(fs[k:]))
				}
				ts.startMessage()
				ts.add(m, gs)
				if size += len(m); size >= blockTarget {
					filter = ts.appendFilter(filter[:0])
					size = 0
				}
			}
		}
	}
}

// foldedBlock is blockText of folded messages.
func foldedBlock(fs [][]byte) int {
	n := 0
	for _, m := range fs {
		if n += len(m); n >= blockTarget {
			break
		}
	}
	return n
}

func BenchmarkBuildStageIDs(b *testing.B) {
	sessions, n := stageText(b)
	f := newFolder()
	d := newDictionary()
	var sets []*tokenSet
	for _, msgs := range sessions {
		ts, gs := newTokenSet(), newGramSet()
		for _, m := range msgs {
			ts.add(f.appendFold(nil, m.Text), gs)
		}
		sets = append(sets, ts)
	}
	b.SetBytes(n)
	defer reportCPU(b, cputime.Process(), n)
	for b.Loop() {
		for _, ts := range sets {
			d.idsOfSet(ts)
		}
	}
}

func BenchmarkBuildStageBlocks(b *testing.B) {
	sessions, n := stageText(b)
	var pending []rawMessage
	var raw, recs []byte
	b.SetBytes(n)
	defer reportCPU(b, cputime.Process(), n)
	for b.Loop() {
		for _, msgs := range sessions {
			recs = recs[:0]
			size := 0
			for k, m := range msgs {
				pending = append(pending, rawMessage{role: m.Role, seq: m.Seq, text: m.Text})
				if size += len(m.Text); size >= blockTarget || k == len(msgs)-1 {
					raw = encodeBlock(raw[:0], pending)
					recs, _ = appendRecord(recs, raw, nil)
					pending, size = pending[:0], 0
				}
			}
		}
	}
}

// BenchmarkBlockReadBack decodes the records of the blocks of the same
// text as a search reads them back (decodeChunks, decodeBlock): the cost
// of a cold block, per GB of projected text, with its allocations.
func BenchmarkBlockReadBack(b *testing.B) {
	sessions, n := stageText(b)
	var recs [][]byte
	var pending []rawMessage
	for _, msgs := range sessions {
		size := 0
		for k, m := range msgs {
			pending = append(pending, rawMessage{role: m.Role, seq: m.Seq, text: m.Text})
			if size += len(m.Text); size >= blockTarget || k == len(msgs)-1 {
				rec, _ := appendRecord(nil, encodeBlock(nil, pending), nil)
				_, chunks, _ := splitRecord(rec[recordHeaderLen:])
				recs = append(recs, chunks)
				pending, size = pending[:0], 0
			}
		}
	}
	f := newFolder()
	b.SetBytes(n)
	b.ReportAllocs()
	defer reportCPU(b, cputime.Process(), n)
	for b.Loop() {
		for _, rec := range recs {
			raw, err := decodeChunks(rec)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := decodeBlock(raw, f); err != nil {
				b.Fatal(err)
			}
		}
	}
}
