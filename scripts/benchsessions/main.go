// Command benchsessions measures the session half of dsh-refls against the
// baselines SPEC §5 names, in one run on one store: cold index build as a
// ratio to `rg -c '"session/title"'` over the same root, warm restart from
// the cache, candidate query latency while typing, freshness from append to
// visible, and peak RSS. Runs are interleaved and medians reported, because
// these machines are noisy.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/dsh-refls/dsh-refls/internal/cputime"
	"github.com/dsh-refls/dsh-refls/internal/dshgen"
	"github.com/dsh-refls/dsh-refls/internal/lsptest"
	"github.com/dsh-refls/dsh-refls/sessionref/dshlog/layout"
	"github.com/dsh-refls/dsh-refls/sessionref/live"
	"github.com/dsh-refls/dsh-refls/sessionref/titles"
	"github.com/dsh-refls/dsh-refls/watch"
)

func main() {
	root := flag.String("root", filepath.Join(os.TempDir(), "dsh-refls-bench", "sessions"), "store to use (generated when missing)")
	sessions := flag.Int("sessions", 10000, "sessions to generate")
	size := flag.String("bytes", "3G", "total log bytes to generate (K, M, G suffixes)")
	seed := flag.Int64("seed", 1, "generator seed")
	runs := flag.Int("runs", 5, "interleaved runs of each timed build")
	format := flag.Int("format", 0, "log format of the generated store: 0 (dsh 0.1), or 4 (dsh 0.2: v4 logs, a quarter beside their v0 originals)")
	bin := flag.String("bin", "", "also restart this dsh-refls binary over the cache and time its first answer and its revalidation")
	binA := flag.String("bin-a", "", "with --bin: restart this baseline binary too, interleaved with --bin, and print both and their ratios")
	serverOnly := flag.Bool("server-only", false, "with --bin: time only the server restarts")
	typed := flag.Int("after-typing", 0, "with --bin: also time issue 31's restart: a server types this many queries and shuts down cleanly, then the restart polls dsh/candidates until it lists every session")
	flag.Parse()
	if *serverOnly && *bin == "" {
		fmt.Fprintln(os.Stderr, "benchsessions: --server-only needs --bin")
		os.Exit(2)
	}
	if err := run(*root, *sessions, *size, *seed, *runs, *format == 4, binaries{a: *binA, b: *bin, only: *serverOnly, typed: *typed}); err != nil {
		fmt.Fprintln(os.Stderr, "benchsessions:", err)
		os.Exit(1)
	}
}

func parseSize(s string) (int64, error) {
	mult := int64(1)
	switch {
	case strings.HasSuffix(s, "G"):
		mult, s = 1<<30, strings.TrimSuffix(s, "G")
	case strings.HasSuffix(s, "M"):
		mult, s = 1<<20, strings.TrimSuffix(s, "M")
	case strings.HasSuffix(s, "K"):
		mult, s = 1<<10, strings.TrimSuffix(s, "K")
	}
	var n int64
	if _, err := fmt.Sscan(s, &n); err != nil {
		return 0, fmt.Errorf("size %q: %w", s, err)
	}
	return n * mult, nil
}

// binaries are the server binaries a run restarts: b, and a as the
// baseline when set; only skips the in-process figures; typed, when not
// zero, adds the restart after that many typed queries (b only).
type binaries struct {
	a, b  string
	only  bool
	typed int
}

