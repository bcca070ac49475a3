package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"time"

	"github.com/dsh-refls/dsh-refls/internal/lsptest"
)

// server is the real dsh-refls binary spoken to over pipes, as an editor
// does: Content-Length framed JSON-RPC on stdin and stdout. Its Conn times
// each call: RoundTrip runs from writing the request to reading the last
// byte of its answer (as in scripts/benche2e), and Decoded is what
// decoding the answer took after that, the client's work.
type server struct {
	*lsptest.Conn
	cmd *exec.Cmd
	in  io.Closer
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
	return &server{Conn: lsptest.NewConn(p.In, p.Out), cmd: cmd, in: p.In}, nil
}

func (s *server) initialize(ws string) error {
	_, err := s.Call("initialize", map[string]any{
		"processId": nil, "rootUri": "file://" + ws,
		"capabilities": map[string]any{"textDocument": map[string]any{"completion": map[string]any{
			"completionItem": map[string]any{"labelDetailsSupport": true, "documentationFormat": []string{"markdown"}}}}},
		"initializationOptions": map[string]any{"sessionId": "bench-none", "cwd": ws, "recallSearch": true},
	})
	if err != nil {
		return err
	}
	return s.Notify("initialized", map[string]any{})
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
		raw, err := s.Call("dsh/status", map[string]any{})
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
	d, _ := lsptest.ProcCPU(s.cmd.Process.Pid)
	return d
}

// rss reads the resident set size and its peak, in bytes; -1 where they
// cannot be read.
func (s *server) rss() (cur, peak int64) {
	cur, err := lsptest.ProcStatusKB(s.cmd.Process.Pid, "VmRSS")
	if err != nil {
		return -1, -1
	}
	peak, err = lsptest.ProcStatusKB(s.cmd.Process.Pid, "VmHWM")
	if err != nil {
		return -1, -1
	}
	return cur << 10, peak << 10
}

func (s *server) stop() {
	_, _ = s.Call("shutdown", nil)
	_ = s.Notify("exit", nil)
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
