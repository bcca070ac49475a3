// Command benchmemory measures SPEC §5's memory bound: it starts the real
// dsh-refls binary over a sessions root and a workspace, waits until both
// indexes are built (dsh/status), and prints the server's RSS and peak RSS
// from /proc.
//
//	go build -o /tmp/dsh-refls ./cmd/dsh-refls
//	go run ./scripts/benchmemory --bin /tmp/dsh-refls --sessions-root R --workspace W
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

func main() {
	bin := flag.String("bin", "dsh-refls", "the dsh-refls binary")
	root := flag.String("sessions-root", "", "sessions root to index")
	ws := flag.String("workspace", "", "workspace to index")
	messageMB := flag.Int("large-message-mb", 0, "instead: the release scenario with a session of one message this large (MiB)")
	requestMB := flag.Int("large-request-mb", 0, "instead: the release scenario with a request this large (MiB)")
	check := flag.Bool("check", false, "with --large-*: exit 1 when a bound fails (CI's short form)")
	flag.Parse()
	var err error
	if *messageMB > 0 || *requestMB > 0 {
		err = runLarge(*bin, *messageMB, *requestMB, *check)
	} else {
		err = run(*bin, *root, *ws)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchmemory:", err)
		os.Exit(1)
	}
}

type conn struct {
	in  io.Writer
	out *bufio.Reader
}

func (c *conn) send(msg map[string]any) error {
	body, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(c.in, "Content-Length: %d\r\n\r\n%s", len(body), body)
	return err
}

func (c *conn) recv() (map[string]json.RawMessage, error) {
	length := -1
	for {
		line, err := c.out.ReadString('\n')
		if err != nil {
			return nil, err
		}
		line = strings.TrimSpace(line)
		if line == "" {
			break
		}
		if k, v, ok := strings.Cut(line, ":"); ok && strings.EqualFold(k, "Content-Length") {
			if length, err = strconv.Atoi(strings.TrimSpace(v)); err != nil {
				return nil, err
			}
		}
	}
	if length < 0 {
		return nil, errors.New("frame without Content-Length")
	}
	body := make([]byte, length)
	if _, err := io.ReadFull(c.out, body); err != nil {
		return nil, err
	}
	var m map[string]json.RawMessage
	return m, json.Unmarshal(body, &m)
}

// call sends a request and returns its result, skipping notifications and
// server requests.
func (c *conn) call(id int, method string, params any) (json.RawMessage, error) {
	if err := c.send(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params}); err != nil {
		return nil, err
	}
	for {
		m, err := c.recv()
		if err != nil {
			return nil, err
		}
		if _, isReq := m["method"]; isReq || string(m["id"]) != strconv.Itoa(id) {
			continue
		}
		if e, ok := m["error"]; ok {
			return nil, fmt.Errorf("%s: %s", method, e)
		}
		return m["result"], nil
	}
}

func run(bin, root, ws string) error {
	ws, err := filepath.Abs(ws)
	if err != nil {
		return err
	}
	cmd := exec.Command(bin, "--sessions-root", root, "--no-index-cache")
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting %s: %w", bin, err)
	}
	defer cmd.Process.Kill()
	c := &conn{in: in, out: bufio.NewReader(out)}
	start := time.Now()
	if _, err := c.call(1, "initialize", map[string]any{"processId": nil, "rootUri": "file://" + ws, "capabilities": map[string]any{}}); err != nil {
		return err
	}
	if err := c.send(map[string]any{"jsonrpc": "2.0", "method": "initialized", "params": map[string]any{}}); err != nil {
		return err
	}
	var st struct {
		Building        bool `json:"building"`
		SessionsIndexed int  `json:"sessionsIndexed"`
		FilesIndexed    int  `json:"filesIndexed"`
	}
	for id := 2; ; id++ {
		raw, err := c.call(id, "dsh/status", map[string]any{})
		if err != nil {
			return err
		}
		if err := json.Unmarshal(raw, &st); err != nil {
			return err
		}
		if !st.Building && st.SessionsIndexed > 0 && st.FilesIndexed > 0 {
			break
		}
		if time.Since(start) > 5*time.Minute {
			return errors.New("indexes not built within 5 minutes")
		}
		time.Sleep(100 * time.Millisecond)
	}
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", cmd.Process.Pid))
	if err != nil {
		return err
	}
	var rss, hwm string
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			rss = strings.TrimSpace(v)
		}
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			hwm = strings.TrimSpace(v)
		}
	}
	fmt.Printf("both indexes built in %v: %d sessions, %d workspace files; server RSS %s, peak RSS %s (SPEC §5: ≤ 150 MB)\n",
		time.Since(start).Round(100*time.Millisecond), st.SessionsIndexed, st.FilesIndexed, rss, hwm)
	_, _ = c.call(1<<20, "shutdown", nil)
	_ = c.send(map[string]any{"jsonrpc": "2.0", "method": "exit"})
	return cmd.Wait()
}
