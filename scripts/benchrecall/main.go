// Command benchrecall measures the recall index of issue 13 against its
// baselines, in one run on one store, through the real server binary over
// pipes: first build as a ratio to `rg -c '"session/title"'` over the root,
// warm restart, appended text searchable, dsh/search and completion latency
// while queries are typed one character at a time (and as a ratio to
// `rg -i -c -F QUERY` over the root), recall and precision against a
// brute-force projection of every log (dshlog.ReadProjection), the
// on-disk index as a share of the projected text, and the server's RSS.
//
//	go run ./scripts/benchrecall --root /tmp/dsh-refls-bench/sessions-10000-3G
//	go run ./scripts/benchrecall --small       # 300 sessions, seconds; what CI runs
//	go run ./scripts/benchrecall --heap --root R  # in process: the first build's heap and CPU
//	go run ./scripts/benchrecall --fts5 --sessions 1000 --bytes 300M  # against SQLite FTS5, in process (fts5.go)
//	go run ./scripts/benchrecall --fts5 --small   # the same on the 300-session store, seconds; what CI runs
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/dsh-refls/dsh-refls/internal/dshgen"
	"github.com/dsh-refls/dsh-refls/sessionref/titles"
)

type config struct {
	root     string
	sessions int
	bytes    int64
	v4       bool
	queries  int
	limit    int
	appends  int
	rgRuns   int
	small    bool
	check    bool
	// serverGodebug is the GODEBUG the servers run with.
	serverGodebug string
}

