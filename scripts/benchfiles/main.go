// Command benchfiles measures the workspace file index against fdfind on a
// generated tree: index build time as a ratio to "fdfind --type f"
// (interleaved runs, medians), completion latency percentiles while typing
// 20-character queries, and peak RSS. bench-files.sh drives it.
//
// Modes:
//
//	benchfiles gen -dir D [-files N -ignored M]   write the tree
//	benchfiles build -dir D                       build once, print count and time
//	benchfiles compare -dir D [-runs N] [-base B] interleave fdfind and build runs (and B's build mode)
//	benchfiles sizes -dir D                       measuring sizes, directory totals and facts
//	benchfiles facts -dir D -bin B [-base-bin O]  @, @dir/ and a @dir/ hover over pipes, B against O
//	benchfiles search -dir D                      typing latency and peak RSS
//	benchfiles query -dir D Q...                  print the top results of queries
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"time"

	"github.com/dsh-refls/dsh-refls/completion"
	"github.com/dsh-refls/dsh-refls/fileref"
	"github.com/dsh-refls/dsh-refls/internal/cputime"
	"github.com/dsh-refls/dsh-refls/internal/lsptest"
)

// vocabulary builds realistic path names.
var vocabulary = []string{
	"server", "client", "handler", "config", "util", "parser", "render", "store",
	"cache", "index", "search", "query", "session", "model", "view", "router",
	"auth", "token", "stream", "buffer", "encoder", "decoder", "worker", "queue",
	"schema", "record", "event", "metrics", "logger", "format", "widget", "layout",
}

var extensions = []string{".go", ".ts", ".tsx", ".py", ".rs", ".md", ".json", ".c", ".h", ".yaml"}

// Tree shape: keptFiles = topDirs × midDirs × leafDirs × filesPerLeaf.
const (
	topDirs      = 25
	midDirs      = 10
	leafDirs     = 30
	filesPerLeaf = 20
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: benchfiles gen|build|compare|search -dir D")
		os.Exit(2)
	}
	mode := os.Args[1]
	fs := flag.NewFlagSet(mode, flag.ExitOnError)
	dir := fs.String("dir", "", "tree root")
	files := fs.Int("files", 200000, "total files to generate")
	ignored := fs.Int("ignored", 50000, "of which ignored by .gitignore")
	patterns := fs.Int("patterns", 0, "generated patterns added to the root .gitignore (file names, directory names and *.ext extensions no path of the tree has)")
	runs := fs.Int("runs", 7, "interleaved runs per tool")
	sessions := fs.Int("sessions", 60, "typing sessions of 20-character queries")
	parallelism := fs.Int("parallelism", 0, "directory readers (0: the index default)")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the measured part here")
	base := fs.String("base", "", "compare: another benchfiles binary (an older build) whose build runs interleaved too")
	bin := fs.String("bin", "", "facts: the dsh-refls binary")
	baseBin := fs.String("base-bin", "", "facts: an older dsh-refls binary, measured beside -bin in the same run")
	rounds := fs.Int("rounds", 200, "facts: requests of each kind per server")
	_ = fs.Parse(os.Args[2:])
	readers = *parallelism
	if *dir == "" {
		fmt.Fprintln(os.Stderr, "-dir is required")
		os.Exit(2)
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err == nil {
			_ = pprof.StartCPUProfile(f)
			defer pprof.StopCPUProfile()
		}
	}
	var err error
	switch mode {
	case "gen":
		err = generate(*dir, *files, *ignored, *patterns)
	case "build":
		err = buildOnce(*dir)
	case "compare":
		err = compare(*dir, *runs, *base)
	case "sizes":
		err = sizes(*dir)
	case "facts":
		err = factsOverPipes(*dir, *bin, *baseBin, *rounds)
	case "search":
		err = search(*dir, *sessions)
	case "query":
		err = query(*dir, fs.Args())
	default:
		err = fmt.Errorf("unknown mode %q", mode)
	}
	if err != nil {
		pprof.StopCPUProfile()
		fmt.Fprintln(os.Stderr, "benchfiles:", err)
		os.Exit(1)
	}
}

func word(rng *rand.Rand) string { return vocabulary[rng.IntN(len(vocabulary))] }