func run(root string, sessions int, size string, seed int64, runs int, v4 bool, bins binaries) error {
	ctx := context.Background()
	target, err := parseSize(size)
	if err != nil {
		return err
	}
	if _, err := os.Stat(root); errors.Is(err, os.ErrNotExist) {
		fmt.Printf("generating %d sessions, %s of logs under %s ...\n", sessions, size, root)
		t0 := time.Now()
		rep, err := dshgen.BenchStoreWith(ctx, root, dshgen.BenchConfig{Sessions: sessions, TargetBytes: target, Seed: seed, V4: v4})
		if err != nil {
			return fmt.Errorf("generating the store: %w", err)
		}
		fmt.Printf("generated %d sessions in %d projects, %.2f GB on disk, in %v\n", rep.Sessions, rep.Projects, float64(rep.DiskBytes)/1e9, time.Since(t0).Round(time.Second))
	}
	fmt.Printf("machine: %s\n", machine())
	if bins.only {
		return serverOnly(root, runs, bins)
	}
	rg, err := exec.LookPath("rg")
	if err != nil {
		return errors.New("ripgrep (rg) is not installed; scripts/bench-sessions.sh installs it")
	}
	// Warm the page cache so both sides read from memory.
	if _, err := timeRG(rg, root); err != nil {
		return err
	}
	var rgTimes, coldTimes, warmTimes, loadTimes, warmCPU []time.Duration
	var ix *titles.Index
	cache := filepath.Join(os.TempDir(), "dsh-refls-bench-index.gob")
	for i := 0; i < runs; i++ {
		d, err := timeRG(rg, root)
		if err != nil {
			return err
		}
		rgTimes = append(rgTimes, d)
		ix = titles.NewIndex(root, titles.IndexOptions{})
		t0 := time.Now()
		if err := ix.Build(ctx, nil); err != nil {
			return fmt.Errorf("building the index: %w", err)
		}
		coldTimes = append(coldTimes, time.Since(t0))
		if err := ix.SaveCache(cache); err != nil {
			return err
		}
		warm := titles.NewIndex(root, titles.IndexOptions{})
		runtime.GC() // the cold index's garbage is not the restart's
		c0 := cputime.Process()
		t0 = time.Now()
		if err := warm.LoadCache(cache); err != nil {
			return fmt.Errorf("loading the cache: %w", err)
		}
		loadTimes = append(loadTimes, time.Since(t0))
		if err := warm.Build(ctx, nil); err != nil {
			return err
		}
		warmTimes = append(warmTimes, time.Since(t0))
		warmCPU = append(warmCPU, cputime.Process()-c0)
		if warm.BytesRead() != 0 {
			return fmt.Errorf("warm restart read %d log bytes", warm.BytesRead())
		}
	}
	snap := ix.Snapshot()
	rgMed, coldMed, warmMed := median(rgTimes), median(coldTimes), median(warmTimes)
	fmt.Printf("sessions indexed: %d (skipped %d), log bytes read by a cold build: %.2f GB\n", len(snap.Sessions), len(snap.Skipped), float64(ix.BytesRead())/1e9)
	warmBound, at := restartBound(len(snap.Sessions))
	fmt.Printf("rg -c '\"session/title\"' scan:  median %v over %d runs (the baseline)\n", rgMed.Round(time.Millisecond), runs)
	fmt.Printf("cold index build:           median %v  = %.2f× rg   (bound ≤ 2× rg: %.2f× the bound)\n", coldMed.Round(time.Millisecond), ratio(coldMed, rgMed), ratio(coldMed, rgMed)/2)
	fmt.Printf("warm restart (cache):       median %v  = %.3f× rg, %.2f× the bound %v (%s); snapshot served from the cache after %v; CPU %v\n",
		warmMed.Round(time.Millisecond), ratio(warmMed, rgMed), ratio(warmMed, warmBound), warmBound, at, median(loadTimes).Round(time.Millisecond), median(warmCPU).Round(time.Millisecond))

	if bins.b != "" {
		if err := reportServerRestarts(bins, root, runs, warmBound); err != nil {
			return err
		}
	}

	lat := typingLatencies(snap)
	p50, p99 := percentile(lat, 50), percentile(lat, 99)
	fmt.Printf("candidate query while typing: %d queries, p50 %v (%.2f× the bound 250 µs), p99 %v (%.2f× the bound 1 ms)\n",
		len(lat), p50, ratio(p50, 250*time.Microsecond), p99, ratio(p99, time.Millisecond))
	fmt.Printf("query p50 vs one rg scan:   %.0f× faster   (SPEC §5: ≥ 500×)\n", ratio(rgMed, p50))

	fresh, err := freshness(ctx, root, snap)
	if err != nil {
		return err
	}
	fmt.Printf("freshness append→visible:   %d appends, p50 %v, max %v  (SPEC §5: ≤ 250 ms)\n", len(fresh), percentile(fresh, 50).Round(time.Millisecond), percentile(fresh, 100).Round(time.Millisecond))
	fmt.Printf("peak RSS:                   %s   (SPEC §5: ≤ 150 MB with both indexes)\n", peakRSS())
	fmt.Printf("machine at the end: %s\n", machine())
	return nil
}

