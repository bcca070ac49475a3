// Command dshdiff is the differential check of dsh-refls against dsh's own
// session-reference code (dsh 0.1.1: its JSONL reader, session-query and the
// session-reference resolver, run under Node by driver.ts).
//
// It generates random stores with internal/dshgen, runs every candidate and
// prepare case through dsh-refls' Go API and through dsh's code, compares
// every field (candidate ids, order, labels; content, context source and
// stats, the snapshot data and the prompt bytes, error codes), and prints the
// agreement count with a categorised list of the disagreements.
//
// Run it with scripts/dshdiff.sh, which installs Node 22 and tsx (and dsh's
// published packages when no source tree is given); directly:
//
//	go run ./scripts/dshdiff --dsh-src /path/to/deepseek-harness --tsx TOOLS/node_modules/.bin/tsx
//	go run ./scripts/dshdiff --dsh-npm TOOLS --tsx TOOLS/node_modules/.bin/tsx
//
// dsh's code is never part of this repository: it is read from --dsh-src
// (default $DSH_SRC), whose npm dependencies the script links there, or
// from the published packages in --dsh-npm's node_modules (default
// $DSH_NPM), which the script installs from npm.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/dsh-refls/dsh-refls/internal/dshgen"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// recordedRounds is how many sets of random cases run on each existing root.
const recordedRounds = 5