// generate writes total files of which ignored are hidden by the root
// .gitignore: most inside "build/" directories, the rest as *.log files.
// patterns more lines of the .gitignore name files and directories the
// tree does not hold (a generated list, as some projects keep): every
// path is decided against them too.
func generate(dir string, total, ignored, patterns int) error {
	rng := rand.New(rand.NewPCG(42, 4242))
	kept := total - ignored
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", dir, err)
	}
	rules := []byte("build/\n*.log\n/dist\n!keep.log\n")
	for i := range patterns {
		switch i % 4 {
		case 0:
			rules = fmt.Appendf(rules, "*.e%05d\n", i) // an extension
		case 1:
			rules = fmt.Appendf(rules, "d%06d/\n", i) // a directory
		default:
			rules = fmt.Appendf(rules, "g%06d.o\n", i) // a file name
		}
	}
	if err := os.WriteFile(filepath.Join(dir, ".gitignore"), rules, 0o644); err != nil {
		return err
	}
	leaves := topDirs * midDirs * leafDirs
	perLeaf := kept / leaves
	logs := ignored / 5
	logsPerLeaf := max(1, logs/leaves)
	buildFiles := ignored - logsPerLeaf*leaves
	written, ign := 0, 0
	write := func(p string) error {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		return os.WriteFile(p, nil, 0o644)
	}
	for t := 0; t < topDirs; t++ {
		top := fmt.Sprintf("%s%02d", word(rng), t)
		for m := 0; m < midDirs; m++ {
			mid := fmt.Sprintf("%s_%s%d", word(rng), word(rng), m)
			for l := 0; l < leafDirs; l++ {
				leaf := filepath.Join(dir, top, mid, fmt.Sprintf("%s%d", word(rng), l))
				for f := 0; f < perLeaf; f++ {
					name := fmt.Sprintf("%s_%s%d%s", word(rng), word(rng), f, extensions[rng.IntN(len(extensions))])
					if err := write(filepath.Join(leaf, name)); err != nil {
						return err
					}
					written++
				}
				for f := 0; f < logsPerLeaf; f++ {
					if err := write(filepath.Join(leaf, fmt.Sprintf("%s%d.log", word(rng), f))); err != nil {
						return err
					}
					ign++
				}
			}
		}
		// build/ output under every top directory.
		per := buildFiles / topDirs
		for f := 0; f < per; f++ {
			p := filepath.Join(dir, top, "build", fmt.Sprintf("obj%d", f/100), fmt.Sprintf("%s%d.o", word(rng), f))
			if err := write(p); err != nil {
				return err
			}
			ign++
		}
	}
	fmt.Printf("generated %d kept + %d ignored files under %s\n", written, ign, dir)
	return nil
}

// readers is the -parallelism flag, passed to every build.
var readers int

func buildIndex(dir string) (*fileref.Index, time.Duration, error) {
	start := time.Now()
	ix, err := fileref.Build(context.Background(), fileref.Options{Root: dir, Parallelism: readers})
	return ix, time.Since(start), err
}

func buildOnce(dir string) error {
	ix, d, err := buildIndex(dir)
	if err != nil {
		return err
	}
	fmt.Printf("%d files %d paths %s\n", ix.Files(), ix.Len(), d)
	return nil
}

// run is one measured process run.
type run struct {
	wall, cpu time.Duration
	out       []byte
}

