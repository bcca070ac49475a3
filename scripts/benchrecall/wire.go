package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/dsh-refls/dsh-refls/internal/lsptest"
)

// server is the real dsh-refls binary spoken to over pipes, as an editor
// does: Content-Length framed JSON-RPC on stdin and stdout.
type server struct {
	cmd  *exec.Cmd
	in   io.WriteCloser
	out  *bufio.Reader
	next int
	// lastByte is when the last byte of the latest frame was read, and
	// decoded how long decoding that frame took after it: a round trip
	// ends at lastByte (as in scripts/benche2e), decoding is the client's.
	lastByte time.Time
	decoded  time.Duration
}

// startServer starts bin over root with its caches under cacheHome; a
// godebug that is not "" is the server's GODEBUG.
func startServer(bin, root, cacheHome, logFile, godebug string) (*server, error) {
	cmd := exec.Command(bin, "--sessions-root", root, "--watch", "fsnotify", "--log-file", logFile)
	cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+cacheHome)
	if godebug != "" {
		cmd.Env = append(cmd.Env, "GODEBUG="+godebug)
	}
	cmd.Stderr = os.Stderr
	p, err := lsptest.StartPipes(cmd)
	if err != nil {
		return nil, err
	}
	return &server{cmd: cmd, in: p.In, out: p.Out}, nil
}

func (s *server) send(msg map[string]any) error {
	msg["jsonrpc"] = "2.0"
	body, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	if _, err := s.in.Write(lsptest.Frame(body)); err != nil {
		return fmt.Errorf("writing to the server: %w", err)
	}
	return nil
}

type frame struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func (s *server) readFrame() (frame, error) {
	body, err := lsptest.ReadFrameBody(s.out)
	if err != nil {
		return frame{}, fmt.Errorf("reading from the server: %w", err)
	}
	s.lastByte = time.Now()
	var f frame
	if err := json.Unmarshal(body, &f); err != nil {
		return frame{}, fmt.Errorf("decoding a frame: %w", err)
	}
	s.decoded = time.Since(s.lastByte)
	return f, nil
}

func (s *server) notify(method string, params any) error {
	return s.send(map[string]any{"method": method, "params": params})
}

// call sends a request and waits for its answer, answering requests of
// the server (progress tokens) on the way. The duration it returns runs
// from writing the request to reading the last byte of its answer;
// s.decoded then says what decoding the answer took after that.
func (s *server) call(method string, params any) (json.RawMessage, time.Duration, error) {
	s.next++
	id := s.next
	t0 := time.Now()
	if err := s.send(map[string]any{"id": id, "method": method, "params": params}); err != nil {
		return nil, 0, err
	}
	want := strconv.Itoa(id)
	for {
		f, err := s.readFrame()
		if err != nil {
			return nil, 0, err
		}
		if f.Method != "" {
			if len(f.ID) > 0 {
				if err := s.send(map[string]any{"id": f.ID, "result": nil}); err != nil {
					return nil, 0, err
				}
			}
			continue
		}
		if string(f.ID) != want {
			continue
		}
		d := s.lastByte.Sub(t0)
		if f.Error != nil {
			return nil, d, fmt.Errorf("%s: error %d: %s", method, f.Error.Code, f.Error.Message)
		}
		return f.Result, d, nil
	}
}

func (s *server) initialize(ws string) error {
	_, _, err := s.call("initialize", map[string]any{
		"processId": nil, "rootUri": "file://" + ws,
		"capabilities": map[string]any{"textDocument": map[string]any{"completion": map[string]any{
			"completionItem": map[string]any{"labelDetailsSupport": true, "documentationFormat": []string{"markdown"}}}}},
		"initializationOptions": map[string]any{"sessionId": "bench-none", "cwd": ws, "recallSearch": true},
	})
	if err != nil {
		return err
	}
	return s.notify("initialized", map[string]any{})
}

// recallStatus is the part of dsh/status the benchmark reads.
type recallStatus struct {
	SessionsIndexed int          `json:"sessionsIndexed"`
	Building        bool         `json:"building"`
	Recall          *recallStats `json:"recall"`
}

// recallStats are the recall index's figures in dsh/status.
type recallStats struct {
	Sessions     int       `json:"sessions"`
	Unindexed    int       `json:"unindexed"`
	TextBytes    int64     `json:"textBytes"`
	Projected    int       `json:"projected"`
	Pending      int       `json:"pending"`
	Synced       time.Time `json:"synced"`
	Revalidating bool      `json:"revalidating"`
}

// waitRecall polls dsh/status until the recall index has published a
// complete view (no session pending).
func (s *server) waitRecall(deadline time.Duration) (recallStatus, error) {
	return s.waitStatus("a complete recall index (no session pending)", deadline, func(r *recallStats) bool { return r.Pending == 0 })
}

// waitSearchable polls dsh/status until the recall index has published
// its first view, which during a first build holds the newest sessions
// read so far.
func (s *server) waitSearchable(deadline time.Duration) (recallStatus, error) {
	return s.waitStatus("the recall index's first view", deadline, func(*recallStats) bool { return true })
}

// waitRevalidated polls dsh/status until a recall index loaded from its
// stored copy has compared every session with its log. (Waiting for a
// view published after the loaded one waited forever when no log had
// changed: such a sync may publish nothing new.)
func (s *server) waitRevalidated(deadline time.Duration) (recallStatus, error) {
	return s.waitStatus("the loaded recall index to be revalidated against the logs", deadline,
		func(r *recallStats) bool { return !r.Revalidating && r.Pending == 0 })
}

// waitStatus polls dsh/status until the server reports a recall index that
// has published a view and for which done holds; past deadline it fails, naming what it waited for
// and the last status it saw.
func (s *server) waitStatus(what string, deadline time.Duration, done func(*recallStats) bool) (recallStatus, error) {
	t0 := time.Now()
	for {
		raw, _, err := s.call("dsh/status", map[string]any{})
		if err != nil {
			return recallStatus{}, fmt.Errorf("waiting for %s: %w", what, err)
		}
		var st recallStatus
		if err := json.Unmarshal(raw, &st); err != nil {
			return recallStatus{}, fmt.Errorf("dsh/status: %w", err)
		}
		if st.Recall != nil && !st.Recall.Synced.IsZero() && done(st.Recall) {
			return st, nil
		}
		if time.Since(t0) > deadline {
			return st, fmt.Errorf("gave up waiting for %s after %v; the last dsh/status said recall: %s", what, deadline, raw)
		}
		time.Sleep(5 * time.Millisecond) // the granularity of the warm-restart figure
	}
}

// cpu reads the CPU time (user and system) the server process used so
// far, from /proc (clock ticks of 10 ms); 0 where it cannot be read.
func (s *server) cpu() time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", s.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	// The command name may hold spaces: the fields follow its ')'.
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * 10 * time.Millisecond
}

// rss reads the resident set size and its peak, in bytes.
func (s *server) rss() (cur, peak int64) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.cmd.Process.Pid))
	if err != nil {
		return -1, -1
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		kb, _ := strconv.ParseInt(f[1], 10, 64)
		switch f[0] {
		case "VmRSS:":
			cur = kb << 10
		case "VmHWM:":
			peak = kb << 10
		}
	}
	return cur, peak
}

func (s *server) stop() {
	_, _, _ = s.call("shutdown", nil)
	_ = s.notify("exit", nil)
	_ = s.in.Close()
	done := make(chan struct{})
	go func() { _ = s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = s.cmd.Process.Kill()
		<-done
	}
}
