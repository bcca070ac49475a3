// Command list prints the long tests of the module (top-level test
// functions whose body calls longtest.Require or longtest.Enabled) for scripts/long-tests.sh:
// first line a -run pattern matching exactly them, then one package path
// per line. It reads the *_test.go files under the current directory.
package main

import (
	"fmt"
	"os"

	"github.com/dsh-refls/dsh-refls/internal/longtest"
)

func main() {
	tests, err := longtest.Find(".")
	if err != nil {
		fmt.Fprintln(os.Stderr, "longtest list:", err)
		os.Exit(1)
	}
	if len(tests) == 0 {
		fmt.Fprintln(os.Stderr, "longtest list: no test calls longtest.Require")
		os.Exit(1)
	}
	fmt.Println(longtest.RunPattern(tests))
	for _, dir := range longtest.Packages(tests) {
		fmt.Println(dir)
	}
}