// timeCmd runs a command and returns its wall time, its CPU time (user +
// system, which other load on the machine disturbs less) and its output.
func timeCmd(name string, args ...string) (run, error) {
	cmd := exec.Command(name, args...)
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = os.Stderr
	start := time.Now()
	err := cmd.Run()
	r := run{wall: time.Since(start), out: out.Bytes()}
	if err != nil {
		return r, fmt.Errorf("running %s: %w", name, err)
	}
	r.cpu = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	return r, nil
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// compare interleaves whole-process runs of fdfind and of this program's
// build mode, so that both pay process start-up and both see the same
// cache state.
func compare(dir string, runs int, base string) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	var fdW, ixW, fdC, ixC, gitW, gitC, baseW, baseC []time.Duration
	var baseLine string
	var fdN, gitN int
	var ixLine string
	// git applies the same ignore rules to the same walk (the tree is a
	// repository with nothing committed: every file is untracked).
	_, gitErr := os.Stat(filepath.Join(dir, ".git"))
	for i := -1; i < runs; i++ { // run -1 warms the cache
		fr, err := timeCmd("fdfind", "--type", "f", ".", dir)
		if err != nil {
			return err
		}
		if gitErr == nil {
			gr, err := timeCmd("git", "-C", dir, "ls-files", "--others", "--exclude-standard")
			if err != nil {
				return err
			}
			if i >= 0 {
				gitW, gitC = append(gitW, gr.wall), append(gitC, gr.cpu)
			}
			gitN = bytes.Count(gr.out, []byte("\n"))
		}
		ir, err := timeCmd(self, "build", "-dir", dir, "-parallelism", fmt.Sprint(readers))
		if err != nil {
			return err
		}
		if base != "" {
			br, err := timeCmd(base, "build", "-dir", dir, "-parallelism", fmt.Sprint(readers))
			if err != nil {
				return err
			}
			if i >= 0 {
				baseW, baseC = append(baseW, br.wall), append(baseC, br.cpu)
			}
			baseLine = strings.TrimSpace(string(br.out))
		}
		if i >= 0 {
			fdW, fdC = append(fdW, fr.wall), append(fdC, fr.cpu)
			ixW, ixC = append(ixW, ir.wall), append(ixC, ir.cpu)
		}
		fdN, ixLine = bytes.Count(fr.out, []byte("\n")), strings.TrimSpace(string(ir.out))
	}
	fmt.Printf("fdfind --type f: %d files; wall median %s %v; cpu median %s\n", fdN,
		median(fdW).Round(time.Millisecond), roundAll(fdW), median(fdC).Round(time.Millisecond))
	fmt.Printf("fileref build:   %s; wall median %s %v; cpu median %s\n", ixLine,
		median(ixW).Round(time.Millisecond), roundAll(ixW), median(ixC).Round(time.Millisecond))
	fmt.Printf("build ratio fileref/fdfind over %d interleaved runs: wall %.2fx, cpu %.2fx (target <= 1.0x)\n", runs,
		float64(median(ixW))/float64(median(fdW)), float64(median(ixC))/float64(median(fdC)))
	if len(baseW) > 0 {
		fmt.Printf("base build (%s): %s; wall median %s %v; cpu median %s; base/fdfind wall %.2fx, cpu %.2fx; this/base wall %.2fx, cpu %.2fx\n", base, baseLine,
			median(baseW).Round(time.Millisecond), roundAll(baseW), median(baseC).Round(time.Millisecond),
			float64(median(baseW))/float64(median(fdW)), float64(median(baseC))/float64(median(fdC)),
			float64(median(ixW))/float64(median(baseW)), float64(median(ixC))/float64(median(baseC)))
	}
	if len(gitW) > 0 {
		fmt.Printf("git ls-files --others --exclude-standard: %d files; wall median %s; cpu median %s; fileref/git wall %.2fx, cpu %.2fx\n", gitN,
			median(gitW).Round(time.Millisecond), median(gitC).Round(time.Millisecond),
			float64(median(ixW))/float64(median(gitW)), float64(median(ixC))/float64(median(gitC)))
	}
	return nil
}

func roundAll(ds []time.Duration) []time.Duration {
	out := make([]time.Duration, len(ds))
	for i, d := range ds {
		out[i] = d.Round(time.Millisecond)
	}
	return out
}

// queries are typed one character at a time; each starts differently so
// that one session cannot reuse the narrowing of another.
var queries = []string{
	"serverhandlerconfigg", "parserrenderstoreidx", "clientsessionmodelvw",
	"authtokenstreambuffr", "encoderdecoderworker", "metricsloggerformatw",
	"routerqueueschemarec", "widgetlayoutcachesrc", "indexsearchqueryhndl",
	"handlerutil12go", "queryschemaeventtsxx", "tokenworkerqueue_rs",
}

