// Command dsh-refls is the dsh reference language server: it gives editors
// and host programs `@` completion of workspace files and dsh sessions,
// hover previews, diagnostics and dsh/prepare over LSP on stdin/stdout.
//
// Run `dsh-refls --help` for the commands and flags, and
// `go run ./cmd/dsh-refls demo` to see it work on a sample store.
package main

import (
	"io"
	"os"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run dispatches a command line and returns the exit code.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		switch args[0] {
		case "candidates":
			return runCandidates(args[1:], stdout, stderr)
		case "search":
			return runSearch(args[1:], stdout, stderr)
		case "prepare":
			return runPrepare(args[1:], stdout, stderr)
		case "index":
			return runIndex(args[1:], stdout, stderr)
		case "demo":
			return runDemo(args[1:], stdout, stderr)
		case "help":
			return runServe([]string{"--help"}, stdin, stdout, stderr)
		case "serve":
			return runServe(args[1:], stdin, stdout, stderr)
		}
	}
	return runServe(args, stdin, stdout, stderr)
}
