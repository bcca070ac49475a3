//go:build linux

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/dsh-refls/dsh-refls/internal/dshgen"
	"github.com/dsh-refls/dsh-refls/sessionref/titles"
)

// longListSessions is enough sessions for a dsh/candidates answer of
// several hundred KB, which the server streams (server/encode.go).
const longListSessions = 1500

// TestBinaryStreamsALongCandidateList drives the real binary over real
// pipes with a store of longListSessions sessions: its output pipe is
// grown to 1 MiB, the complete dsh/candidates list, streamed as it is
// encoded, arrives as one frame of the length its header says (the
// editor's reader checks the framing) listing every session once, and the
// --rpc-trace records that answer whole.
func TestBinaryStreamsALongCandidateList(t *testing.T) {
	base := t.TempDir()
	store, ws := filepath.Join(base, "sessions"), filepath.Join(base, "ws")
	if err := os.Mkdir(ws, 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := dshgen.BenchStoreWith(context.Background(), store, dshgen.BenchConfig{
		Sessions: longListSessions, TargetBytes: longListSessions * 2048, Seed: 5}); err != nil {
		t.Fatal(err)
	}
	trace := filepath.Join(base, "trace.jsonl")
	p := startWire(t, "--sessions-root", store, "--rpc-trace", trace)
	p.initialize(ws, "")

	// An unprivileged process may ask for pipe-max-size at most; the
	// server asks for 1 MiB and leaves the pipe as it is when refused.
	if max := pipeMaxSize(t); max >= outputPipeBytes || os.Geteuid() == 0 {
		if got := pipeSize(t, p.cmd.Process.Pid); got != outputPipeBytes {
			t.Errorf("the output pipe holds %d bytes, want %d", got, outputPipeBytes)
		}
	} else {
		t.Logf("the pipe's size is not asserted: /proc/sys/fs/pipe-max-size is %d, below %d, for this unprivileged user", max, outputPipeBytes)
	}

	p.send(map[string]any{"id": "all", "method": "dsh/candidates", "params": map[string]any{"query": "", "limit": 2 * longListSessions}})
	a := p.expectResult("the complete list", `"all"`)
	if len(a.Result) < streamedOver {
		t.Fatalf("the answer is %d bytes: too short to be streamed", len(a.Result))
	}
	var list []titles.Candidate
	if err := json.Unmarshal(a.Result, &list); err != nil {
		t.Fatalf("the complete list does not decode: %v", err)
	}
	seen := map[string]bool{}
	for _, c := range list {
		if c.SessionID == "" || seen[c.SessionID] || !strings.HasPrefix(c.Mention, "@") {
			t.Fatalf("candidate %+v: empty, repeated or without its mention", c)
		}
		seen[c.SessionID] = true
	}
	if len(seen) != longListSessions {
		t.Errorf("%d sessions listed, want %d", len(seen), longListSessions)
	}
	p.shutdown()

	var traced []titles.Candidate
	if err := json.Unmarshal(tracedResult(t, trace, `"all"`), &traced); err != nil || !reflect.DeepEqual(traced, list) {
		t.Errorf("the trace records %d candidates of the streamed answer (%v), want all %d", len(traced), err, len(list))
	}
}

// streamedOver is the size over which the server streams a candidate list
// (server/custom.go: larger than lspwire.KeptAnswerBytes).
const streamedOver = 256 << 10

// pipeMaxSize is the largest pipe an unprivileged process may ask for.
func pipeMaxSize(t *testing.T) int {
	t.Helper()
	b, err := os.ReadFile("/proc/sys/fs/pipe-max-size")
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// pipeSize is the capacity of the pipe that is the standard output of the
// process pid, opened again through /proc.
func pipeSize(t *testing.T, pid int) int {
	t.Helper()
	f, err := os.OpenFile(fmt.Sprintf("/proc/%d/fd/1", pid), os.O_RDONLY|unix.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n, err := unix.FcntlInt(f.Fd(), unix.F_GETPIPE_SZ, 0)
	if err != nil {
		t.Fatalf("F_GETPIPE_SZ of the output: %v", err)
	}
	return n
}

// tracedResult is the result of the response to id that the trace file
// records; nil when it records none.
func tracedResult(t *testing.T, path, id string) json.RawMessage {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var line struct {
			Type    string `json:"type"`
			Message struct {
				ID     json.RawMessage `json:"id"`
				Result json.RawMessage `json:"result"`
			} `json:"message"`
		}
		if json.Unmarshal(sc.Bytes(), &line) != nil || line.Type != "send-response" || string(line.Message.ID) != id {
			continue
		}
		return line.Message.Result
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return nil
}
