// Command testreport reads `go test -json` output on stdin and prints what a
// person needs from a test run: one line per package, the full output of
// every failing test, every skipped test with its reason (so a test that
// skips because a tool is missing never passes silently), and a closing
// line "N passed, N failed, N skipped". Before that line it lists the
// slowest tests and says how long the run took (from testreport's start to
// the end of its input); with $CI_STEP set that line reads
// "ci: $CI_STEP took N s", as .ci/run's other steps do. It exits 1 when
// anything failed.
//
//	go test -race -json ./... | go run ./scripts/testreport
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"
)

// slowestShown is how many of the slowest top-level tests the report lists.
const slowestShown = 10

// event is one line of `go test -json` (cmd/test2json).
type event struct {
	Action  string
	Package string
	Test    string
	Output  string
	Elapsed float64
}

type testKey struct{ pkg, test string }

func main() {
	start := time.Now()
	os.Exit(report(os.Stdin, os.Stdout, func(out io.Writer) {
		took := int(time.Since(start).Round(time.Second) / time.Second)
		if step := os.Getenv("CI_STEP"); step != "" {
			fmt.Fprintf(out, "ci: %s took %d s\n", step, took)
		} else {
			fmt.Fprintf(out, "testreport: the run took %d s\n", took)
		}
	}))
}

// timed is a passed or failed top-level test and its duration.
type timed struct {
	testKey
	elapsed float64
}

// report prints the summary of the events read from in; beforeCount, when
// not nil, prints just before the closing count line.
func report(in io.Reader, out io.Writer, beforeCount func(io.Writer)) int {
	var slow []timed
	outputs := map[testKey][]string{}
	var skipped, failed []testKey
	passed := 0
	failedPkgs := 0
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if err := json.Unmarshal(line, &e); err != nil || e.Action == "" {
			fmt.Fprintln(out, string(line)) // not an event: a build error or a panic before the tests
			continue
		}
		k := testKey{e.Package, e.Test}
		switch e.Action {
		case "output", "build-output":
			if e.Action == "build-output" {
				fmt.Fprint(out, e.Output)
			}
			outputs[k] = append(outputs[k], e.Output)
		case "pass":
			if e.Test != "" && !strings.Contains(e.Test, "/") {
				slow = append(slow, timed{k, e.Elapsed})
			}
			if e.Test != "" {
				passed++
				delete(outputs, k)
			} else {
				fmt.Fprintf(out, "ok   %s %.1fs\n", e.Package, e.Elapsed)
			}
		case "skip":
			if e.Test != "" {
				skipped = append(skipped, k)
			} else {
				fmt.Fprintf(out, "--   %s (no tests)\n", e.Package)
			}
		case "fail", "build-fail":
			if e.Test != "" {
				failed = append(failed, k)
				if !strings.Contains(e.Test, "/") {
					slow = append(slow, timed{k, e.Elapsed})
				}
				continue
			}
			failedPkgs++
			fmt.Fprintf(out, "FAIL %s\n", e.Package)
			for _, o := range outputs[k] {
				fmt.Fprint(out, "     ", o)
			}
		}
	}
	if err := sc.Err(); err != nil {
		fmt.Fprintf(out, "testreport: reading go test output: %v\n", err)
		return 1
	}
	if len(slow) > 0 {
		sort.SliceStable(slow, func(i, j int) bool { return slow[i].elapsed > slow[j].elapsed })
		n := min(len(slow), slowestShown)
		fmt.Fprintf(out, "\nslowest tests (%d of %d):\n", n, len(slow))
		for _, s := range slow[:n] {
			fmt.Fprintf(out, "  %6.1fs %s %s\n", s.elapsed, s.pkg, s.test)
		}
	}
	if len(skipped) > 0 {
		fmt.Fprintln(out, "\nskipped (with the reason each test gave):")
		sort.Slice(skipped, func(i, j int) bool { return skipped[i].pkg+skipped[i].test < skipped[j].pkg+skipped[j].test })
		for _, k := range skipped {
			fmt.Fprintf(out, "  %s %s: %s\n", k.pkg, k.test, skipReason(outputs[k]))
		}
	}
	for _, k := range failed {
		fmt.Fprintf(out, "\n--- FAIL %s %s\n", k.pkg, k.test)
		for _, o := range outputs[k] {
			fmt.Fprint(out, "    ", o)
		}
	}
	fmt.Fprintln(out)
	if beforeCount != nil {
		beforeCount(out)
	}
	fmt.Fprintf(out, "%d passed, %d failed, %d skipped\n", passed, len(failed), len(skipped))
	if len(failed) > 0 || failedPkgs > 0 {
		return 1
	}
	return 0
}

// skipReason picks the message a skipped test logged.
func skipReason(lines []string) string {
	var msgs []string
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "=== ") || strings.HasPrefix(t, "--- SKIP") {
			continue
		}
		msgs = append(msgs, t)
	}
	if len(msgs) == 0 {
		return "(no reason given)"
	}
	return strings.Join(msgs, " / ")
}
