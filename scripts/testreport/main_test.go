package main

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"
)

func TestReport(t *testing.T) {
	in := strings.Join([]string{
		`{"Action":"run","Package":"p","Test":"TestA"}`,
		`{"Action":"output","Package":"p","Test":"TestA","Output":"=== RUN   TestA\n"}`,
		`{"Action":"pass","Package":"p","Test":"TestA","Elapsed":0.1}`,
		`{"Action":"output","Package":"p","Test":"TestNvim","Output":"    nvim_test.go:9: skipping: nvim is not installed\n"}`,
		`{"Action":"output","Package":"p","Test":"TestNvim","Output":"--- SKIP: TestNvim (0.00s)\n"}`,
		`{"Action":"skip","Package":"p","Test":"TestNvim"}`,
		`{"Action":"output","Package":"p","Test":"TestB","Output":"    b_test.go:3: got 1, want 2\n"}`,
		`{"Action":"fail","Package":"p","Test":"TestB"}`,
		`{"Action":"fail","Package":"p","Elapsed":0.3}`,
	}, "\n")
	var out bytes.Buffer
	code := report(strings.NewReader(in), &out, func(w io.Writer) { fmt.Fprintln(w, "took 3 s") })
	got := out.String()
	for _, want := range []string{
		"FAIL p",
		"p TestNvim: nvim_test.go:9: skipping: nvim is not installed",
		"--- FAIL p TestB",
		"got 1, want 2",
		"slowest tests (2 of 2):\n     0.1s p TestA\n     0.0s p TestB\n",
		"\ntook 3 s\n1 passed, 1 failed, 1 skipped\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("report lacks %q:\n%s", want, got)
		}
	}
	if code != 1 {
		t.Errorf("exit code %d with a failure, want 1", code)
	}

	out.Reset()
	if code := report(strings.NewReader(`{"Action":"pass","Package":"p","Test":"TestA"}`+"\n"+`{"Action":"pass","Package":"p"}`), &out, nil); code != 0 {
		t.Errorf("exit code %d for a passing run:\n%s", code, out.String())
	}
}