// options are the command-line settings.
type options struct {
	dshSrc   string
	dshNpm   string
	tsx      string
	stores   int
	sessions int
	seed     uint64
	work     string
	report   string
	examples int
	roots    string
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("dshdiff", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o options
	fs.StringVar(&o.dshSrc, "dsh-src", os.Getenv("DSH_SRC"), "dsh source tree (deepseek-harness at 0.1.1); default $DSH_SRC")
	fs.StringVar(&o.dshNpm, "dsh-npm", os.Getenv("DSH_NPM"), "instead of --dsh-src: a directory whose node_modules holds dsh's published packages (@deepseek-ai/dsh-session-reference and the four it needs here, from npm); default $DSH_NPM")
	fs.StringVar(&o.tsx, "tsx", "tsx", "the tsx executable (Node 22 must be first on PATH)")
	fs.IntVar(&o.stores, "stores", 40, "number of random stores")
	fs.IntVar(&o.sessions, "sessions", 8, "most sessions per store")
	fs.Uint64Var(&o.seed, "seed", 1, "random seed: the same seed writes the same stores and cases")
	fs.StringVar(&o.work, "work", "", "directory for the stores, manifest and results (default: a new temporary directory)")
	fs.StringVar(&o.report, "report", "", "also write the categorised disagreements with examples to this file")
	fs.IntVar(&o.examples, "examples", 3, "examples printed per category")
	fs.StringVar(&o.roots, "roots", "", "also run random cases on these existing sessions roots (comma-separated; e.g. recorded fixtures, one encoding each)")
	benchSizes := fs.String("bench", "", "instead of the check, benchmark dsh against dsh-refls at these store sizes (comma-separated session counts)")
	var b benchOptions
	fs.Int64Var(&b.sessionBytes, "bench-session-bytes", 8<<10, "mean raw log bytes per session of a bench store")
	fs.IntVar(&b.rounds, "bench-rounds", 5, "timed rounds per case (after one warm-up round)")
	fs.DurationVar(&b.budget, "bench-budget", time.Minute, "time dsh may spend repeating one case")
	fs.DurationVar(&b.deadline, "bench-deadline", 2*time.Minute, "a dsh call still running after this is cancelled and reported as slower")
	fs.StringVar(&b.dir, "bench-dir", filepath.Join(os.TempDir(), "dsh-refls-benchdsh"), "where bench stores are generated once and reused")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if err := check(o); err != nil {
		fmt.Fprintln(stderr, "dshdiff:", err)
		return 2
	}
	if *benchSizes != "" {
		for _, f := range strings.Split(*benchSizes, ",") {
			var n int
			if _, err := fmt.Sscan(f, &n); err != nil || n <= 0 {
				fmt.Fprintf(stderr, "dshdiff: --bench wants positive session counts, got %q\n", f)
				return 2
			}
			b.sizes = append(b.sizes, n)
		}
		if err := os.MkdirAll(b.dir, 0o755); err != nil {
			fmt.Fprintln(stderr, "dshdiff:", err)
			return 1
		}
		if err := benchmark(context.Background(), o, b, stdout); err != nil {
			fmt.Fprintln(stderr, "dshdiff:", err)
			return 1
		}
		return 0
	}
	if err := differential(context.Background(), o, stdout); err != nil {
		fmt.Fprintln(stderr, "dshdiff:", err)
		return 1
	}
	return 0
}

// check fails with a clear message when neither dsh's source nor its
// published packages are there.
func check(o options) error {
	if o.dshNpm != "" {
		for _, p := range dshPackages {
			if _, err := os.Stat(filepath.Join(o.dshNpm, "node_modules", p, "package.json")); err != nil {
				return fmt.Errorf("%s has no node_modules/%s: install dsh's packages there (scripts/dshdiff.sh does)", o.dshNpm, p)
			}
		}
		return nil
	}
	if o.dshSrc == "" {
		return fmt.Errorf("dsh's code is needed: pass --dsh-src or set DSH_SRC to a deepseek-harness 0.1.1 tree, or --dsh-npm (DSH_NPM) for its published packages")
	}
	for _, p := range []string{"tsconfig.json", "packages/context/session-reference/src/index.ts", "packages/session/session-persistence-jsonl/src/index.ts"} {
		if _, err := os.Stat(filepath.Join(o.dshSrc, p)); err != nil {
			return fmt.Errorf("%s does not look like dsh's source tree (missing %s)", o.dshSrc, p)
		}
	}
	return nil
}

// dshPackages are the published packages of dsh that driver.ts imports.
var dshPackages = []string{
	"@deepseek-ai/cordis",
	"@deepseek-ai/dsh-session",
	"@deepseek-ai/dsh-session-persistence-jsonl",
	"@deepseek-ai/dsh-session-query",
	"@deepseek-ai/dsh-session-reference",
}

// dshCodeName says which code of dsh runs, for the reports.
func (o options) dshCodeName() string {
	if o.dshNpm != "" {
		return "dsh's published packages in " + o.dshNpm
	}
	return "deepseek-harness source at " + o.dshSrc
}

// driverCommand is the command that runs driver.ts with args on dsh's
// code. With dsh's source, tsx maps the imports through the tree's
// tsconfig; with its published packages, the driver is copied beside their
// node_modules, where Node finds them.
func driverCommand(ctx context.Context, o options, args ...string) (*exec.Cmd, error) {
	driver, err := filepath.Abs(filepath.Join("scripts", "dshdiff", "driver.ts"))
	if err != nil {
		return nil, err
	}
	if o.dshNpm == "" {
		return exec.CommandContext(ctx, o.tsx, append([]string{"--tsconfig", filepath.Join(o.dshSrc, "tsconfig.json"), driver}, args...)...), nil
	}
	data, err := os.ReadFile(driver)
	if err != nil {
		return nil, err
	}
	copied := filepath.Join(o.dshNpm, "dshdiff-driver.ts")
	if err := os.WriteFile(copied, data, 0o644); err != nil {
		return nil, fmt.Errorf("copying the driver beside dsh's packages: %w", err)
	}
	return exec.CommandContext(ctx, o.tsx, append([]string{copied}, args...)...), nil
}

// differential runs the whole check.
func differential(ctx context.Context, o options, stdout io.Writer) error {
	work := o.work
	if work == "" {
		dir, err := os.MkdirTemp("", "dshdiff-")
		if err != nil {
			return err
		}
		work = dir
	}
	if err := os.MkdirAll(work, 0o755); err != nil {
		return err
	}
	r := rand.New(rand.NewPCG(o.seed, 0x6473686469666621))
	var manifest struct {
		Stores []storeCases `json:"stores"`
	}
	notes := map[string]int{}
	for i := range o.stores {
		dir := filepath.Join(work, fmt.Sprintf("store-%03d", i))
		if err := os.RemoveAll(dir); err != nil {
			return err
		}
		st, err := generateStore(r, dir, o.sessions)
		if err != nil {
			return fmt.Errorf("store %d: %w", i, err)
		}
		for _, n := range st.notes {
			notes[n]++
		}
		cands, preps := genCases(r, st, i)
		sc := storeCases{Root: st.root, Compression: "none", Target: target{ID: st.targetID}, Candidates: cands, Prepares: preps}
		if st.enc == dshgen.Zstd {
			sc.Compression = "zstd"
		}
		if st.target != "" {
			cwd := st.target
			sc.Target.Cwd = &cwd
		}
		manifest.Stores = append(manifest.Stores, sc)
	}
	if o.roots != "" {
		for i, root := range strings.Split(o.roots, ",") {
			st, err := existingStore(ctx, root)
			if err != nil {
				return err
			}
			sc := storeCases{Root: st.root, Compression: "none", Target: target{ID: st.targetID, Cwd: &st.target}}
			for k := range recordedRounds {
				cands, preps := genCases(r, st, 1000+10*i+k)
				sc.Candidates = append(sc.Candidates, cands...)
				sc.Prepares = append(sc.Prepares, preps...)
			}
			if st.enc == dshgen.Zstd {
				sc.Compression = "zstd"
			}
			manifest.Stores = append(manifest.Stores, sc)
		}
	}
	manifestPath := filepath.Join(work, "manifest.json")
	raw, err := json.Marshal(manifest)
	if err != nil {
		return err
	}
	if err := os.WriteFile(manifestPath, raw, 0o644); err != nil {
		return err
	}
	dshResults, reads, err := runDriver(ctx, o, manifestPath)
	if err != nil {
		return err
	}
	reflsResults := map[string]result{}
	for _, sc := range manifest.Stores {
		if err := runRefls(ctx, sc, reflsResults); err != nil {
			return err
		}
	}
	sum := summary{byCategory: map[string][]example{}}
	for _, sc := range manifest.Stores {
		for _, c := range sc.Candidates {
			sum.add(c.ID, sc.Root, fmt.Sprintf("candidates query %q limit %d", c.Query, c.Limit), "candidates", compareCandidates(c, dshResults[c.ID], reflsResults[c.ID], reads[sc.Root], twinAgrees(c, dshResults, reflsResults, reads[sc.Root])))
		}
		for _, c := range sc.Prepares {
			sum.add(c.ID, sc.Root, fmt.Sprintf("prepare budget %d text %q", c.MaxReferenceBytes, clip(c.Text)), "prepare", comparePrepare(dshResults[c.ID], reflsResults[c.ID]))
		}
	}
	var b strings.Builder
	sum.print(&b, o, work, notes)
	fmt.Fprintf(&b, "prepare outcomes on dsh's side: %s\n", outcomes(manifest.Stores, dshResults))
	fmt.Fprint(stdout, b.String())
	if o.report != "" {
		return os.WriteFile(o.report, []byte(b.String()), 0o644)
	}
	return nil
}

// twinAgrees says how the uncapped twin of a capped candidate case
// compares: twinSame when both sides list the same sessions, twinUnreadable
// when they differ only by sessions whose logs dsh refuses, twinDiffers
// otherwise or when there is no twin.
func twinAgrees(c candidateCase, dsh, refls map[string]result, reads map[string]string) twin {
	d, ok := dsh[c.ID+uncappedSuffix]
	r, ok2 := refls[c.ID+uncappedSuffix]
	if !ok || !ok2 || d.Error != nil || r.Error != nil {
		return twinDiffers
	}
	ids := func(cs []candidate) []string {
		out := make([]string, len(cs))
		for i, k := range cs {
			out[i] = k.SessionID
		}
		return out
	}
	di, ri := ids(d.Candidates), ids(r.Candidates)
	if sameSet(di, ri) {
		return twinSame
	}
	if _, ok := allUnreadable(di, ri, reads); ok {
		return twinUnreadable
	}
	return twinDiffers
}

// outcomes counts what dsh answered to the prepare cases, so the agreement
// count can be read against it: contexts (how many truncated), and errors by
// code.
func outcomes(stores []storeCases, results map[string]result) string {
	counts := map[string]int{}
	for _, sc := range stores {
		for _, c := range sc.Prepares {
			r := results[c.ID]
			switch {
			case r.Error != nil:
				counts[short(r.Error.Code)]++
			case r.Source == nil:
				counts["no references"]++
			default:
				counts["context"]++
				for _, ref := range r.Source.References {
					if ref.Truncated {
						counts["context with a truncated source"]++
						break
					}
				}
			}
		}
	}
	var parts []string
	for k, v := range counts {
		parts = append(parts, fmt.Sprintf("%s %d", k, v))
	}
	slices.Sort(parts)
	return strings.Join(parts, ", ")
}

// runDriver runs dsh's code on the manifest and decodes its results.
func runDriver(ctx context.Context, o options, manifestPath string) (map[string]result, map[string]map[string]string, error) {
	cmd, err := driverCommand(ctx, o, manifestPath)
	if err != nil {
		return nil, nil, err
	}
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, nil, fmt.Errorf("running dsh's code (%s): %w", strings.Join(cmd.Args, " "), err)
	}
	var res struct {
		Results map[string]result            `json:"results"`
		Reads   map[string]map[string]string `json:"reads"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		return nil, nil, fmt.Errorf("decoding the driver's results: %w", err)
	}
	return res.Results, res.Reads, nil
}

// example is one disagreeing case.
type example struct {
	caseID, root, what, detail string
}

// summary counts cases and groups disagreements by category.
type summary struct {
	cases, agree, expected int
	byKind                 map[string][2]int // kind → cases, agreeing
	byCategory             map[string][]example
}

// add records the findings of one case; its first non-expected finding
// decides its category.
func (s *summary) add(caseID, root, what, kind string, fs []finding) {
	if s.byKind == nil {
		s.byKind = map[string][2]int{}
	}
	k := s.byKind[kind]
	k[0]++
	s.cases++
	var real []finding
	for _, f := range fs {
		if strings.HasPrefix(f.category, expectedPrefix) {
			s.byCategory[f.category] = append(s.byCategory[f.category], example{caseID, root, what, f.detail})
			continue
		}
		real = append(real, f)
	}
	if len(real) == 0 {
		s.agree++
		k[1]++
		if len(fs) > 0 {
			s.expected++
		}
	} else {
		f := real[0]
		var more []string
		for _, g := range real[1:] {
			more = append(more, g.category)
		}
		detail := f.detail
		if len(more) > 0 {
			detail += " (also: " + strings.Join(more, "; ") + ")"
		}
		s.byCategory[f.category] = append(s.byCategory[f.category], example{caseID, root, what, detail})
	}
	s.byKind[kind] = k
}

func (s *summary) print(w io.Writer, o options, work string, notes map[string]int) {
	fmt.Fprintf(w, "dshdiff: seed %d, %d stores (up to %d sessions each) in %s\n", o.seed, o.stores, o.sessions, work)
	var ns []string
	for n, c := range notes {
		ns = append(ns, fmt.Sprintf("%s %d", n, c))
	}
	slices.Sort(ns)
	fmt.Fprintf(w, "generated features: %s\n", strings.Join(ns, ", "))
	fmt.Fprintf(w, "cases: %d, agreeing: %d (of which %d differ only as expected), disagreeing: %d\n", s.cases, s.agree, s.expected, s.cases-s.agree)
	for _, kind := range []string{"candidates", "prepare"} {
		k := s.byKind[kind]
		fmt.Fprintf(w, "  %s: %d cases, %d agreeing\n", kind, k[0], k[1])
	}
	cats := make([]string, 0, len(s.byCategory))
	for c := range s.byCategory {
		cats = append(cats, c)
	}
	slices.SortFunc(cats, func(a, b string) int {
		ea, eb := strings.HasPrefix(a, expectedPrefix), strings.HasPrefix(b, expectedPrefix)
		if ea != eb {
			if ea {
				return 1
			}
			return -1
		}
		return len(s.byCategory[b]) - len(s.byCategory[a])
	})
	fmt.Fprintln(w, "disagreements by category:")
	for _, c := range cats {
		exs := s.byCategory[c]
		fmt.Fprintf(w, "%5d  %s\n", len(exs), c)
		for _, e := range exs[:min(o.examples, len(exs))] {
			fmt.Fprintf(w, "         %s (%s): %s\n           %s\n", e.caseID, e.root, e.what, e.detail)
		}
	}
}
