package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"github.com/dsh-refls/dsh-refls/internal/lsptest"

	"github.com/dsh-refls/dsh-refls/sessionref"
)

// serverRestart is one restart of the real server over a stored index.
type serverRestart struct {
	// firstAnswer is from starting the process to the first completion of
	// `@` that lists sessions (answered from the restored cache, while the
	// index is still being checked against the logs).
	firstAnswer time.Duration
	// revalidated is from starting the process to dsh/status reporting the
	// index built: every directory and log checked against the cache.
	revalidated time.Duration
}

// serverRestarts saves ix's cache where the binary looks for it (the user
// cache dir, here a private one) and starts the binary runs times over the
// same root, timing each restart from the process start.
func serverRestarts(bin, root string, ix *sessionref.Index, runs int) ([]serverRestart, error) {
	home, err := os.MkdirTemp("", "benchsessions-server-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(home)
	cacheHome := filepath.Join(home, "cache")
	ws := filepath.Join(home, "workspace")
	if err := os.Mkdir(ws, 0o700); err != nil {
		return nil, err
	}
	env := append(os.Environ(), "XDG_CACHE_HOME="+cacheHome, "HOME="+home)
	// The path the server derives: DefaultCachePath under its cache dir.
	prev, had := os.LookupEnv("XDG_CACHE_HOME")
	os.Setenv("XDG_CACHE_HOME", cacheHome)
	cachePath, err := sessionref.DefaultCachePath(root)
	if had {
		os.Setenv("XDG_CACHE_HOME", prev)
	} else {
		os.Unsetenv("XDG_CACHE_HOME")
	}
	if err != nil {
		return nil, err
	}
	if err := ix.SaveCache(cachePath); err != nil {
		return nil, err
	}
	var out []serverRestart
	for i := 0; i < runs; i++ {
		r, err := oneServerRestart(bin, root, ws, env)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

func oneServerRestart(bin, root, ws string, env []string) (serverRestart, error) {
	var r serverRestart
	cmd := exec.Command(bin, "--sessions-root", root)
	cmd.Env = env
	in, err := cmd.StdinPipe()
	if err != nil {
		return r, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return r, err
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return r, fmt.Errorf("starting %s: %w", bin, err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	c := &rpcConn{in: in, out: bufio.NewReaderSize(out, 1<<20)}
	if _, err := c.call("initialize", map[string]any{"processId": nil, "rootUri": "file://" + ws, "capabilities": map[string]any{}}); err != nil {
		return r, err
	}
	if err := c.notify("initialized", map[string]any{}); err != nil {
		return r, err
	}
	uri := "file://" + ws + "/message.md"
	if err := c.notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{
		"uri": uri, "languageId": "markdown", "version": 1, "text": "@"}}); err != nil {
		return r, err
	}
	deadline := start.Add(5 * time.Minute)
	for r.firstAnswer == 0 {
		raw, err := c.call("textDocument/completion", map[string]any{"textDocument": map[string]any{"uri": uri},
			"position": map[string]any{"line": 0, "character": 1}})
		if err != nil {
			return r, err
		}
		var list struct {
			Items []struct {
				Data struct {
					Kind string `json:"kind"`
				} `json:"data"`
			} `json:"items"`
		}
		if err := json.Unmarshal(raw, &list); err != nil {
			return r, fmt.Errorf("completion answer: %w", err)
		}
		for _, it := range list.Items {
			if it.Data.Kind == "session" {
				r.firstAnswer = time.Since(start)
				break
			}
		}
		if time.Now().After(deadline) {
			return r, errors.New("no session listed within 5 minutes")
		}
	}
	for r.revalidated == 0 {
		raw, err := c.call("dsh/status", map[string]any{})
		if err != nil {
			return r, err
		}
		var st struct {
			Building        bool `json:"building"`
			SessionsIndexed int  `json:"sessionsIndexed"`
			CacheLoaded     bool `json:"indexCacheLoaded"`
		}
		if err := json.Unmarshal(raw, &st); err != nil {
			return r, fmt.Errorf("status answer: %w", err)
		}
		if !st.Building {
			if !st.CacheLoaded {
				return r, errors.New("the server did not load the index cache")
			}
			r.revalidated = time.Since(start)
			break
		}
		if time.Now().After(deadline) {
			return r, errors.New("index not built within 5 minutes")
		}
		time.Sleep(2 * time.Millisecond)
	}
	if _, err := c.call("shutdown", nil); err != nil {
		return r, err
	}
	return r, c.notify("exit", nil)
}

// rpcConn speaks JSON-RPC with Content-Length framing over pipes.
type rpcConn struct {
	in  io.Writer
	out *bufio.Reader
	id  int
}

func (c *rpcConn) send(msg map[string]any) error {
	msg["jsonrpc"] = "2.0"
	body, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	_, err = c.in.Write(lsptest.Frame(body))
	return err
}

func (c *rpcConn) notify(method string, params any) error {
	return c.send(map[string]any{"method": method, "params": params})
}

func (c *rpcConn) recv() (map[string]json.RawMessage, error) {
	body, err := lsptest.ReadFrame(c.out)
	if err != nil {
		return nil, err
	}
	var m map[string]json.RawMessage
	return m, json.Unmarshal(body, &m)
}

// call sends a request and returns its result, skipping notifications and
// the server's own requests.
func (c *rpcConn) call(method string, params any) (json.RawMessage, error) {
	c.id++
	id := c.id
	if err := c.send(map[string]any{"id": id, "method": method, "params": params}); err != nil {
		return nil, err
	}
	for {
		m, err := c.recv()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", method, err)
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
