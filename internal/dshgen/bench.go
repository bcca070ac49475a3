package dshgen

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/google/uuid"
	"github.com/klauspost/compress/zstd"
)

// Bench preset tuning.
const (
	// benchEpoch is the createdAt of the first bench session.
	benchEpoch int64 = 1767225600000 // 2026-01-01T00:00:00Z
	// benchSpacingMs spaces consecutive bench sessions in time.
	benchSpacingMs = 37_000
	// benchSessionsPerProject sets how many projects a store spreads over.
	benchSessionsPerProject = 40
	// benchSizeSigma is the spread of the log-normal session sizes.
	benchSizeSigma = 1.0
	// benchMinShare and benchMaxShare clamp one session's size relative to
	// the mean, so no session is empty or dominates the store.
	benchMinShare = 0.05
	benchMaxShare = 20.0
	// benchTurnBytes is the rough size of one turn's text; sessions grow turn
	// by turn until they reach their size.
	benchTurnBytes = 24 << 10
	// benchTurnOverhead estimates the bytes of a turn that are not message
	// text, so the last turn lands close to the target.
	benchTurnOverhead = 700
	// benchCorpusBytes is the size of the word buffer message text is cut
	// from: large enough not to repeat visibly, small enough to build fast.
	benchCorpusBytes = 1 << 20
	// benchWorkersPerCPU is the default number of writers per CPU: creating
	// thousands of small files is bound by file system latency, which
	// more writers than CPUs overlap.
	benchWorkersPerCPU = 4
	// benchMinSessionBytes is the least a session's share can be.
	benchMinSessionBytes = 2048
)

// BenchConfig describes a bench store.
type BenchConfig struct {
	// Sessions is the number of sessions.
	Sessions int
	// TargetBytes is the total size of the logs on disk.
	TargetBytes int64
	// Seed makes the store reproducible: the same config writes the same bytes.
	Seed int64
	// ZstdEvery, when > 0, writes every ZstdEvery-th session as zstd; its
	// share of TargetBytes is then counted uncompressed, so the store is
	// smaller on disk.
	ZstdEvery int
	// Workers is the number of writers; 0 means 4 per CPU.
	Workers int
	// V4 writes format-v4 sessions (session.v4.jsonl) as dsh 0.2 does,
	// a quarter of them as migrated pairs: a short v0 original beside the
	// v4 generation, which alone is read.
	V4 bool
}

// BenchReport summarises a written bench store.
type BenchReport struct {
	Sessions int
	Projects int
	// RawBytes is the total uncompressed size of all logs.
	RawBytes int64
	// DiskBytes is the total size of the files written.
	DiskBytes int64
	// Titles maps a few session ids to their titles, for spot checks.
	Titles map[string]string
}

// BenchStore writes sessions raw logs under root totalling about
// targetBytes, deterministic for seed, with several writers per CPU.
func BenchStore(root string, sessions int, targetBytes int64, seed int64) error {
	_, err := BenchStoreWith(context.Background(), root, BenchConfig{Sessions: sessions, TargetBytes: targetBytes, Seed: seed})
	return err
}

// benchSpotChecks is how many titles BenchReport keeps.
const benchSpotChecks = 16

