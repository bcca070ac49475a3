// Command benche2e measures completion end to end: the real dsh-refls
// binary over pipes, a sessions root and a workspace, queries typed one
// keystroke at a time (the first 20 characters of real titles). For each
// keystroke it times the round trip of dsh/candidates (the session half
// alone) and of textDocument/completion after a didChange (sessions and
// files in one list), and the same session query in process on a
// sessionref snapshot of the same root as the baseline, and prints p50/p99
// with their ratios to the baseline and to the bound (issue 15 items 1, 4).
//
//	go build -o /tmp/dsh-refls ./cmd/dsh-refls
//	go run ./scripts/benche2e --bin /tmp/dsh-refls --sessions-root R --workspace W [--titles 50]
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/dsh-refls/dsh-refls/internal/lsptest"

	"github.com/dsh-refls/dsh-refls/sessionref"
)

func main() {
	bin := flag.String("bin", "dsh-refls", "the dsh-refls binary")
	root := flag.String("sessions-root", "", "sessions root")
	ws := flag.String("workspace", "", "workspace (an empty directory for sessions only)")
	titles := flag.Int("titles", 50, "titles to type, 20 keystrokes each")
	sessionBound := flag.Duration("session-p99", time.Millisecond, "bound on the p99 of session-only queries")
	mixedBound := flag.Duration("mixed-p99", 10*time.Millisecond, "bound on the p99 of mixed completion")
	recallSearch := flag.String("recall-search", "", `"on" or "off" sets the server's recallSearch (body search, issue 13); empty keeps its default`)
	flag.Parse()
	if *recallSearch != "" && *recallSearch != "on" && *recallSearch != "off" {
		fmt.Fprintf(os.Stderr, "benche2e: --recall-search is on, off or empty, got %q\n", *recallSearch)
		os.Exit(2)
	}
	if err := run(*bin, *root, *ws, *titles, *sessionBound, *mixedBound, *recallSearch); err != nil {
		fmt.Fprintln(os.Stderr, "benche2e:", err)
		os.Exit(1)
	}
}

type conn struct {
	in  io.Writer
	out *bufio.Reader
}

func (c *conn) send(msg map[string]any) error {
	msg["jsonrpc"] = "2.0"
	body, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	_, err = c.in.Write(lsptest.Frame(body))
	return err
}

func (c *conn) recv() (map[string]json.RawMessage, error) {
	body, err := lsptest.ReadFrame(c.out)
	if err != nil {
		return nil, err
	}
	var m map[string]json.RawMessage
	return m, json.Unmarshal(body, &m)
}

