package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/dsh-refls/dsh-refls/internal/dshgen"
	"github.com/dsh-refls/dsh-refls/sessionref/prepare"
	"github.com/dsh-refls/dsh-refls/sessionref/titles"
)

// benchOptions are the settings of the comparison benchmark.
type benchOptions struct {
	sizes        []int
	sessionBytes int64
	rounds       int
	budget       time.Duration
	deadline     time.Duration
	dir          string
}

// benchCase names one timed case and what it is.
type benchCase struct {
	id, what string
}

// benchmark times dsh's listCandidates and prepare against dsh-refls' on the
// same generated store, for each store size, and prints the medians side by
// side with their ratio.
func benchmark(ctx context.Context, o options, b benchOptions, stdout io.Writer) error {
	fmt.Fprintf(stdout, "dsh: %s (JSONL persistence, session-query, session-reference; dsh 0.1.x folds every log per query), Node %s\n", o.dshCodeName(), nodeVersion())
	fmt.Fprintf(stdout, "dsh-refls: sessionref in-process, each round on a freshly built title index (no query cache); medians of %d rounds after one warm-up\n", b.rounds)
	fmt.Fprintf(stdout, "dsh: medians of up to %d runs per case after one warm-up, within %s per case; a run slower than 1 s counts from the first; a call still running after %s is cancelled\n", b.rounds, b.budget, b.deadline)
	for _, n := range b.sizes {
		if err := benchSize(ctx, o, b, n, stdout); err != nil {
			return fmt.Errorf("%d sessions: %w", n, err)
		}
	}
	return nil
}

func nodeVersion() string {
	out, err := exec.Command("node", "--version").Output()
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(out))
}

// benchStore generates (or reuses) a raw store of n sessions and returns its
// root and a few of its titles.
func benchStore(ctx context.Context, b benchOptions, n int) (string, map[string]string, int64, error) {
	dir := filepath.Join(b.dir, fmt.Sprintf("store-%d-%d", n, b.sessionBytes))
	root := filepath.Join(dir, "sessions")
	meta := filepath.Join(dir, "titles.json")
	var saved struct {
		Titles    map[string]string `json:"titles"`
		DiskBytes int64             `json:"diskBytes"`
	}
	if raw, err := os.ReadFile(meta); err == nil && json.Unmarshal(raw, &saved) == nil {
		return root, saved.Titles, saved.DiskBytes, nil
	}
	if err := os.RemoveAll(dir); err != nil {
		return "", nil, 0, err
	}
	// Raw logs only: dsh 0.1.1 reads one encoding per root.
	rep, err := dshgen.BenchStoreWith(ctx, root, dshgen.BenchConfig{Sessions: n, TargetBytes: int64(n) * b.sessionBytes, Seed: 1})
	if err != nil {
		return "", nil, 0, err
	}
	saved.Titles, saved.DiskBytes = rep.Titles, rep.DiskBytes
	raw, err := json.Marshal(saved)
	if err != nil {
		return "", nil, 0, err
	}
	return root, rep.Titles, rep.DiskBytes, os.WriteFile(meta, raw, 0o644)
}