func search(dir string, sessions int) error {
	ix, d, err := buildIndex(dir)
	if err != nil {
		return err
	}
	fmt.Printf("index: %d files, %d paths, built in %s; peak RSS so far %s\n", ix.Files(), ix.Len(), d.Round(time.Millisecond), peakRSS())
	heap := liveHeap()
	fmt.Printf("index share of memory: live heap after GC %.1f MB (%d bytes per path)\n", float64(heap)/(1<<20), heap/uint64(max(1, ix.Len())))
	var lat, cpu []time.Duration
	var firstKey []time.Duration
	ctx := context.Background()
	for s := 0; s < sessions; s++ {
		q := queries[s%len(queries)]
		for i := 1; i <= len(q); i++ {
			c0 := cputime.Process()
			start := time.Now()
			if _, _, err := ix.Search(ctx, q[:i], 0); err != nil {
				return err
			}
			el := time.Since(start)
			cpu = append(cpu, cputime.Process()-c0)
			lat = append(lat, el)
			if i == 1 {
				firstKey = append(firstKey, el)
			}
		}
	}
	slices.Sort(lat)
	slices.Sort(cpu)
	pct := func(p float64) time.Duration { return lat[int(p*float64(len(lat)-1))] }
	cpct := func(p float64) time.Duration { return cpu[int(p*float64(len(cpu)-1))].Round(time.Microsecond) }
	res, _, _ := ix.Search(ctx, "srvhndlcfg", 3)
	fmt.Printf("completion over %d paths, %d keystrokes (%d sessions x 20 chars): p50 %s  p90 %s  p99 %s  max %s (targets p50 <= 10ms, p99 <= 30ms)\n",
		ix.Len(), len(lat), sessions, pct(0.50).Round(time.Microsecond), pct(0.90).Round(time.Microsecond),
		pct(0.99).Round(time.Microsecond), lat[len(lat)-1].Round(time.Microsecond))
	fmt.Printf("process CPU time per keystroke (all cores, less disturbed by other load): p50 %s  p90 %s  p99 %s\n", cpct(0.5), cpct(0.9), cpct(0.99))
	fmt.Printf("first keystroke (full scan): median %s wall\n", median(firstKey).Round(time.Microsecond))
	fmt.Printf("machine load average at the end: %s\n", loadAvg())
	if len(res) > 0 {
		fmt.Printf("sample: srvhndlcfg -> %s\n", res[0].Path)
	}
	fmt.Printf("peak RSS after typing: %s\n", peakRSS())
	if err := listingLatency(ix, dir); err != nil {
		return err
	}
	if err := applyLatency(ix, dir); err != nil {
		return err
	}
	fmt.Printf("peak RSS: %s\n", peakRSS())
	return nil
}

// listingLatency times what `@` and `@dir/` answer: the root listing,
// a listing of a top directory, and each filtered by a letter, 100 times
// each. Every entry is decided against the ignore rules (SPEC §3).
func listingLatency(ix *fileref.Index, dir string) error {
	des, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	top := ""
	for _, de := range des {
		if de.IsDir() && !strings.HasPrefix(de.Name(), ".") {
			top = de.Name()
			break
		}
	}
	ctx := context.Background()
	for _, q := range []string{"", "a", top + "/", top + "/a"} {
		var lat []time.Duration
		n := 0
		for range 100 {
			start := time.Now()
			res, _, err := ix.Search(ctx, q, 0)
			if err != nil {
				return err
			}
			lat = append(lat, time.Since(start))
			n = len(res)
		}
		slices.Sort(lat)
		fmt.Printf("listing %q (%d entries): p50 %s  p99 %s (target p99 <= 30ms)\n", "@"+q, n,
			lat[len(lat)/2].Round(time.Microsecond), lat[len(lat)*99/100].Round(time.Microsecond))
	}
	return nil
}

