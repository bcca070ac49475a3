package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dsh-refls/dsh-refls/internal/lsptest"
	"github.com/dsh-refls/dsh-refls/internal/testfixtures"
	"go.uber.org/goleak"
)

// binary is the dsh-refls binary built once for the black-box tests.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "dsh-refls-bin")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "dsh-refls")
	build := exec.Command("go", "build", "-o", binary, ".")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building dsh-refls:", err)
		os.Exit(1)
	}
	code := m.Run()
	// The demo runs the server in-process; nothing of it may outlive it.
	if err := goleak.Find(); code == 0 && err != nil {
		fmt.Fprintln(os.Stderr, "goroutines left behind:", err)
		code = 1
	}
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// fixturesRoot returns the shared raw fixtures store or skips.
func fixturesRoot(t *testing.T) string {
	t.Helper()
	return filepath.Join(testfixtures.Dir(t), "raw", "sessions")
}

// frame encodes one JSON-RPC message with its header.
func frame(t testing.TB, msg map[string]any) []byte {
	t.Helper()
	b, err := lsptest.FrameMessage(msg)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// readFrames parses r strictly as a sequence of Content-Length frames until
// EOF; any other byte is an error.
func readFrames(r io.Reader) ([]json.RawMessage, error) {
	br := bufio.NewReader(r)
	var out []json.RawMessage
	for {
		body, err := lsptest.ReadFrame(br)
		if errors.Is(err, lsptest.ErrNoFrame) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, body)
	}
}

func TestStdoutCarriesOnlyFrames(t *testing.T) {
	root := fixturesRoot(t)
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "notes.md"), []byte("hi"), 0o644); err != nil {
		t.Fatal(err)
	}
	var in bytes.Buffer
	in.Write(frame(t, map[string]any{"id": 1, "method": "initialize", "params": map[string]any{
		"processId": nil, "rootUri": "file://" + ws, "capabilities": map[string]any{},
		"initializationOptions": map[string]any{"sessionId": "228b7b82-84ed-49b7-a567-981c03b28c77", "cwd": "/home/dev/alpha"}}}))
	in.Write(frame(t, map[string]any{"method": "initialized", "params": map[string]any{}}))
	in.Write(frame(t, map[string]any{"method": "textDocument/didOpen", "params": map[string]any{"textDocument": map[string]any{
		"uri": "file:///m.md", "languageId": "markdown", "version": 1, "text": "😀 @no"}}}))
	in.Write(frame(t, map[string]any{"id": 2, "method": "textDocument/completion", "params": map[string]any{
		"textDocument": map[string]any{"uri": "file:///m.md"}, "position": map[string]any{"line": 0, "character": 6}}}))
	in.Write(frame(t, map[string]any{"id": 3, "method": "dsh/status", "params": map[string]any{}}))
	in.Write(frame(t, map[string]any{"id": 4, "method": "shutdown"}))
	in.Write(frame(t, map[string]any{"method": "exit"}))

	cmd := exec.Command(binary, "--log-level", "debug", "--sessions-root", root, "--watch", "off")
	cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+t.TempDir())
	cmd.Stdin = &in
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := runWithTimeout(cmd, 20*time.Second); err != nil {
		t.Fatalf("dsh-refls: %v\nstderr:\n%s", err, stderr.String())
	}
	frames, err := readFrames(&stdout)
	if err != nil {
		t.Fatalf("stdout is not only frames: %v\nstdout:\n%s", err, stdout.String())
	}
	ids := map[string]bool{}
	for _, f := range frames {
		var m struct {
			ID    json.RawMessage `json:"id"`
			Error json.RawMessage `json:"error"`
		}
		_ = json.Unmarshal(f, &m)
		if len(m.ID) > 0 {
			ids[string(m.ID)] = true
			if len(m.Error) > 0 {
				t.Errorf("response %s is an error: %s", m.ID, m.Error)
			}
		}
	}
	for _, id := range []string{"1", "2", "3", "4"} {
		if !ids[id] {
			t.Errorf("no response to %s among %d frames:\n%s\nstderr:\n%s", id, len(frames), stdout.String(), stderr.String())
		}
	}
	if !strings.Contains(stderr.String(), "DEBUG") {
		t.Errorf("debug logging produced nothing on stderr:\n%s", stderr.String())
	}
}

// runWithTimeout runs cmd and fails if it does not exit in time; a non-zero
// exit is an error.
func runWithTimeout(cmd *exec.Cmd, d time.Duration) error {
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(d):
		// SIGQUIT makes the Go runtime print every goroutine to stderr.
		_ = cmd.Process.Signal(syscall.SIGQUIT)
		select {
		case <-done:
		case <-time.After(2 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		return fmt.Errorf("timed out after %s", d)
	}
}

func TestExitCodeWithoutShutdown(t *testing.T) {
	var in bytes.Buffer
	in.Write(frame(t, map[string]any{"id": 1, "method": "initialize", "params": map[string]any{"processId": nil, "capabilities": map[string]any{}}}))
	in.Write(frame(t, map[string]any{"method": "exit"}))
	cmd := exec.Command(binary, "--sessions-root", t.TempDir(), "--watch", "off", "--no-index-cache")
	cmd.Stdin = &in
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := runWithTimeout(cmd, 20*time.Second)
	var exitErr *exec.ExitError
	if !asExit(err, &exitErr) || exitErr.ExitCode() != 1 {
		t.Fatalf("exit without shutdown: %v, want exit code 1\n%s", err, stderr.String())
	}
}

func asExit(err error, target **exec.ExitError) bool {
	e, ok := err.(*exec.ExitError)
	if ok {
		*target = e
	}
	return ok
}

func TestVersionAndHelp(t *testing.T) {
	tests := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--version"}, 0, "dsh-refls "},
		{[]string{"--help"}, 0, "--sessions-root"},
		{[]string{"help"}, 0, "demo"},
		{[]string{"--watch", "sometimes"}, 2, "--watch must be"},
		{[]string{"--bogus"}, 2, "--help"},
		{[]string{"--stdio", "--clientProcessId=42", "--version"}, 0, "dsh-refls "},
	}
	for _, tt := range tests {
		var stdout, stderr bytes.Buffer
		code := run(tt.args, strings.NewReader(""), &stdout, &stderr)
		if code != tt.code || !strings.Contains(stdout.String()+stderr.String(), tt.want) {
			t.Errorf("%v: code %d, output %q; want code %d containing %q", tt.args, code, stdout.String()+stderr.String(), tt.code, tt.want)
		}
	}
}
