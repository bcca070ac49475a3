// Command testreport reads `go test -json` output on stdin and prints what a
// person needs from a test run: one line per package, the full output of
// every failing test, every skipped test with its reason (so a test that
// skips because a tool is missing never passes silently), and a closing
// line "N passed, N failed, N skipped". It exits 1 when anything failed.
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
)

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
	os.Exit(report(os.Stdin, os.Stdout))
}

func report(in io.Reader, out io.Writer) int {
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
	fmt.Fprintf(out, "\n%d passed, %d failed, %d skipped\n", passed, len(failed), len(skipped))
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