func benchSize(ctx context.Context, o options, b benchOptions, n int, stdout io.Writer) error {
	root, titles, disk, err := benchStore(ctx, b, n)
	if err != nil {
		return err
	}
	ids := make([]string, 0, len(titles))
	for id := range titles {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	if len(ids) < 3 {
		return fmt.Errorf("the bench store reported %d titles, need 3", len(ids))
	}
	word := strings.ToLower(strings.Fields(titles[ids[0]])[1])
	sc := storeCases{Root: root, Compression: "none", Target: target{ID: "bench-target"}}
	sc.Candidates = []candidateCase{
		{ID: "candidates-empty", Query: "", Limit: 50},
		{ID: "candidates-word", Query: word, Limit: 50},
		{ID: "candidates-id", Query: ids[1][:6], Limit: 50},
	}
	sc.Prepares = []prepareCase{
		{ID: "prepare-1", Text: "see @[a](" + uriOf(ids[0]) + ")", MaxReferenceBytes: 65536},
		{ID: "prepare-3", Text: "@[a](" + uriOf(ids[0]) + ") @[b](" + uriOf(ids[1]) + ") @[c](" + uriOf(ids[2]) + ")", MaxReferenceBytes: 65536},
	}
	cases := []benchCase{
		{"candidates-empty", `candidates, empty query ("@")`},
		{"candidates-word", fmt.Sprintf("candidates, query %q", word)},
		{"candidates-id", fmt.Sprintf("candidates, query %q (id prefix)", ids[1][:6])},
		{"prepare-1", "prepare, 1 reference, 64 KiB budget"},
		{"prepare-3", "prepare, 3 references, 64 KiB budget"},
	}
	manifestPath := filepath.Join(b.dir, fmt.Sprintf("bench-%d.json", n))
	raw, err := json.Marshal(struct {
		Stores []storeCases `json:"stores"`
	}{[]storeCases{sc}})
	if err != nil {
		return err
	}
	if err := os.WriteFile(manifestPath, raw, 0o644); err != nil {
		return err
	}
	dsh, aborted, err := runDriverBench(ctx, o, manifestPath, b)
	if err != nil {
		return err
	}
	refls, build, err := reflsBench(ctx, sc, b.rounds)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\n%d sessions, %.1f MB of raw logs (%s); dsh-refls cold index build %s\n", n, float64(disk)/1e6, root, round(build))
	fmt.Fprintf(stdout, "  %-44s %12s %12s %10s\n", "", "dsh", "dsh-refls", "dsh ÷ refls")
	for _, c := range cases {
		d, r := median(dsh[c.id]), median(refls[c.id])
		if a, ok := aborted[c.id]; ok && len(dsh[c.id]) == 0 {
			fmt.Fprintf(stdout, "  %-44s %12s %12s %9s (dsh cancelled at its deadline)\n", c.what, "> "+round(a), round(r), fmt.Sprintf("> %.0f×", float64(a)/float64(max(r, 1))))
			continue
		}
		fmt.Fprintf(stdout, "  %-44s %12s %12s %9.0f×   (dsh %d samples)\n", c.what, round(d), round(r), float64(d)/float64(max(r, 1)), len(dsh[c.id]))
	}
	return nil
}

// runDriverBench times the cases through dsh's code.
func runDriverBench(ctx context.Context, o options, manifestPath string, b benchOptions) (map[string][]time.Duration, map[string]time.Duration, error) {
	cmd, err := driverCommand(ctx, o, "--bench",
		fmt.Sprint(b.rounds), fmt.Sprint(b.budget.Milliseconds()), fmt.Sprint(b.deadline.Milliseconds()), manifestPath)
	if err != nil {
		return nil, nil, err
	}
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, nil, fmt.Errorf("running dsh's code: %w", err)
	}
	var res struct {
		Stores []struct {
			Timings map[string][]float64 `json:"timings"`
			Aborted map[string]float64   `json:"aborted"`
		} `json:"stores"`
	}
	if err := json.Unmarshal(out, &res); err != nil || len(res.Stores) != 1 {
		return nil, nil, fmt.Errorf("decoding the driver's timings: %v", err)
	}
	ms := func(m float64) time.Duration { return time.Duration(m * float64(time.Millisecond)) }
	got := map[string][]time.Duration{}
	for id, samples := range res.Stores[0].Timings {
		for _, m := range samples {
			got[id] = append(got[id], ms(m))
		}
	}
	aborted := map[string]time.Duration{}
	for id, m := range res.Stores[0].Aborted {
		aborted[id] = ms(m)
	}
	return got, aborted, nil
}

// reflsBench times the cases through sessionref, after one warm-up round,
// and returns the cold index build time too. Every round queries a freshly
// built index, so no query is answered from the snapshot's cache of recent
// queries.
func reflsBench(ctx context.Context, sc storeCases, rounds int) (map[string][]time.Duration, time.Duration, error) {
	var build time.Duration
	got := map[string][]time.Duration{}
	for r := 0; r <= rounds; r++ {
		start := time.Now()
		ix := titles.NewIndex(sc.Root, titles.IndexOptions{})
		if err := ix.Build(ctx, nil); err != nil {
			return nil, 0, err
		}
		if r == 0 {
			build = time.Since(start)
		}
		snap := ix.Snapshot()
		for _, c := range sc.Candidates {
			t := time.Now()
			if _, _, err := snap.Candidates(titles.CandidateQuery{Query: c.Query, TargetID: sc.Target.ID, Limit: c.Limit}); err != nil {
				return nil, 0, err
			}
			if r > 0 {
				got[c.ID] = append(got[c.ID], time.Since(t))
			}
		}
		for _, c := range sc.Prepares {
			t := time.Now()
			if _, err := prepare.PrepareText(ctx, snap, sc.Target.ID, c.Text, prepare.ModeReplace, nil, prepare.Limits{MaxReferenceBytes: c.MaxReferenceBytes}); err != nil {
				return nil, 0, err
			}
			if r > 0 {
				got[c.ID] = append(got[c.ID], time.Since(t))
			}
		}
	}
	return got, build, nil
}

func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// round prints a duration with three significant digits.
func round(d time.Duration) string {
	switch {
	case d >= time.Second:
		return d.Round(10 * time.Millisecond).String()
	case d >= time.Millisecond:
		return d.Round(10 * time.Microsecond).String()
	case d >= time.Microsecond:
		return d.Round(100 * time.Nanosecond).String()
	}
	return d.String()
}