// BenchStoreWith writes a bench store described by cfg.
func BenchStoreWith(ctx context.Context, root string, cfg BenchConfig) (BenchReport, error) {
	if cfg.Sessions <= 0 || cfg.TargetBytes <= 0 {
		return BenchReport{}, fmt.Errorf("bench store needs sessions > 0 and bytes > 0, got %d and %d", cfg.Sessions, cfg.TargetBytes)
	}
	workers := cfg.Workers
	if workers <= 0 {
		workers = benchWorkersPerCPU * runtime.GOMAXPROCS(0)
	}
	projects := benchProjects(cfg)
	sizes := benchSizes(cfg)
	rep := BenchReport{Sessions: cfg.Sessions, Projects: len(projects), Titles: map[string]string{}}
	var rawBytes, diskBytes atomic.Int64
	var mu sync.Mutex // guards rep.Titles
	next := atomic.Int64{}
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			zenc, err := newEncoder()
			if err != nil {
				errs <- err
				return
			}
			defer zenc.Close()
			corpus := newCorpus(cfg.Seed)
			for {
				i := int(next.Add(1) - 1)
				if i >= cfg.Sessions || ctx.Err() != nil {
					return
				}
				s := benchSession(cfg, i, sizes[i], projects, corpus)
				enc := Raw
				if cfg.ZstdEvery > 0 && i%cfg.ZstdEvery == cfg.ZstdEvery-1 {
					enc = Zstd
				}
				disk, err := s.saveBench(root, enc, zenc)
				if err == nil && cfg.V4 && i%4 == 3 {
					var orig int64
					orig, err = benchOriginal(s).saveBench(root, enc, zenc)
					disk += orig
				}
				if err != nil {
					errs <- fmt.Errorf("bench session %d: %w", i, err)
					next.Store(int64(cfg.Sessions))
					return
				}
				rawBytes.Add(s.RawSize())
				diskBytes.Add(disk)
				if i%max(1, cfg.Sessions/benchSpotChecks) == 0 {
					mu.Lock()
					rep.Titles[s.id] = s.proj.title
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	var all []error
	for err := range errs {
		all = append(all, err)
	}
	if err := ctx.Err(); err != nil {
		all = append(all, err)
	}
	rep.RawBytes, rep.DiskBytes = rawBytes.Load(), diskBytes.Load()
	return rep, errors.Join(all...)
}

// saveBench saves with a shared encoder and returns the file size.
func (s *Session) saveBench(root string, enc Encoding, zenc *zstd.Encoder) (int64, error) {
	path := s.Path(root, enc)
	if err := s.saveAs(path, enc, zenc); err != nil {
		return 0, err
	}
	fi, err := os.Stat(path)
	if err != nil {
		return 0, fmt.Errorf("measuring %s: %w", path, err)
	}
	return fi.Size(), nil
}

// benchRand is the random stream for one purpose of one bench store.
func benchRand(seed int64, stream uint64) *rand.Rand {
	return rand.New(rand.NewPCG(uint64(seed), stream))
}

// Random streams of a bench store.
const (
	streamProjects = iota + 1
	streamSizes
	streamCorpus
	streamSessionBase
)

// benchProjectNames make believable project directories.
var benchProjectNames = []string{"api", "web", "billing", "search", "infra", "mobile", "docs", "auth", "etl", "ml"}

// benchProjects lists the cwds of the store.
func benchProjects(cfg BenchConfig) []string {
	n := max(1, cfg.Sessions/benchSessionsPerProject)
	r := benchRand(cfg.Seed, streamProjects)
	out := make([]string, n)
	for i := range out {
		name := benchProjectNames[r.IntN(len(benchProjectNames))]
		out[i] = fmt.Sprintf("/home/dev%d/src/%s-%d", r.IntN(4), name, i)
	}
	return out
}

// benchSizes draws each session's raw size: log-normal, clamped, scaled to
// sum to TargetBytes.
func benchSizes(cfg BenchConfig) []int64 {
	r := benchRand(cfg.Seed, streamSizes)
	w := make([]float64, cfg.Sessions)
	sum := 0.0
	for i := range w {
		w[i] = math.Min(benchMaxShare, math.Max(benchMinShare, math.Exp(r.NormFloat64()*benchSizeSigma-benchSizeSigma*benchSizeSigma/2)))
		sum += w[i]
	}
	out := make([]int64, cfg.Sessions)
	for i := range w {
		out[i] = max(benchMinSessionBytes, int64(float64(cfg.TargetBytes)*w[i]/sum))
	}
	return out
}

// benchWords make up message text.
var benchWords = strings.Fields(`the a to of and in that is for it on with as this was be by are not or at
function error test build config parser server client request response cache index query session title
file path module package import return value type struct interface method field slice map channel
goroutine context deadline timeout retry backoff token budget limit offset frame line byte string
refactor rename extract inline migrate deploy rollback release version branch merge commit review
flaky slow fast memory leak race lock mutex atomic pointer snapshot watcher event debounce poll`)

// corpus is a buffer of words message text is cut from.
type corpus struct{ text string }

// newCorpus builds the word buffer for a seed.
func newCorpus(seed int64) *corpus {
	r := benchRand(seed, streamCorpus)
	var b strings.Builder
	b.Grow(benchCorpusBytes + 64)
	for b.Len() < benchCorpusBytes {
		b.WriteString(benchWords[r.IntN(len(benchWords))])
		switch r.IntN(24) {
		case 0:
			b.WriteString(".\n")
		case 1:
			b.WriteString(", ")
		default:
			b.WriteByte(' ')
		}
	}
	return &corpus{text: b.String()}
}

// cut returns n bytes of text starting at a random offset.
func (c *corpus) cut(r *rand.Rand, n int) string {
	if n <= 0 {
		return ""
	}
	var b strings.Builder
	b.Grow(n)
	for b.Len() < n {
		off := r.IntN(len(c.text))
		b.WriteString(c.text[off:min(len(c.text), off+n-b.Len())])
	}
	return b.String()
}

// benchTitleVerbs and benchTitleObjects make distinct, searchable titles.
var (
	benchTitleVerbs   = []string{"Fix", "Investigate", "Refactor", "Add", "Remove", "Speed up", "Document", "Test", "Migrate", "Review"}
	benchTitleObjects = []string{"flaky login test", "slow search query", "config loader", "rate limiter", "cache eviction", "billing export", "webhook retries", "session index", "upload handler", "CI pipeline"}
)

// benchSession builds bench session i of about size raw bytes.
func benchSession(cfg BenchConfig, i int, size int64, projects []string, c *corpus) *Session {
	r := benchRand(cfg.Seed, streamSessionBase+uint64(i))
	id := uuid.Must(uuid.NewRandomFromReader(rand.NewChaCha8(benchSeed(cfg.Seed, i)))).String()
	s := NewSession(id)
	if cfg.V4 {
		s = NewV4Session(id)
	}
	s.CreatedAt(benchEpoch + int64(i)*benchSpacingMs + int64(r.IntN(benchSpacingMs/2)))
	if r.IntN(50) != 0 {
		s.Cwd(projects[r.IntN(len(projects))])
	}
	title := fmt.Sprintf("%s %s %d", benchTitleVerbs[r.IntN(len(benchTitleVerbs))], benchTitleObjects[r.IntN(len(benchTitleObjects))], i)
	for turn := 0; s.RawSize() < size; turn++ {
		left := int(size-s.RawSize()) - benchTurnOverhead
		text := min(max(left, 64), benchTurnBytes/2+r.IntN(benchTurnBytes))
		userText := max(16, text/8)
		s.Turn(func(t *Turn) {
			t.UserText(c.cut(r, userText))
			if turn == 0 {
				t.Title(title, "fallback")
			} else if turn == 3 {
				t.Title(title+" (follow-up)", "provider")
			}
			if r.IntN(4) == 0 {
				call := fmt.Sprintf("call_%d_%d", i, turn)
				t.AssistantToolCall(call, "read", `{"file_path":"main.go"}`)
				t.ToolResult(call, c.cut(r, 200), false)
			}
			t.AssistantText(c.cut(r, max(16, text-userText)))
		})
	}
	return s
}

// benchSeed is the ChaCha8 seed of session i's id.
func benchSeed(seed int64, i int) [32]byte {
	var out [32]byte
	for k := range 8 {
		out[k] = byte(uint64(seed) >> (8 * k))
		out[8+k] = byte(uint64(i) >> (8 * k))
	}
	return out
}

// benchOriginal is the short v0 log a migrated v4 bench session leaves
// beside it: its first turn, with an older title.
func benchOriginal(v4 *Session) *Session {
	o := NewSession(v4.id).CreatedAt(v4.createdAt)
	if v4.hasCwd {
		o.Cwd(v4.cwd)
	}
	return o.Turn(func(t *Turn) {
		t.UserText("Pick up where we left off.")
		t.Title(v4.proj.title+" (before the upgrade)", "fallback")
		t.AssistantText("Reading the earlier notes.")
	})
}
