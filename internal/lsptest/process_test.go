package lsptest

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// echoChildEnv makes the test binary, started by TestStartPipes, a child
// that writes back every frame it reads (echoFrames) instead of running
// the tests.
const echoChildEnv = "LSPTEST_ECHO_CHILD"

// echoFrames copies frames from stdin to stdout, reframed, until stdin
// ends; it returns the child's exit code.
func echoFrames() int {
	in := bufio.NewReader(os.Stdin)
	for {
		body, err := ReadFrame(in)
		if errors.Is(err, ErrNoFrame) {
			return 0
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		if _, err := os.Stdout.Write(Frame(body)); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
}

// TestStartPipes starts this test binary as an echoing child: what is
// written to Pipes.In comes back on Pipes.Out, and closing In ends the
// child with a clean end of output.
func TestStartPipes(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), echoChildEnv+"=1")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	p, err := StartPipes(cmd)
	if err != nil {
		t.Fatal(err)
	}
	for _, body := range []string{`{"jsonrpc":"2.0","method":"a"}`, `{"jsonrpc":"2.0","id":1,"result":"é<"}`} {
		if _, err := p.In.Write(Frame([]byte(body))); err != nil {
			t.Fatal(err)
		}
		got, err := ReadFrame(p.Out)
		if err != nil {
			t.Fatalf("reading the echo of %s: %v (child stderr: %s)", body, err, stderr.String())
		}
		if string(got) != body {
			t.Errorf("echo %s, want %s", got, body)
		}
	}
	if err := p.In.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFrame(p.Out); !errors.Is(err, ErrNoFrame) {
		t.Errorf("after closing stdin: %v, want the end of output", err)
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("child: %v (stderr: %s)", err, stderr.String())
	}
}

// TestStartPipesReportsStartFailure: a command that cannot start is an
// error naming it, not pipes to nothing.
func TestStartPipesReportsStartFailure(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no-such-server")
	_, err := StartPipes(exec.Command(missing))
	if err == nil || !strings.Contains(err.Error(), "starting "+missing) {
		t.Fatalf("StartPipes of a missing binary: %v, want an error starting %s", err, missing)
	}
}
