package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// initializeAndExit is a session that asks for dsh/status and then shuts
// the server down cleanly.
func initializeAndExit(t *testing.T) *bytes.Buffer {
	t.Helper()
	var in bytes.Buffer
	in.Write(frame(t, map[string]any{"id": 1, "method": "initialize", "params": map[string]any{"processId": nil, "capabilities": map[string]any{}}}))
	in.Write(frame(t, map[string]any{"method": "initialized", "params": map[string]any{}}))
	in.Write(frame(t, map[string]any{"id": 2, "method": "dsh/status", "params": map[string]any{}}))
	in.Write(frame(t, map[string]any{"id": 3, "method": "shutdown"}))
	in.Write(frame(t, map[string]any{"method": "exit"}))
	return &in
}

// answeredStatus reports whether stdout holds a result for dsh/status (id 2).
func answeredStatus(t *testing.T, stdout *bytes.Buffer) bool {
	t.Helper()
	frames, err := readFrames(stdout)
	if err != nil {
		t.Fatalf("stdout is not only frames: %v", err)
	}
	for _, f := range frames {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Result json.RawMessage `json:"result"`
		}
		if json.Unmarshal(f, &m) == nil && string(m.ID) == "2" && len(m.Result) > 0 {
			return true
		}
	}
	return false
}

// TestLogFileDirectoryIsMade is a fresh account: the log file's directory
// (Neovim's stdpath('cache'), ~/.cache for Emacs) does not exist yet. The
// server makes it, 0700, and logs there.
func TestLogFileDirectoryIsMade(t *testing.T) {
	home := t.TempDir()
	logFile := filepath.Join(home, ".cache", "nvim", "dsh-refls.log")
	cmd := exec.Command(binary, "--log-file", logFile, "--sessions-root", t.TempDir(), "--watch", "off", "--no-index-cache")
	cmd.Stdin = initializeAndExit(t)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := runWithTimeout(cmd, 20*time.Second); err != nil {
		t.Fatalf("dsh-refls with a log file in a missing directory: %v\nstderr:\n%s", err, stderr.String())
	}
	if !answeredStatus(t, &stdout) {
		t.Errorf("no dsh/status answer:\n%s", stdout.String())
	}
	data, err := os.ReadFile(logFile)
	if err != nil {
		t.Fatalf("the log file was not written: %v", err)
	}
	if !strings.Contains(string(data), "serving on stdio") {
		t.Errorf("the log file lacks the start line:\n%s", data)
	}
	info, err := os.Stat(filepath.Dir(logFile))
	if err != nil {
		t.Fatal(err)
	}
	if mode := info.Mode().Perm(); mode != 0o700 {
		t.Errorf("the log directory was made %v, want 0700", mode)
	}
}

// TestLogFileHomeIsExpanded: an editor passes `~/…` as written (Helix's
// args, a Neovim cmd table); the server writes under $HOME, not into a
// directory named "~" beside it.
func TestLogFileHomeIsExpanded(t *testing.T) {
	home, work := t.TempDir(), t.TempDir()
	cmd := exec.Command(binary, "--log-file", "~/logs/dsh-refls.log", "--sessions-root", "$HOME/sessions", "--watch", "off", "--no-index-cache")
	cmd.Dir = work
	cmd.Env = append(os.Environ(), "HOME="+home)
	cmd.Stdin = initializeAndExit(t)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := runWithTimeout(cmd, 20*time.Second); err != nil {
		t.Fatalf("dsh-refls: %v\nstderr:\n%s", err, stderr.String())
	}
	data, err := os.ReadFile(filepath.Join(home, "logs", "dsh-refls.log"))
	if err != nil {
		t.Fatalf("~/logs/dsh-refls.log was not written under $HOME: %v", err)
	}
	if !strings.Contains(string(data), filepath.Join(home, "sessions")) {
		t.Errorf("the start line does not name $HOME/sessions expanded:\n%s", data)
	}
	if _, err := os.Stat(filepath.Join(work, "~")); err == nil {
		t.Errorf("a directory named ~ was made in the working directory")
	}
}

// TestUnwritableLogFileFallsBackToStderr: a log file that cannot be made
// (its "directory" is a regular file) is no reason to refuse to serve; the
// log goes to stderr, saying why.
func TestUnwritableLogFileFallsBackToStderr(t *testing.T) {
	dir := t.TempDir()
	notDir := filepath.Join(dir, "file")
	if err := os.WriteFile(notDir, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, flag := range []string{"--log-file", "--rpc-trace"} {
		t.Run(flag, func(t *testing.T) {
			cmd := exec.Command(binary, flag, filepath.Join(notDir, "dsh-refls.log"), "--sessions-root", t.TempDir(), "--watch", "off", "--no-index-cache")
			cmd.Stdin = initializeAndExit(t)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := runWithTimeout(cmd, 20*time.Second); err != nil {
				t.Fatalf("dsh-refls refused to serve over %s: %v\nstderr:\n%s", flag, err, stderr.String())
			}
			if !answeredStatus(t, &stdout) {
				t.Errorf("no dsh/status answer:\n%s", stdout.String())
			}
			if !strings.Contains(stderr.String(), "WARN") || !strings.Contains(stderr.String(), filepath.Join(notDir, "dsh-refls.log")) {
				t.Errorf("stderr does not warn about %s naming the file:\n%s", flag, stderr.String())
			}
		})
	}
}
