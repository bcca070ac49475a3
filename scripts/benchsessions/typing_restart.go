package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/dsh-refls/dsh-refls/internal/lsptest"
)

// typedWords are what the typing run types after `@`, letter by letter:
// words of the generated titles and a few that match nothing.
var typedWords = []string{"rate", "login", "fix", "billing", "migrate", "cache", "deploy", "test", "zzq", "api"}

// typingRestart is one run of the issue 31 scenario: a server runs over
// the store and the typing run types queries queries at `@`, one
// completion per letter; it shuts down cleanly (shutdown, exit); then the
// server starts again over what the first one left, and the complete
// candidate list (every session the first server indexed) is polled for
// from the process start.
type typingRestart struct {
	// sessions is how many sessions the first server indexed.
	sessions int
	// firstAnswer and complete are from the second process's start to its
	// first `@` listing sessions and to its first dsh/candidates listing
	// every session.
	firstAnswer, complete time.Duration
	// listCall is how long that complete dsh/candidates call took.
	listCall time.Duration
}

// reportTypingRestarts runs the scenario runs times for each of bins
// (a baseline first, when there are two: the runs take turns), each run in
// a fresh user cache dir, and prints the medians, with B/A ratios.
func reportTypingRestarts(bins []string, root string, runs, queries int, bound time.Duration) error {
	first := make([][]time.Duration, len(bins))
	complete := make([][]time.Duration, len(bins))
	call := make([][]time.Duration, len(bins))
	sessions := 0
	for i := 0; i < runs; i++ {
		for k, bin := range bins {
			r, err := oneTypingRestart(bin, root, queries)
			if err != nil {
				return fmt.Errorf("typing run %d of %s: %w", i+1, bin, err)
			}
			if r.firstAnswer > 0 {
				first[k] = append(first[k], r.firstAnswer)
			}
			complete[k], call[k] = append(complete[k], r.complete), append(call[k], r.listCall)
			sessions = r.sessions
		}
	}
	for k, bin := range bins {
		c := median(complete[k])
		// The poll asks `@` first, then dsh/candidates, which waits for the
		// restored index: when the first `@` came too early to list sessions,
		// the complete list answered before `@` was asked again.
		firstSeen := fmt.Sprintf("first @ listing sessions after %v (median of %d)", median(first[k]).Round(time.Millisecond), len(first[k]))
		if len(first[k]) == 0 {
			firstSeen = "first @ listing sessions not seen before the complete list"
		}
		label := ""
		if len(bins) > 1 {
			label = fmt.Sprintf(" (%s)", []string{"A, baseline", "B"}[k])
		}
		fmt.Printf("restart after %d typed queries and a clean shutdown%s: %s; all %d sessions listed by dsh/candidates after %v (%.2f× the bound %v; that call took %v); medians of %d, from process start (%s)\n",
			queries, label, firstSeen, sessions, c.Round(time.Millisecond), ratio(c, bound), bound, median(call[k]).Round(time.Millisecond), runs, bin)
	}
	if len(bins) > 1 {
		fmt.Printf("restart after typing B/A: complete list %.2f×, that call %.2f× (interleaved, same minute)\n",
			ratio(median(complete[1]), median(complete[0])), ratio(median(call[1]), median(call[0])))
	}
	return nil
}

func oneTypingRestart(bin, root string, queries int) (typingRestart, error) {
	var r typingRestart
	home, err := os.MkdirTemp("", "benchsessions-typing-")
	if err != nil {
		return r, err
	}
	defer os.RemoveAll(home)
	ws := filepath.Join(home, "workspace")
	if err := os.Mkdir(ws, 0o700); err != nil {
		return r, err
	}
	env := append(os.Environ(), "XDG_CACHE_HOME="+filepath.Join(home, "cache"), "HOME="+home)
	// The first server starts from what `dsh-refls index` stored, as a
	// user's would from yesterday's cache.
	idx := exec.Command(bin, "index", "--sessions-root", root, "--quiet")
	idx.Env, idx.Stderr = env, os.Stderr
	if err := idx.Run(); err != nil {
		return r, fmt.Errorf("%s index: %w", bin, err)
	}
	n, err := typingRun(bin, root, ws, env, queries)
	if err != nil {
		return r, err
	}
	r.sessions = n
	first, complete, call, err := completeListAfterStart(bin, root, ws, env, n)
	r.firstAnswer, r.complete, r.listCall = first, complete, call
	return r, err
}

// typingRun starts the server, waits for its index to be built, types
// queries queries and shuts it down cleanly; it returns how many sessions
// the index held.
func typingRun(bin, root, ws string, env []string, queries int) (int, error) {
	s, err := startServer(bin, root, ws, env)
	if err != nil {
		return 0, err
	}
	defer s.kill()
	sessions, err := s.waitBuilt(5 * time.Minute)
	if err != nil {
		return 0, err
	}
	version := 1
	for typed := 0; typed < queries; {
		for _, w := range typedWords {
			for k := 1; k <= len(w) && typed < queries; k++ {
				version++
				text := "@" + w[:k]
				if err := s.c.Notify("textDocument/didChange", map[string]any{
					"textDocument":   map[string]any{"uri": s.uri, "version": version},
					"contentChanges": []map[string]any{{"text": text}}}); err != nil {
					return 0, err
				}
				if _, err := s.c.Call("textDocument/completion", map[string]any{"textDocument": map[string]any{"uri": s.uri},
					"position": map[string]any{"line": 0, "character": len(text)}}); err != nil {
					return 0, err
				}
				typed++
			}
			if typed >= queries {
				break
			}
		}
	}
	return sessions, s.shutdown()
}