// restartBound is the warm restart bound for a store of n sessions: issue
// 15's 300 ms holds at 100,000 sessions, SPEC §5's 100 ms at 10,000.
func restartBound(n int) (time.Duration, string) {
	if n > 10000 {
		return 300 * time.Millisecond, "issue 15 at 100,000"
	}
	return 100 * time.Millisecond, "SPEC §5 at 10,000"
}

func timeRG(rg, root string) (time.Duration, error) {
	cmd := exec.Command(rg, "-c", `"session/title"`, root)
	cmd.Stdout, cmd.Stderr = nil, os.Stderr
	t0 := time.Now()
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !(errors.As(err, &exit) && exit.ExitCode() == 1) {
		return 0, fmt.Errorf("running rg: %w", err)
	}
	return time.Since(t0), nil
}

// typingLatencies types the first 20 characters of many titles, one
// keystroke at a time, and times each candidate query.
func typingLatencies(snap *titles.Snapshot) []time.Duration {
	rnd := rand.New(rand.NewSource(7))
	var out []time.Duration
	for k := 0; k < 50 && len(snap.Sessions) > 0; k++ {
		e := snap.Sessions[rnd.Intn(len(snap.Sessions))]
		title := []rune(e.DisplayTitle())
		for n := 1; n <= len(title) && n <= 20; n++ {
			t0 := time.Now()
			_, _, _ = snap.Candidates(titles.CandidateQuery{Query: string(title[:n]), TargetCwd: e.Cwd})
			out = append(out, time.Since(t0))
		}
	}
	return out
}

// freshness appends a title to existing logs and waits until the live
// store shows it.
func freshness(ctx context.Context, root string, snap *titles.Snapshot) ([]time.Duration, error) {
	st, err := live.Open(live.Options{Root: root, Watch: watch.ModeFsnotify, CachePath: live.NoCache})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); _ = st.Run(ctx) }()
	defer func() { cancel(); <-done }()
	<-st.Ready()
	var out []time.Duration
	for i := 0; i < 20 && i < len(snap.Sessions); i++ {
		e := snap.Sessions[i*len(snap.Sessions)/20]
		if e.Encoding != layout.EncodingRaw {
			continue
		}
		title := fmt.Sprintf("fresh title %d %d", i, time.Now().UnixNano())
		line := fmt.Sprintf(`{"type":"session/title","seq":%d,"time":%d,"data":{"title":%q,"messageSeqs":[],"source":{"kind":"user"}}}`+"\n", e.LastSeq+1, time.Now().UnixMilli(), title)
		f, err := os.OpenFile(e.Path, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			return nil, err
		}
		t0 := time.Now()
		_, err = f.WriteString(line)
		f.Close()
		if err != nil {
			return nil, err
		}
		for {
			if got, ok := st.Index().Snapshot().Locate(e.ID); ok && got.Title == title {
				out = append(out, time.Since(t0))
				break
			}
			if time.Since(t0) > 5*time.Second {
				return nil, fmt.Errorf("appended title of %s not visible after 5 s", e.ID)
			}
			time.Sleep(time.Millisecond)
		}
	}
	return out, nil
}

func median(d []time.Duration) time.Duration { return percentile(d, 50) }

func percentile(d []time.Duration, p int) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	i := (len(s)*p + 99) / 100
	return s[max(0, min(len(s)-1, i-1))]
}

func ratio(a, b time.Duration) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// peakRSS is this process's VmHWM (peak resident set size), as /proc writes it.
func peakRSS() string {
	kb, err := lsptest.ProcStatusKB(os.Getpid(), "VmHWM")
	if err != nil {
		return "unknown"
	}
	return fmt.Sprintf("%d kB", kb)
}

// machine describes where the figures were taken: cores, CPU model and the
// load average, which on a shared machine decides the absolute times.
func machine() string {
	model := "unknown CPU"
	if raw, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(raw), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				model = strings.TrimSpace(v)
				break
			}
		}
	}
	load := "unknown"
	if raw, err := os.ReadFile("/proc/loadavg"); err == nil {
		load = strings.Join(strings.Fields(string(raw))[:3], " ")
	}
	return fmt.Sprintf("%d cores (%s), load average %s", runtime.NumCPU(), model, load)
}