func (c *conn) call(id int, method string, params any) (json.RawMessage, error) {
	if err := c.send(map[string]any{"id": id, "method": method, "params": params}); err != nil {
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

func pct(d []time.Duration, p float64) time.Duration {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	if len(s) == 0 {
		return 0
	}
	return s[min(len(s)-1, int(p*float64(len(s)-1)+0.5))]
}

func run(bin, root, ws string, titles int, sessionBound, mixedBound time.Duration, recallSearch string) error {
	ws, err := filepath.Abs(ws)
	if err != nil {
		return err
	}
	root, err = filepath.Abs(root)
	if err != nil {
		return err
	}
	// The baseline: the same queries on a snapshot in process.
	t0 := time.Now()
	ix := sessionref.NewIndex(root, sessionref.IndexOptions{})
	if err := ix.Build(context.Background(), nil); err != nil {
		return err
	}
	snap := ix.Snapshot()
	fmt.Printf("in-process index: %d sessions in %v\n", len(snap.Sessions), time.Since(t0).Round(time.Millisecond))
	rnd := rand.New(rand.NewSource(7))
	var queries [][]string // per title, its prefixes
	for k := 0; k < titles && len(snap.Sessions) > 0; k++ {
		title := []rune(snap.Sessions[rnd.Intn(len(snap.Sessions))].DisplayTitle())
		var qs []string
		for n := 1; n <= len(title) && n <= 20; n++ {
			q := string(title[:n])
			if strings.Contains(q, "/") {
				break // a slash makes a file query
			}
			qs = append(qs, q)
		}
		queries = append(queries, qs)
	}
	target := snap.Sessions[0]
	var base []time.Duration
	for _, qs := range queries {
		for _, q := range qs {
			s := time.Now()
			_, _, _ = snap.Candidates(sessionref.CandidateQuery{Query: q, TargetID: target.ID, TargetCwd: ws})
			base = append(base, time.Since(s))
		}
	}

	cmd := exec.Command(bin, "--sessions-root", root, "--watch", "off")
	cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+filepath.Join(os.TempDir(), "benche2e-cache"))
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting %s: %w", bin, err)
	}
	defer cmd.Process.Kill()
	c := &conn{in: in, out: bufio.NewReaderSize(out, 1<<20)}
	start := time.Now()
	if _, err := c.call(1, "initialize", map[string]any{"processId": nil, "rootUri": "file://" + ws, "capabilities": map[string]any{},
		"initializationOptions": initOptions(target.ID, ws, recallSearch)}); err != nil {
		return err
	}
	if err := c.send(map[string]any{"method": "initialized", "params": map[string]any{}}); err != nil {
		return err
	}
	var st struct {
		Building        bool `json:"building"`
		SessionsIndexed int  `json:"sessionsIndexed"`
		FilesIndexed    int  `json:"filesIndexed"`
	}
	id := 2
	for ; ; id++ {
		raw, err := c.call(id, "dsh/status", map[string]any{})
		if err != nil {
			return err
		}
		if err := json.Unmarshal(raw, &st); err != nil {
			return err
		}
		entries, _ := os.ReadDir(ws)
		if !st.Building && st.SessionsIndexed > 0 && (st.FilesIndexed > 0 || len(entries) == 0) {
			break
		}
		if time.Since(start) > 10*time.Minute {
			return errors.New("indexes not built within 10 minutes")
		}
		time.Sleep(100 * time.Millisecond)
	}
	fmt.Printf("server ready in %v: %d sessions, %d workspace files\n", time.Since(start).Round(time.Millisecond), st.SessionsIndexed, st.FilesIndexed)
	uri := "file://" + ws + "/message.md"
	if err := c.send(map[string]any{"method": "textDocument/didOpen", "params": map[string]any{"textDocument": map[string]any{
		"uri": uri, "languageId": "markdown", "version": 1, "text": ""}}}); err != nil {
		return err
	}
	var sessLat, mixedLat []time.Duration
	version := 1
	for _, qs := range queries {
		for _, q := range qs {
			id++
			s := time.Now()
			if _, err := c.call(id, "dsh/candidates", map[string]any{"query": q}); err != nil {
				return err
			}
			sessLat = append(sessLat, time.Since(s))
			if strings.ContainsAny(q, " \t") {
				continue // a blank ends an @ token: completion sees the word before it
			}
			version++
			text := "@" + q
			s = time.Now()
			if err := c.send(map[string]any{"method": "textDocument/didChange", "params": map[string]any{
				"textDocument":   map[string]any{"uri": uri, "version": version},
				"contentChanges": []map[string]any{{"text": text}}}}); err != nil {
				return err
			}
			id++
			if _, err := c.call(id, "textDocument/completion", map[string]any{"textDocument": map[string]any{"uri": uri},
				"position": map[string]any{"line": 0, "character": len(utf16(text))}}); err != nil {
				return err
			}
			mixedLat = append(mixedLat, time.Since(s))
		}
	}
	b50, b99 := pct(base, 0.5), pct(base, 0.99)
	s50, s99 := pct(sessLat, 0.5), pct(sessLat, 0.99)
	m50, m99 := pct(mixedLat, 0.5), pct(mixedLat, 0.99)
	r := func(a, b time.Duration) float64 { return float64(a) / float64(max(b, 1)) }
	fmt.Printf("baseline, sessionref query in process: %d keystrokes, p50 %v, p99 %v\n", len(base), b50, b99)
	fmt.Printf("dsh/candidates over pipes:   p50 %v (%.1f× baseline), p99 %v (%.1f× baseline) = %.2f× the bound %v\n",
		s50.Round(time.Microsecond), r(s50, b50), s99.Round(time.Microsecond), r(s99, b99), r(s99, sessionBound), sessionBound)
	fmt.Printf("didChange + completion:      p50 %v (%.1f× baseline), p99 %v (%.1f× baseline) = %.2f× the bound %v\n",
		m50.Round(time.Microsecond), r(m50, b50), m99.Round(time.Microsecond), r(m99, b99), r(m99, mixedBound), mixedBound)
	if raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", cmd.Process.Pid)); err == nil {
		for _, line := range strings.Split(string(raw), "\n") {
			if strings.HasPrefix(line, "VmRSS:") || strings.HasPrefix(line, "VmHWM:") {
				fmt.Printf("server %s\n", strings.Join(strings.Fields(line), " "))
			}
		}
	}
	_, _ = c.call(1<<30, "shutdown", nil)
	_ = c.send(map[string]any{"method": "exit"})
	return cmd.Wait()
}

// utf16 returns s as UTF-16 code units, for LSP positions.
func utf16(s string) []uint16 {
	var out []uint16
	for _, r := range s {
		if r >= 0x10000 {
			r -= 0x10000
			out = append(out, uint16(0xd800+(r>>10)), uint16(0xdc00+(r&0x3ff)))
			continue
		}
		out = append(out, uint16(r))
	}
	return out
}

// initOptions are the server's initializationOptions: the target session,
// its cwd and, when recallSearch is "on" or "off", that setting.
func initOptions(target, cwd, recallSearch string) map[string]any {
	opts := map[string]any{"sessionId": target, "cwd": cwd}
	if recallSearch != "" {
		opts["recallSearch"] = recallSearch == "on"
	}
	return opts
}
