package recall

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/text/cases"

	"github.com/dsh-refls/dsh-refls/internal/dshgen"
	"github.com/dsh-refls/dsh-refls/sessionref/dshlog"
	"github.com/dsh-refls/dsh-refls/sessionref/titles"
)

// BenchmarkRecall measures the recall index once on a generated store
// (RECALL_BENCH_SESSIONS sessions, RECALL_BENCH_MB megabytes of logs;
// default 3000 and 150) against a brute-force scan in the same run:
//
//	go test -run '^$' -bench Recall -benchtime 1x ./sessionref/recall/
//
// It prints build cost and memory, search latency p50/p99 of 3–20
// character queries typed one character at a time, the same for a scan of
// every session's folded text, and checks every answer against a
// brute-force projection folded independently (whole strings through
// cases.Fold): recall and precision must be 100%.
func BenchmarkRecall(b *testing.B) {
	sessions, mb := envInt("RECALL_BENCH_SESSIONS", 3000), envInt("RECALL_BENCH_MB", 150)
	root := b.TempDir()
	ctx := context.Background()
	if _, err := dshgen.BenchStoreWith(ctx, root, dshgen.BenchConfig{Sessions: sessions, TargetBytes: int64(mb) << 20, Seed: 7}); err != nil {
		b.Fatal(err)
	}
	title := titles.NewIndex(root, titles.IndexOptions{})
	t0 := time.Now()
	if err := title.Build(ctx, nil); err != nil {
		b.Fatal(err)
	}
	titleBuild := time.Since(t0)
	snap := title.Snapshot()

	heap0 := liveHeap()
	rc := New(Options{})
	t0 = time.Now()
	if err := rc.Sync(ctx, snap); err != nil {
		b.Fatal(err)
	}
	build := time.Since(t0)
	heap1 := liveHeap()
	st := rc.Stats()

	// Brute force: every projection read again, folded as whole strings.
	t0 = time.Now()
	type bruteDoc struct {
		id   string
		text []string
	}
	var brute []bruteDoc
	fold := cases.Fold()
	for _, e := range snap.Sessions {
		p, err := dshlog.ReadProjection(ctx, e)
		if err != nil {
			continue
		}
		d := bruteDoc{id: e.ID}
		for _, m := range p.Messages {
			d.text = append(d.text, fold.String(m.Text))
		}
		brute = append(brute, d)
	}
	bruteBuild := time.Since(t0)

	// Queries: 20-character cuts of random messages, typed one character
	// at a time from the third, plus cuts that match nothing.
	r := rand.New(rand.NewPCG(7, 7))
	var queries []string
	for len(queries) < 18*40 {
		d := brute[r.IntN(len(brute))]
		if len(d.text) == 0 {
			continue
		}
		m := []rune(d.text[r.IntN(len(d.text))])
		if len(m) < 40 {
			continue
		}
		at := r.IntN(len(m) - 20)
		cut := m[at : at+20]
		if r.IntN(8) == 0 {
			cut[len(cut)-1] = 'Q' // folded to q; mostly a miss
		}
		for n := 3; n <= 20; n++ {
			q := strings.TrimSpace(string(cut[:n]))
			if q == "" || strings.ContainsAny(q, `"`) {
				continue
			}
			queries = append(queries, `"`+q+`"`)
		}
	}
	var fast, scan []time.Duration
	checked, wrong := 0, 0
	for _, q := range queries {
		t := time.Now()
		res, err := rc.Search(ctx, Query{Text: q, Limit: DefaultLimit})
		fast = append(fast, time.Since(t))
		if err != nil {
			b.Fatalf("search %q: %v", q, err)
		}
		t = time.Now()
		scanned := scanSearch(rc, q, DefaultLimit)
		scan = append(scan, time.Since(t))
		if len(res) != scanned {
			wrong++ // the postings lost a session the scan finds
		}
		// Recall and precision against the brute-force projection, over
		// every session (limit MaxLimit covers the store or is checked as
		// a prefix of the newest-first order).
		all, err := rc.Search(ctx, Query{Text: q, Limit: MaxLimit})
		if err != nil {
			b.Fatal(err)
		}
		term := fold.String(q[1 : len(q)-1])
		want := map[string]bool{}
		for _, d := range brute {
			for _, m := range d.text {
				if strings.Contains(m, term) {
					want[d.id] = true
					break
				}
			}
		}
		got := map[string]bool{}
		for _, x := range all {
			got[x.SessionID] = true
			if !want[x.SessionID] {
				wrong++ // precision
			}
		}
		if len(want) <= MaxLimit {
			for id := range want {
				if !got[id] {
					wrong++ // recall
				}
			}
		} else if len(all) != MaxLimit {
			wrong++
		}
		checked++
	}
	p := func(ds []time.Duration, q float64) time.Duration {
		s := append([]time.Duration(nil), ds...)
		sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
		return s[int(float64(len(s)-1)*q)]
	}
	fmt.Printf("store: %d sessions, %d MB of logs; projected text %d MB (folded %d MB)\n", len(snap.Sessions), mb, st.TextBytes>>20, st.FoldedBytes>>20)
	fmt.Printf("build: title index %v; recall index %v (%.2f× the title build); brute-force projection %v\n",
		titleBuild.Round(time.Millisecond), build.Round(time.Millisecond), float64(build)/float64(titleBuild), bruteBuild.Round(time.Millisecond))
	fmt.Printf("memory: recall live heap +%d MB (postings %d MB, %d grams; text+folded %d MB)\n",
		(heap1-heap0)>>20, st.PostingBytes>>20, st.Grams, (st.TextBytes+st.FoldedBytes)>>20)
	fmt.Printf("search (%d queries, 3–20 chars, limit %d): p50 %v p99 %v | scan of every folded text: p50 %v p99 %v | p50 ratio %.1f×\n",
		len(queries), DefaultLimit, p(fast, .5), p(fast, .99), p(scan, .5), p(scan, .99), float64(p(scan, .5))/float64(max(1, p(fast, .5))))
	fmt.Printf("correctness: %d queries checked against the brute-force projection, %d wrong (recall and precision 100%% when 0)\n", checked, wrong)
	if wrong != 0 {
		b.Errorf("%d answers differ from the brute-force projection", wrong)
	}
}

// scanSearch is the baseline: the same newest-first walk without
// postings, every term looked for in the text.
func scanSearch(ix *Index, q string, limit int) int {
	terms, err := parseQuery(newFolder(), q)
	if err != nil {
		return 0
	}
	n := 0
	f, pending := newFolder(), make([]bool, len(terms))
	var sc blockScratch
	sp := &searchPlan{plans: make([]termPlan, len(terms)), terms: terms, matches: MaxMatches}
	for i, t := range terms {
		sp.plans[i] = termPlan{term: t, find: newFinder(t)}
	}
	for _, d := range ix.cur.Load().order {
		for i := range pending {
			pending[i] = true
		}
		if _, ok, _ := ix.result(f, &sc, d, sp, pending); ok {
			if n++; n == limit {
				break
			}
		}
	}
	return n
}

func liveHeap() int64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}