func main() {
	var c config
	var size string
	flag.StringVar(&c.root, "root", "", "store to use (generated when missing)")
	flag.IntVar(&c.sessions, "sessions", 10000, "sessions to generate when the store is missing")
	flag.StringVar(&size, "bytes", "3G", "log bytes to generate when the store is missing (K, M, G)")
	flag.BoolVar(&c.v4, "v4", false, "generate format v4 sessions (dsh 0.2) when the store is missing")
	flag.IntVar(&c.queries, "queries", 8, "queries typed one character at a time (plus two misses)")
	flag.IntVar(&c.limit, "limit", 20, "dsh/search limit")
	flag.IntVar(&c.appends, "appends", 5, "appends timed until searchable")
	flag.IntVar(&c.rgRuns, "rg-runs", 3, "runs of the rg title baseline")
	flag.BoolVar(&c.small, "small", false, "a 300-session store under the temp dir, for CI: fails when recall or precision is below 100%")
	heap := flag.Bool("heap", false, "instead: the first build in process over --root (an existing store): live heap kept, peak heap, allocations and CPU, independent of the load")
	workers := flag.Int("workers", 2, "with --heap: projecting workers")
	heapProfile := flag.String("heap-profile", "", "with --heap: write a heap profile of the built index here")
	cpuProfile := flag.String("cpu-profile", "", "with --heap: write a CPU profile of the first build here")
	flag.StringVar(&c.serverGodebug, "server-godebug", "", "GODEBUG for the server processes (e.g. gctrace=1: its collections on stderr)")
	fts5 := flag.Bool("fts5", false, "instead: the recall index in process against SQLite FTS5 unicode61 and trigram tables of the same projected text (python3's sqlite3): build CPU, size, query latency and CPU")
	fts5Rounds := flag.Int("fts5-rounds", 5, "with --fts5: timed rounds of every query on each side (after one untimed round)")
	flag.Parse()
	if *heap {
		if err := runHeap(context.Background(), c.root, *workers, *heapProfile, *cpuProfile); err != nil {
			fmt.Fprintln(os.Stderr, "benchrecall:", err)
			os.Exit(1)
		}
		return
	}
	if c.small {
		c.sessions, size, c.queries, c.appends = 300, "30M", 4, 3
		if c.root == "" {
			c.root = filepath.Join(os.TempDir(), "dsh-refls-bench", "recall-small-300")
		}
		c.check = true
	}
	if c.root == "" {
		c.root = filepath.Join(os.TempDir(), "dsh-refls-bench", fmt.Sprintf("sessions-%d-%s", c.sessions, size))
	}
	var err error
	if c.bytes, err = parseSize(size); err == nil {
		if *fts5 {
			err = runFTS5(context.Background(), c, *workers, *fts5Rounds)
		} else {
			err = run(context.Background(), c)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchrecall:", err)
		os.Exit(1)
	}
}

func parseSize(s string) (int64, error) {
	mult := int64(1)
	for suf, m := range map[string]int64{"G": 1 << 30, "M": 1 << 20, "K": 1 << 10} {
		if strings.HasSuffix(s, suf) {
			mult, s = m, strings.TrimSuffix(s, suf)
		}
	}
	var n int64
	if _, err := fmt.Sscan(s, &n); err != nil {
		return 0, fmt.Errorf("size %q: %w", s, err)
	}
	return n * mult, nil
}

func median(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

func pct(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[min(len(s)-1, int(float64(len(s))*p/100))]
}

func ratio(a, b time.Duration) float64 { return float64(a) / float64(max(b, 1)) }

func runRG(args ...string) (time.Duration, error) {
	cmd := exec.Command("rg", args...)
	t0 := time.Now()
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !(errors.As(err, &exit) && exit.ExitCode() == 1) {
		return 0, fmt.Errorf("rg %v: %w", args, err)
	}
	return time.Since(t0), nil
}

func run(ctx context.Context, c config) error {
	if _, err := exec.LookPath("rg"); err != nil {
		return errors.New("ripgrep (rg) is not installed; scripts/bench-recall.sh installs it")
	}
	if err := ensureStore(ctx, c); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "benchrecall-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	bin := filepath.Join(tmp, "dsh-refls")
	if out, err := exec.Command("go", "build", "-o", bin, "./cmd/dsh-refls").CombinedOutput(); err != nil {
		return fmt.Errorf("building the server: %v\n%s", err, out)
	}

	// Baseline: the rg title count, page cache warm.
	if _, err := runRG("-c", `"session/title"`, c.root); err != nil {
		return err
	}
	var rgTimes []time.Duration
	for i := 0; i < c.rgRuns; i++ {
		d, err := runRG("-c", `"session/title"`, c.root)
		if err != nil {
			return err
		}
		rgTimes = append(rgTimes, d)
	}
	rgTitle := median(rgTimes)
	fmt.Printf("store %s\nrg -c '\"session/title\"' over the root: median %v of %d runs (the baseline)\n", c.root, rgTitle.Round(time.Millisecond), c.rgRuns)

	ix := titles.NewIndex(c.root, titles.IndexOptions{})
	if err := ix.Build(ctx, nil); err != nil {
		return fmt.Errorf("title index: %w", err)
	}
	snap := ix.Snapshot()
	queries := pickQueries(ctx, snap, c.queries, 7)
	var checks []string
	for _, q := range queries {
		checks = append(checks, checked(q)...)
	}
	b := project(ctx, snap, checks)
	fmt.Printf("brute-force projection (ReadProjection of every log, 2 workers): %d sessions (%d unreadable), %.1f MB projected text, %v = %.2f× rg\n",
		b.sessions, b.failed, float64(b.textBytes)/1e6, b.took.Round(time.Millisecond), ratio(b.took, rgTitle))

	// First build, through the server, with an empty cache.
	cache := filepath.Join(tmp, "cache")
	ws := filepath.Join(tmp, "ws")
	if err := os.MkdirAll(ws, 0o700); err != nil {
		return err
	}
	t0 := time.Now()
	srv, err := startServer(bin, c.root, cache, filepath.Join(tmp, "server.log"), c.serverGodebug)
	if err != nil {
		return err
	}
	defer srv.stop()
	if err := srv.initialize(ws); err != nil {
		return err
	}
	titleReady, firstCompletion, err := srv.firstCompletion(ws, t0)
	if err != nil {
		return err
	}
	step, err := srv.waitSearchable(30 * time.Minute)
	if err != nil {
		return err
	}
	searchable := time.Since(t0)
	st, err := srv.waitRecall(30 * time.Minute)
	if err != nil {
		return err
	}
	first := time.Since(t0)
	buildCPU := srv.cpu()
	fmt.Printf("first build (server start → recall synced): %v = %.2f× rg  (issue: ≤ 3×); %d sessions indexed, %d left out by the text budget, %.1f MB text\n",
		first.Round(time.Millisecond), ratio(first, rgTitle), st.Recall.Sessions, st.Recall.Unindexed, float64(st.Recall.TextBytes)/1e6)
	fmt.Printf("  newest %d sessions searchable after %v = %.2f× rg (%d still to read); server process CPU from start to all synced %.1f s\n",
		step.Recall.Sessions, searchable.Round(time.Millisecond), ratio(searchable, rgTitle), step.Recall.Pending, buildCPU.Seconds())
	fmt.Printf("  title index ready after %v; first completion with sessions answered after %v (recall build does not delay it when < first build)\n",
		titleReady.Round(time.Millisecond), firstCompletion.Round(time.Millisecond))

	// Typing, right after the first build (while the server saves the
	// index and collects the build's garbage), then again with other
	// queries once the stored index is written (steady state).
	answers := map[string][]string{}
	want := map[string]bool{}
	for _, q := range checks {
		want[q] = true
	}
	ver := 1
	// searchDecode: the client's decoding of each dsh/search answer, after
	// the round trip's clock stopped (lsptest.Conn.Decoded).
	var searchDecode []time.Duration
	typing := func(qs []string) (searchLat, complLat []time.Duration, slow []string, err error) {
		type timed struct {
			q  string
			d  time.Duration
			at time.Duration // since the server's start
		}
		var all []timed
		for _, q := range qs {
			for _, p := range prefixes(q) {
				ver++
				if err := srv.Notify("textDocument/didChange", map[string]any{"textDocument": map[string]any{"uri": "file://" + ws + "/msg.md", "version": ver},
					"contentChanges": []any{map[string]any{"text": "@" + p}}}); err != nil {
					return nil, nil, nil, err
				}
				_, err := srv.Call("textDocument/completion", map[string]any{"textDocument": map[string]any{"uri": "file://" + ws + "/msg.md"},
					"position": map[string]any{"line": 0, "character": len(utf16Of(p)) + 1}})
				if err != nil {
					return nil, nil, nil, err
				}
				complLat = append(complLat, srv.RoundTrip())
				sent := time.Since(t0)
				raw, err := srv.Call("dsh/search", map[string]any{"query": p, "limit": c.limit})
				if err != nil {
					return nil, nil, nil, err
				}
				d := srv.RoundTrip()
				searchLat = append(searchLat, d)
				searchDecode = append(searchDecode, srv.Decoded())
				all = append(all, timed{fmt.Sprintf("#%d %q", len(searchLat), p), d, sent})
				if want[p] {
					var hits []struct {
						SessionID string `json:"sessionId"`
					}
					if err := json.Unmarshal(raw, &hits); err != nil {
						return nil, nil, nil, fmt.Errorf("dsh/search answer: %w", err)
					}
					ids := []string{}
					for _, h := range hits {
						ids = append(ids, h.SessionID)
					}
					answers[p] = ids
				}
			}
		}
		sort.Slice(all, func(i, j int) bool { return all[i].d > all[j].d })
		for _, t := range all[:min(3, len(all))] {
			slow = append(slow, fmt.Sprintf("%s %v (at %v)", t.q, t.d.Round(10*time.Microsecond), t.at.Round(time.Millisecond)))
		}
		return searchLat, complLat, slow, nil
	}
	typedFrom := time.Since(t0)
	searchLat, complLat, slow, err := typing(queries)
	if err != nil {
		return err
	}
	typedTo := time.Since(t0)
	savedAfter := time.Duration(-1)
	for t1 := time.Now(); time.Since(t1) < 2*time.Minute; time.Sleep(100 * time.Millisecond) {
		if storedIndex(cache) && !tempFiles(cache) {
			savedAfter = time.Since(t0)
			break
		}
	}
	steadyS, steadyC, steadySlow, err := typing(pickQueries(ctx, snap, c.queries, 8))
	if err != nil {
		return err
	}
	rssCur, rssPeak := srv.rss()

	// Recall and precision with a limit: the answer must be exactly the
	// newest `limit` sessions holding every term.
	var expected, returned, correct, missing, wrong int
	for _, q := range checks {
		all := b.hits[q]
		exp := all[:min(len(all), c.limit)]
		holds := map[string]bool{}
		for _, id := range all {
			holds[id] = true
		}
		got := map[string]bool{}
		for _, id := range answers[q] {
			got[id] = true
			returned++
			if holds[id] {
				correct++
			} else {
				wrong++
			}
		}
		expected += len(exp)
		for _, id := range exp {
			if !got[id] {
				missing++
			}
		}
	}
	recallPct := 100 * float64(expected-missing) / float64(max(expected, 1))
	precisionPct := 100 * float64(correct) / float64(max(returned, 1))
	fmt.Printf("recall %.2f%% (%d of the %d expected newest-%d sessions missing), precision %.2f%% (%d of %d returned hold no match) over %d checked queries\n",
		recallPct, missing, expected, c.limit, precisionPct, wrong, returned, len(checks))

	var rgQ []time.Duration
	for _, q := range queries {
		d, err := runRG("-i", "-c", "-F", q, c.root)
		if err != nil {
			return err
		}
		rgQ = append(rgQ, d)
	}
	sp50, sp99 := pct(searchLat, 50), pct(searchLat, 99)
	cp50, cp99 := pct(complLat, 50), pct(complLat, 99)
	fmt.Println("round trip: first request byte written → last answer byte read; the client's decode of the answer is after the clock")
	fmt.Printf("dsh/search while typing: %d queries, p50 %v, p99 %v  (issue: ≤ 1 ms, ≤ 5 ms); client decode p50 %v\n", len(searchLat), sp50, sp99, pct(searchDecode, 50))
	fmt.Printf("completion while typing: %d queries, p50 %v, p99 %v\n", len(complLat), cp50, cp99)
	fmt.Printf("  typed from %v to %v after the server's start\n", typedFrom.Round(time.Millisecond), typedTo.Round(time.Millisecond))
	fmt.Printf("  slowest searches: %s\n", strings.Join(slow, "; "))
	fmt.Printf("steady state (stored index written %v after start; %d other queries typed): dsh/search p50 %v, p99 %v; completion p50 %v, p99 %v\n",
		savedAfter.Round(time.Millisecond), len(steadyS), pct(steadyS, 50), pct(steadyS, 99), pct(steadyC, 50), pct(steadyC, 99))
	fmt.Printf("  slowest searches: %s\n", strings.Join(steadySlow, "; "))
	fmt.Printf("rg -i -c -F QUERY over the root: median %v of %d → search p50 is %.0f× faster  (issue: ≥ 1000×)\n",
		median(rgQ).Round(time.Millisecond), len(rgQ), ratio(median(rgQ), sp50))

	fmt.Printf("server RSS (title, file and recall indexes): %.1f MB now, %.1f MB peak  (issue: ≤ 150 MB)\n", float64(rssCur)/1e6, float64(rssPeak)/1e6)
	held := snap.Sessions[:min(len(snap.Sessions), st.Recall.Sessions)]
	fresh, missed, err := srv.appendLatencies(held, c.appends)
	if err != nil {
		return err
	}
	if c.appends > 0 && len(fresh)+missed == 0 {
		return fmt.Errorf("no raw .jsonl log among the %d sessions the index holds to time an append with", len(held))
	}
	fmt.Printf("appended text searchable (sessions the index holds): %d appends, p50 %v, max %v, %d not found within 5 s  (issue: ≤ 250 ms)\n",
		len(fresh), pct(fresh, 50).Round(time.Millisecond), pct(fresh, 100).Round(time.Millisecond), missed)
	if len(held) < len(snap.Sessions) {
		got, missedOld, err := srv.appendLatencies(snap.Sessions[len(held):], 2)
		if err != nil {
			return err
		}
		fmt.Printf("  appended to sessions beyond the text budget: %d found, %d not found within 5 s\n", len(got), missedOld)
	}
	srv.stop()
	printLog(filepath.Join(tmp, "server.log"), "recall index saved")

	disk := recallDiskBytes(cache)
	if disk < 0 {
		fmt.Printf("on-disk recall index: none (the index is held in memory only)  (issue: ≤ 50%% of %.1f MB projected)\n", float64(b.textBytes)/1e6)
	} else {
		fmt.Printf("on-disk recall index: %.1f MB = %.1f%% of the projected text  (issue: ≤ 50%%)\n", float64(disk)/1e6, 100*float64(disk)/float64(max(b.textBytes, 1)))
	}

	t0 = time.Now()
	warm, err := startServer(bin, c.root, cache, filepath.Join(tmp, "server2.log"), c.serverGodebug)
	if err != nil {
		return err
	}
	defer warm.stop()
	if err := warm.initialize(ws); err != nil {
		return err
	}
	if _, err := warm.waitRecall(2 * time.Minute); err != nil {
		return err
	}
	warmT := time.Since(t0)
	synced, err := warm.waitRevalidated(2 * time.Minute)
	if err != nil {
		return err
	}
	warmSync := time.Since(t0)
	fmt.Printf("warm restart (server start → stored recall index searchable): %v = %.2f× rg  (issue: ≤ 150 ms); first sync after it %v, %d sessions read again from their logs\n",
		warmT.Round(time.Millisecond), ratio(warmT, rgTitle), warmSync.Round(time.Millisecond), synced.Recall.Projected)
	warm.stop()
	printLog(filepath.Join(tmp, "server2.log"), "recall index loaded")

	if c.check && (missing > 0 || wrong > 0) {
		return fmt.Errorf("recall %.2f%%, precision %.2f%%: both must be 100%%", recallPct, precisionPct)
	}
	return nil
}

// ensureStore generates the store at c.root when it is missing.
func ensureStore(ctx context.Context, c config) error {
	if _, err := os.Stat(c.root); errors.Is(err, os.ErrNotExist) {
		fmt.Printf("generating %d sessions, %d MB of logs under %s ...\n", c.sessions, c.bytes>>20, c.root)
		if _, err := dshgen.BenchStoreWith(ctx, c.root, dshgen.BenchConfig{Sessions: c.sessions, TargetBytes: c.bytes, Seed: 1, V4: c.v4}); err != nil {
			return fmt.Errorf("generating the store: %w", err)
		}
	}
	return nil
}

// printLog prints the lines of the server's log that hold what.
func printLog(path, what string) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if strings.Contains(line, what) {
			fmt.Printf("  server log: %s\n", line)
		}
	}
}

// recallDiskBytes is the size of the recall index files under the cache
// dir, -1 when there are none.
// tempFiles reports whether a save is writing its temporary file in cache.
func tempFiles(cache string) bool { return findFile(cache, ".recall-", ".tmp") }

// storedIndex reports whether the recall index's .idx file was written.
func storedIndex(cache string) bool { return findFile(cache, "recall-", ".idx") }

func findFile(dir, prefix, suffix string) bool {
	found := false
	_ = filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasPrefix(d.Name(), prefix) && strings.HasSuffix(d.Name(), suffix) {
			found = true
		}
		return nil
	})
	return found
}

func recallDiskBytes(cache string) int64 {
	var n int64 = -1
	_ = filepath.WalkDir(cache, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasPrefix(d.Name(), "recall-") {
			if info, err := d.Info(); err == nil {
				n = max(n, 0) + info.Size()
			}
		}
		return nil
	})
	return n
}
