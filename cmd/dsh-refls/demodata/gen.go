//go:build ignore

// gen writes the demo's sample session store: go generate ./cmd/dsh-refls
// runs it (see demo.go). The store is generated, never hand-edited.
package main

import (
	"fmt"
	"os"
	"time"

	"github.com/dsh-refls/dsh-refls/internal/dshgen"
)

// demoNow is the fixed clock of the generated store, so regenerating it
// gives the same bytes.
var demoNow = time.Date(2026, time.November, 1, 9, 0, 0, 0, time.UTC)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: go run gen.go DIR")
		os.Exit(2)
	}
	dir := os.Args[1]
	if err := os.RemoveAll(dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := dshgen.DemoStore(dir, demoNow); err != nil {
		fmt.Fprintln(os.Stderr, "generating the demo store:", err)
		os.Exit(1)
	}
}
