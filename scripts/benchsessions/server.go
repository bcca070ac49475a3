package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/dsh-refls/dsh-refls/internal/lsptest"
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
	// cpu is the user and system CPU the process used from its start to
	// its exit, right after it reported the index built.
	cpu time.Duration
	// sessions is how many sessions the built index holds.
	sessions int
}

// serverOnly times only the server restarts; the bound is the one of the
// store's size as the first restart reports it.
func serverOnly(root string, runs int, bins binaries) error {
	return reportServerRestarts(bins, root, runs, 0)
}

// reportServerRestarts restarts bins.b (and bins.a, interleaved, when set)
// runs times each over ix's cache and prints the medians, as ratios to
// bound and, with a baseline, to it.
func reportServerRestarts(bins binaries, root string, runs int, bound time.Duration) error {
	list := []string{bins.b}
	if bins.a != "" {
		list = []string{bins.a, bins.b}
	}
	restarts, err := serverRestarts(list, root, runs)
	if err != nil {
		return fmt.Errorf("restarting the server: %w", err)
	}
	if bound == 0 {
		bound, _ = restartBound(restarts[0][0].sessions)
	}
	type medians struct{ first, valid, cpu time.Duration }
	med := make([]medians, len(list))
	for k, name := range list {
		var first, valid, cpu []time.Duration
		for _, r := range restarts[k] {
			first, valid, cpu = append(first, r.firstAnswer), append(valid, r.revalidated), append(cpu, r.cpu)
		}
		m := medians{median(first), median(valid), median(cpu)}
		med[k] = m
		label := "server restart (binary):   "
		if len(list) > 1 {
			label = fmt.Sprintf("server restart (%s): ", []string{"A, baseline", "B"}[k])
		}
		fmt.Printf("%s first @ completion listing sessions after %v (%.2f× the bound %v); index revalidated after %v (%.2f× the bound); process CPU %v; medians of %d, from process start (%s)\n",
			label, m.first.Round(time.Millisecond), ratio(m.first, bound), bound, m.valid.Round(time.Millisecond), ratio(m.valid, bound), m.cpu.Round(time.Millisecond), runs, name)
	}
	if len(list) > 1 {
		fmt.Printf("server restart B/A:         first answer %.2f×, revalidated %.2f×, process CPU %.2f× (interleaved, same minute)\n",
			ratio(med[1].first, med[0].first), ratio(med[1].valid, med[0].valid), ratio(med[1].cpu, med[0].cpu))
	}
	if bins.typed > 0 {
		return reportTypingRestarts(list, root, runs, bins.typed, bound)
	}
	return nil
}

// serverRestarts has each binary write the cache where it looks for it
// (the user cache dir, here a private one per binary) with its own
// `dsh-refls index`, so that each restarts from a cache of its own format,
// and starts each binary runs times over the same root, interleaved,
// timing each restart from the process start. out[k] holds the restarts
// of bins[k].
func serverRestarts(bins []string, root string, runs int) ([][]serverRestart, error) {
	home, err := os.MkdirTemp("", "benchsessions-server-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(home)
	ws := filepath.Join(home, "workspace")
	if err := os.Mkdir(ws, 0o700); err != nil {
		return nil, err
	}
	envs := make([][]string, len(bins))
	for k, bin := range bins {
		own := filepath.Join(home, fmt.Sprintf("bin-%d", k))
		envs[k] = append(os.Environ(), "XDG_CACHE_HOME="+filepath.Join(own, "cache"), "HOME="+own)
		cmd := exec.Command(bin, "index", "--sessions-root", root, "--quiet")
		cmd.Env, cmd.Stderr = envs[k], os.Stderr
		if err := cmd.Run(); err != nil {
			return nil, fmt.Errorf("%s index: %w", bin, err)
		}
	}
	out := make([][]serverRestart, len(bins))
	for i := 0; i < runs; i++ {
		for k, bin := range bins {
			r, err := oneServerRestart(bin, root, ws, envs[k])
			if err != nil {
				return nil, err
			}
			out[k] = append(out[k], r)
		}
	}
	return out, nil
}

func oneServerRestart(bin, root, ws string, env []string) (serverRestart, error) {
	var r serverRestart
	cmd := exec.Command(bin, "--sessions-root", root)
	cmd.Env = env
	start := time.Now()
	p, err := lsptest.StartPipes(cmd)
	if err != nil {
		return r, err
	}
	exited := false
	defer func() {
		if !exited {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	}()
	c := lsptest.NewConn(p.In, p.Out)
	if _, err := c.Call("initialize", map[string]any{"processId": nil, "rootUri": "file://" + ws, "capabilities": map[string]any{}}); err != nil {
		return r, err
	}
	if err := c.Notify("initialized", map[string]any{}); err != nil {
		return r, err
	}
	uri := "file://" + ws + "/message.md"
	if err := c.Notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{
		"uri": uri, "languageId": "markdown", "version": 1, "text": "@"}}); err != nil {
		return r, err
	}
	deadline := start.Add(5 * time.Minute)
	for r.firstAnswer == 0 {
		raw, err := c.Call("textDocument/completion", map[string]any{"textDocument": map[string]any{"uri": uri},
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
		if r.firstAnswer == 0 {
			// A pause between polls, so that polling does not take a core
			// from the server it times (an editor asks once per keystroke).
			time.Sleep(2 * time.Millisecond)
		}
	}
	for r.revalidated == 0 {
		raw, err := c.Call("dsh/status", map[string]any{})
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
			r.sessions = st.SessionsIndexed
			break
		}
		if time.Now().After(deadline) {
			return r, errors.New("index not built within 5 minutes")
		}
		time.Sleep(2 * time.Millisecond)
	}
	if _, err := c.Call("shutdown", nil); err != nil {
		return r, err
	}
	if err := c.Notify("exit", nil); err != nil {
		return r, err
	}
	exited = true
	if err := cmd.Wait(); err != nil {
		return r, fmt.Errorf("%s exited: %w", bin, err)
	}
	r.cpu = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	return r, nil
}