// applyLatency creates and deletes one file and reports how long the index
// takes to show each change (Apply plus the search that finds it). The
// watcher's debounce comes on top.
func applyLatency(ix *fileref.Index, dir string) error {
	probe := filepath.Join(dir, "zz-apply-probe", "fresh_probe_file.txt")
	ctx := context.Background()
	var created, deleted []time.Duration
	for i := 0; i < 5; i++ {
		if err := os.MkdirAll(filepath.Dir(probe), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(probe, nil, 0o644); err != nil {
			return err
		}
		start := time.Now()
		ix.Apply([]fileref.Change{{Path: filepath.Dir(probe)}, {Path: probe}})
		res, _, err := ix.Search(ctx, "freshprobefile", 1)
		if err != nil || len(res) == 0 {
			return fmt.Errorf("created probe not found after Apply (err %v)", err)
		}
		created = append(created, time.Since(start))
		if err := os.RemoveAll(filepath.Dir(probe)); err != nil {
			return err
		}
		start = time.Now()
		ix.Apply([]fileref.Change{{Path: probe}, {Path: filepath.Dir(probe)}})
		res, _, err = ix.Search(ctx, "freshprobefile", 1)
		if err != nil || len(res) != 0 {
			return fmt.Errorf("deleted probe still found after Apply (err %v)", err)
		}
		deleted = append(deleted, time.Since(start))
	}
	fmt.Printf("live update (Apply + search) over %d paths: create median %s, delete median %s (target: visible within 250ms incl. debounce)\n",
		ix.Len(), median(created).Round(time.Microsecond), median(deleted).Round(time.Microsecond))
	return nil
}

// liveHeap is the heap in use after a collection: with nothing but the
// index alive, the index's share of the process memory.
func liveHeap() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

// peakRSS is this process's VmHWM (peak resident set size), as /proc writes it.
func peakRSS() string {
	kb, err := lsptest.ProcStatusKB(os.Getpid(), "VmHWM")
	if err != nil {
		return "unknown"
	}
	return fmt.Sprintf("%d kB", kb)
}

// loadAvg reports /proc/loadavg, so that noisy numbers can be recognised.
func loadAvg() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(data))
}

// query prints the top results of each query, to eyeball the ranking on a
// real tree.
func query(dir string, qs []string) error {
	ix, _, err := buildIndex(dir)
	if err != nil {
		return err
	}
	for _, q := range qs {
		start := time.Now()
		res, capped, err := ix.Search(context.Background(), q, 8)
		if err != nil {
			return err
		}
		fmt.Printf("%q (capped %v, %s):\n", q, capped, time.Since(start).Round(time.Microsecond))
		for _, c := range res {
			m := completion.InsertFile(c.Path, c.Kind, false)
			fmt.Printf("  %5d  %s%s\n", c.Score, m, map[bool]string{true: "  (ignored)"}[c.Ignored])
		}
	}
	return nil
}

// sizes measures what directory facts cost on a built index: measuring
// every file's size after the build (one stat each), summing the index by
// directory, the constant-time totals a completion row reads, the facts
// and tree a hover reads (of the root and of a top directory), and a
// change applied with its totals.
func sizes(dir string) error {
	ix, d, err := buildIndex(dir)
	if err != nil {
		return err
	}
	fmt.Printf("index: %d files, %d paths, built in %s; %d sizes to measure\n", ix.Files(), ix.Len(), d.Round(time.Millisecond), ix.Unmeasured())
	c0 := cputime.Process()
	start := time.Now()
	if err := ix.MeasureSizes(context.Background()); err != nil {
		return err
	}
	fmt.Printf("MeasureSizes: %s wall, %s process CPU (%d files; the build took %s)\n", time.Since(start).Round(time.Millisecond),
		(cputime.Process() - c0).Round(time.Millisecond), ix.Files(), d.Round(time.Millisecond))
	root, ok := ix.DirTotals("")
	if !ok {
		return fmt.Errorf("no totals after MeasureSizes")
	}
	fmt.Printf("root totals: %d files, %d directories, %d bytes, ~%d tokens\n", root.Files, root.Dirs, root.Bytes, root.Tokens())
	des, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var tops []string
	for _, de := range des {
		if de.IsDir() && !strings.HasPrefix(de.Name(), ".") {
			tops = append(tops, de.Name())
		}
	}
	if len(tops) == 0 {
		return fmt.Errorf("no top directory under %s", dir)
	}
	var lookups []time.Duration
	for range 1000 {
		start := time.Now()
		for _, top := range tops {
			if _, ok := ix.DirTotals(top); !ok {
				return fmt.Errorf("no totals of %s", top)
			}
		}
		lookups = append(lookups, time.Since(start))
	}
	slices.Sort(lookups)
	fmt.Printf("DirTotals of the %d top directories (a root listing's rows): p50 %s p99 %s\n", len(tops),
		lookups[len(lookups)/2], lookups[len(lookups)*99/100])
	ctx := context.Background()
	for _, rel := range []string{tops[0], ""} {
		var lat []time.Duration
		var facts fileref.DirFacts
		for range 30 {
			start := time.Now()
			facts, err = ix.DirFacts(ctx, rel, fileref.DirFactsOptions{Depth: 2, Width: 8})
			if err != nil {
				return err
			}
			lat = append(lat, time.Since(start))
		}
		slices.Sort(lat)
		fmt.Printf("DirFacts %q, depth 2, width 8 (a hover; %d files): p50 %s p99 %s\n", rel+"/", facts.Files,
			lat[len(lat)/2].Round(time.Microsecond), lat[len(lat)-1].Round(time.Microsecond))
	}
	// A change and its totals: Apply sums the index again.
	probe := filepath.Join(dir, tops[0], "zz-sizes-probe.txt")
	var applied []time.Duration
	for i := range 5 {
		if err := os.WriteFile(probe, []byte(strings.Repeat("x", 100*(i+1))), 0o644); err != nil {
			return err
		}
		start := time.Now()
		ix.Apply([]fileref.Change{{Path: probe}})
		applied = append(applied, time.Since(start))
		if err := os.Remove(probe); err != nil {
			return err
		}
		ix.Apply([]fileref.Change{{Path: probe}})
	}
	fmt.Printf("Apply of a created file, index summed again: median %s over %d paths\n", median(applied).Round(time.Microsecond), ix.Len())
	fmt.Printf("peak RSS: %s\n", peakRSS())
	return nil
}