// completeListAfterStart starts the server and polls dsh/candidates for
// every session from the process start until it lists want of them; it
// returns when `@` first listed sessions, when the list was complete, and
// how long that last call took.
func completeListAfterStart(bin, root, ws string, env []string, want int) (first, complete, call time.Duration, err error) {
	start := time.Now()
	s, err := startServer(bin, root, ws, env)
	if err != nil {
		return 0, 0, 0, err
	}
	defer s.kill()
	deadline := start.Add(5 * time.Minute)
	for {
		if first == 0 {
			raw, err := s.c.Call("textDocument/completion", map[string]any{"textDocument": map[string]any{"uri": s.uri},
				"position": map[string]any{"line": 0, "character": 1}})
			if err != nil {
				return 0, 0, 0, err
			}
			if strings.Contains(string(raw), `"kind":"session"`) {
				first = time.Since(start)
			}
		}
		t0 := time.Now()
		n, took, err := s.countCandidates(want + 1)
		if err != nil {
			return 0, 0, 0, err
		}
		if n >= want {
			// Until the answer arrived whole, not until it was decoded.
			complete, call = t0.Sub(start)+took, took
			if _, err := s.waitBuilt(5 * time.Minute); err != nil {
				return 0, 0, 0, err
			}
			if _, again, err := s.countCandidates(want + 1); err == nil {
				fmt.Printf("  the same call once the index was revalidated took %v\n", again.Round(time.Millisecond))
			}
			return first, complete, call, s.shutdown()
		}
		if time.Now().After(deadline) {
			return 0, 0, 0, fmt.Errorf("dsh/candidates listed %d of %d sessions after 5 minutes", n, want)
		}
		// A pause between polls, so that polling does not take a core from
		// the server it times.
		time.Sleep(2 * time.Millisecond)
	}
}

// countCandidates asks dsh/candidates for limit sessions and returns how
// many it listed and how long the answer took to arrive whole (up to its
// last byte); the answer is decoded after that (a client's decoding of
// 30 MB is not the server's time).
func (s *runningServer) countCandidates(limit int) (int, time.Duration, error) {
	raw, err := s.c.Call("dsh/candidates", map[string]any{"query": "", "limit": limit})
	if err != nil {
		return 0, 0, err
	}
	took := s.c.RoundTrip()
	var result []json.RawMessage
	if err := json.Unmarshal(raw, &result); err != nil {
		return 0, 0, fmt.Errorf("dsh/candidates answer: %w", err)
	}
	return len(result), took, nil
}

// runningServer is a server process spoken to over its pipes, with one
// document open in its workspace.
type runningServer struct {
	cmd    *exec.Cmd
	c      *lsptest.Conn
	uri    string
	exited bool
}

func startServer(bin, root, ws string, env []string) (*runningServer, error) {
	cmd := exec.Command(bin, "--sessions-root", root)
	cmd.Env = env
	p, err := lsptest.StartPipes(cmd)
	if err != nil {
		return nil, err
	}
	s := &runningServer{cmd: cmd, c: lsptest.NewConn(p.In, p.Out), uri: "file://" + ws + "/message.md"}
	if _, err := s.c.Call("initialize", map[string]any{"processId": nil, "rootUri": "file://" + ws, "capabilities": map[string]any{}}); err != nil {
		s.kill()
		return nil, err
	}
	if err := s.c.Notify("initialized", map[string]any{}); err != nil {
		s.kill()
		return nil, err
	}
	if err := s.c.Notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{
		"uri": s.uri, "languageId": "markdown", "version": 1, "text": "@"}}); err != nil {
		s.kill()
		return nil, err
	}
	return s, nil
}

// waitBuilt polls dsh/status until the index is built, within limit, and
// returns how many sessions it holds.
func (s *runningServer) waitBuilt(limit time.Duration) (int, error) {
	deadline := time.Now().Add(limit)
	for {
		raw, err := s.c.Call("dsh/status", map[string]any{})
		if err != nil {
			return 0, err
		}
		var st struct {
			Building        bool `json:"building"`
			SessionsIndexed int  `json:"sessionsIndexed"`
		}
		if err := json.Unmarshal(raw, &st); err != nil {
			return 0, fmt.Errorf("status answer: %w", err)
		}
		if !st.Building && st.SessionsIndexed > 0 {
			return st.SessionsIndexed, nil
		}
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("the session index was not built within %v", limit)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// shutdown ends the server as an editor does: shutdown, exit, and the
// process's own exit.
func (s *runningServer) shutdown() error {
	if _, err := s.c.Call("shutdown", nil); err != nil {
		return err
	}
	if err := s.c.Notify("exit", nil); err != nil {
		return err
	}
	s.exited = true
	done := make(chan error, 1)
	go func() { done <- s.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			return fmt.Errorf("the server exited: %w", err)
		}
		return nil
	case <-time.After(2 * time.Minute):
		_ = s.cmd.Process.Kill()
		return errors.New("the server did not exit within 2 minutes of exit")
	}
}

func (s *runningServer) kill() {
	if !s.exited {
		s.exited = true
		_ = s.cmd.Process.Kill()
		_ = s.cmd.Wait()
	}
}