// factsServer is one dsh-refls process serving the tree for factsOverPipes.
type factsServer struct {
	name string
	cmd  *exec.Cmd
	e    *lsptest.Editor
	lat  map[string][]time.Duration // by kind of request
}

// startFactsServer starts bin on the workspace dir (an empty sessions
// root, no watcher), with the capabilities VS Code declares for rows and
// hovers, and waits until the files are indexed and their sizes summed
// (an older binary reports no fileSizesPending: 0).
func startFactsServer(ctx context.Context, name, bin, dir string) (*factsServer, error) {
	tmp, err := os.MkdirTemp("", "benchfiles-facts-")
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "--sessions-root", filepath.Join(tmp, "sessions"), "--watch", "off")
	cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+filepath.Join(tmp, "cache"))
	caps := map[string]any{"textDocument": map[string]any{
		"completion": map[string]any{"completionItem": map[string]any{"labelDetailsSupport": true, "documentationFormat": []string{"markdown"}}},
		"hover":      map[string]any{"contentFormat": []string{"markdown"}},
	}}
	e, err := lsptest.Start(cmd, lsptest.Config{Capabilities: caps, RootURI: "file://" + dir})
	if err != nil {
		return nil, err
	}
	s := &factsServer{name: name, cmd: cmd, e: e, lat: map[string][]time.Duration{}}
	start := time.Now()
	if err := e.Initialize(ctx, nil); err != nil {
		return s, err
	}
	for {
		var st struct {
			FilesIndexed     int `json:"filesIndexed"`
			FileSizesPending int `json:"fileSizesPending"`
		}
		if err := e.Status(ctx, &st); err != nil {
			return s, err
		}
		if st.FilesIndexed > 0 && st.FileSizesPending == 0 {
			fmt.Printf("%s server (%s): %d files indexed and summed %s after initialize\n", name, bin, st.FilesIndexed, time.Since(start).Round(time.Millisecond))
			return s, nil
		}
		select {
		case <-ctx.Done():
			return s, fmt.Errorf("%s server: files not indexed and summed: %w", name, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// timed runs one request and records its round trip under kind.
func (s *factsServer) timed(ctx context.Context, kind, method string, params, result any) error {
	start := time.Now()
	if err := s.e.Call(ctx, method, params, result); err != nil {
		return fmt.Errorf("%s server, %s: %w", s.name, kind, err)
	}
	s.lat[kind] = append(s.lat[kind], time.Since(start))
	return nil
}

// factsOverPipes times what directory facts add where a user meets them,
// through the real binaries over pipes: completion at "@" (the root
// listing, a row per top directory) and at "@top/" and "@top/mid/" (rows
// of their subdirectories), and the hover of a "@top/" mention. With
// baseBin the same requests go to an older build in the same run,
// alternating which server goes first, so both are measured under the
// same load. The round trip runs from the request written to its answer
// decoded by the client.
func factsOverPipes(dir, bin, baseBin string, rounds int) error {
	if bin == "" {
		return fmt.Errorf("facts needs -bin")
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	var servers []*factsServer
	defer func() {
		for _, s := range servers {
			_ = s.e.Close()
			_ = s.cmd.Process.Kill()
			<-s.e.Done()
			_ = s.cmd.Wait()
		}
	}()
	bins := [][2]string{{"new", bin}}
	if baseBin != "" {
		bins = append([][2]string{{"base", baseBin}}, bins...)
	}
	for _, b := range bins {
		s, err := startFactsServer(ctx, b[0], b[1], dir)
		if s != nil {
			servers = append(servers, s)
		}
		if err != nil {
			return err
		}
	}
	top, mid := "", ""
	des, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, de := range des {
		if de.IsDir() && !strings.HasPrefix(de.Name(), ".") && top == "" {
			top = de.Name()
		}
	}
	if des, err = os.ReadDir(filepath.Join(dir, top)); err != nil {
		return err
	}
	for _, de := range des {
		if de.IsDir() && mid == "" {
			mid = de.Name()
		}
	}
	uri := "file://" + dir + "/bench-facts.md"
	kinds := []struct{ kind, text string }{
		{"completion @", "see @"}, {"completion @" + top + "/", "see @" + top + "/"},
		{"completion @" + top + "/" + mid + "/", "see @" + top + "/" + mid + "/"},
	}
	hoverKind := "hover @" + top + "/"
	var rowSample, hoverSample string
	for _, s := range servers {
		if _, err := s.e.OpenFile(ctx, uri, "see @"+lsptest.Cursor); err != nil {
			return err
		}
	}
	for r := range rounds {
		order := servers
		if r%2 == 1 && len(servers) == 2 {
			order = []*factsServer{servers[1], servers[0]}
		}
		for _, k := range kinds {
			for _, s := range order {
				pos, err := s.e.SetText(ctx, uri, k.text+lsptest.Cursor)
				if err != nil {
					return err
				}
				var list struct {
					Items []struct {
						Label        string `json:"label"`
						LabelDetails *struct {
							Description string `json:"description"`
						} `json:"labelDetails"`
					} `json:"items"`
				}
				if err := s.timed(ctx, k.kind, "textDocument/completion", map[string]any{
					"textDocument": map[string]any{"uri": uri}, "position": pos}, &list); err != nil {
					return err
				}
				if s.name == "new" && r == 0 && k.text == "see @" {
					for _, it := range list.Items {
						if it.Label == top+"/" && it.LabelDetails != nil {
							rowSample = it.Label + "  " + it.LabelDetails.Description
						}
					}
				}
			}
		}
		for _, s := range order {
			pos, err := s.e.SetText(ctx, uri, "see @"+top[:1]+lsptest.Cursor+top[1:]+"/ now")
			if err != nil {
				return err
			}
			var hv struct {
				Contents struct{ Value string } `json:"contents"`
			}
			if err := s.timed(ctx, hoverKind, "textDocument/hover", map[string]any{
				"textDocument": map[string]any{"uri": uri}, "position": pos}, &hv); err != nil {
				return err
			}
			if s.name == "new" && r == 0 {
				hoverSample, _, _ = strings.Cut(hv.Contents.Value, "\n")
			}
		}
	}
	fmt.Printf("machine: %d cores, load %s; %d rounds\n", runtime.NumCPU(), loadAvg(), rounds)
	fmt.Printf("new row at @: %s\nnew hover's first line: %s\n", rowSample, hoverSample)
	pct := func(d []time.Duration, p float64) time.Duration {
		s := slices.Clone(d)
		slices.Sort(s)
		return s[min(len(s)-1, int(p*float64(len(s)-1)+0.5))].Round(time.Microsecond)
	}
	for _, kind := range append([]string{kinds[0].kind, kinds[1].kind, kinds[2].kind}, hoverKind) {
		line := fmt.Sprintf("%-34s", kind+":")
		for _, s := range servers {
			line += fmt.Sprintf("  [%s] p50 %v p99 %v", s.name, pct(s.lat[kind], 0.5), pct(s.lat[kind], 0.99))
		}
		if len(servers) == 2 {
			b, n := servers[0].lat[kind], servers[1].lat[kind]
			line += fmt.Sprintf("  new/base p50 %.2fx p99 %.2fx", float64(pct(n, 0.5))/float64(pct(b, 0.5)), float64(pct(n, 0.99))/float64(pct(b, 0.99)))
		}
		fmt.Println(line)
	}
	return nil
}
