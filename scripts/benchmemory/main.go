// Command benchmemory measures SPEC §5's memory bound: it starts the real
// dsh-refls binary over a sessions root and a workspace, waits until both
// indexes are built (dsh/status), and prints the server's RSS and peak RSS
// from /proc.
//
//	go build -o /tmp/dsh-refls ./cmd/dsh-refls
//	go run ./scripts/benchmemory --bin /tmp/dsh-refls --sessions-root R --workspace W
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/dsh-refls/dsh-refls/internal/lsptest"
)

func main() {
	bin := flag.String("bin", "dsh-refls", "the dsh-refls binary")
	root := flag.String("sessions-root", "", "sessions root to index")
	ws := flag.String("workspace", "", "workspace to index")
	messageMB := flag.Int("large-message-mb", 0, "instead: the release scenario with a session of one message this large (MiB)")
	requestMB := flag.Int("large-request-mb", 0, "instead: the release scenario with a request this large (MiB)")
	check := flag.Bool("check", false, "with --large-*: exit 1 when a bound fails (CI's short form)")
	recall := flag.Bool("recall-search", true, "index what was said in sessions too (the server's recallSearch setting); --recall-search=false measures the title and file indexes alone")
	steady := flag.Duration("steady", steadyAfter, "how long after each build the steady RSS is read (CI's small form: 4s, past the releaser's first two retries)")
	warmTitle := flag.Bool("warm-title", false, "instead of building with no stored index: first run a server that builds and stores the title index alone (recallSearch off), then measure one restarted over it with recallSearch on, whose recall index has its first build (a user turning recallSearch on, or upgrading to it)")
	flag.Parse()
	var err error
	switch {
	case *messageMB > 0 || *requestMB > 0:
		err = runLarge(*bin, *messageMB, *requestMB, *check)
	case *warmTitle:
		err = runWarmTitle(*bin, *root, *ws, *steady)
	default:
		err = run(*bin, *root, *ws, *recall, *steady, "")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchmemory:", err)
		os.Exit(1)
	}
}

// runWarmTitle measures a server restarted over a stored title index
// whose recall index is built for the first time: a first server, with
// recallSearch off, builds and stores the title index in a cache
// directory of its own, and exits; then run measures a second one over it.
func runWarmTitle(bin, root, ws string, steady time.Duration) error {
	cacheHome, err := os.MkdirTemp("", "benchmemory-cache-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(cacheHome)
	fmt.Println("storing the title index (recallSearch off):")
	if err := run(bin, root, ws, false, 0, cacheHome); err != nil {
		return fmt.Errorf("storing the title index: %w", err)
	}
	fmt.Println("restarted over it, recallSearch on:")
	return run(bin, root, ws, true, steady, cacheHome)
}

// run starts a server and prints its memory once its indexes are built.
// With cacheHome set, the server stores and reads its indexes under it
// (XDG_CACHE_HOME); without, it stores none (--no-index-cache).
func run(bin, root, ws string, recall bool, steady time.Duration, cacheHome string) error {
	ws, err := filepath.Abs(ws)
	if err != nil {
		return err
	}
	cmd := exec.Command(bin, "--sessions-root", root, "--no-index-cache")
	if cacheHome != "" {
		cmd = exec.Command(bin, "--sessions-root", root)
		cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+cacheHome)
	}
	p, err := lsptest.StartPipes(cmd)
	if err != nil {
		return err
	}
	defer cmd.Process.Kill()
	c := lsptest.NewConn(p.In, p.Out)
	start := time.Now()
	if _, err := c.Call("initialize", map[string]any{"processId": nil, "rootUri": "file://" + ws, "capabilities": map[string]any{},
		"initializationOptions": map[string]any{"recallSearch": recall}}); err != nil {
		return err
	}
	if err := c.Notify("initialized", map[string]any{}); err != nil {
		return err
	}
	var st struct {
		Building        bool `json:"building"`
		SessionsIndexed int  `json:"sessionsIndexed"`
		FilesIndexed    int  `json:"filesIndexed"`
	}
	for {
		raw, err := c.Call("dsh/status", map[string]any{})
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
	built := time.Since(start)
	rss, hwm, err := procMemory(cmd.Process.Pid)
	if err != nil {
		return err
	}
	// Issue 15's bound: 200 MB with 100,000 sessions and a 200,000-file
	// workspace; SPEC §5's: 150 MB at 10,000 sessions.
	bound := 150.0
	if st.SessionsIndexed > 10000 {
		bound = 200
	}
	cpu, err := lsptest.ProcCPU(cmd.Process.Pid)
	if err != nil {
		return err
	}
	fmt.Printf("both indexes built in %v: %d sessions, %d workspace files, recallSearch %v; server RSS %.0f MB, peak RSS %.0f MB = %.2f× the bound %.0f MB; server CPU %.2f s\n",
		built.Round(100*time.Millisecond), st.SessionsIndexed, st.FilesIndexed, recall, rss, hwm, hwm/bound, bound, cpu.Seconds())
	// What the server keeps once the build's garbage is returned.
	time.Sleep(steady)
	if rss, _, err = procMemory(cmd.Process.Pid); err != nil {
		return err
	}
	fmt.Printf("steady, %v later: server RSS %.0f MB = %.2f× the bound %.0f MB\n", steady, rss, rss/bound, bound)
	if cacheHome != "" && !recall {
		// runWarmTitle's first server stores the title index after its
		// build: the peak of that save counts.
		if err := awaitFile(filepath.Join(cacheHome, "dsh-refls", "index-*.gob"), start); err != nil {
			return err
		}
		if rss, hwm, err = procMemory(cmd.Process.Pid); err != nil {
			return err
		}
		fmt.Printf("title index stored %v after start: server RSS %.0f MB, peak RSS %.0f MB = %.2f× the bound %.0f MB\n",
			time.Since(start).Round(100*time.Millisecond), rss, hwm, hwm/bound, bound)
	}
	if recall {
		// The recall index builds after the title index: its peak and
		// the RSS it settles at are the figures of a default server.
		if err := awaitRecall(c, start); err != nil {
			return err
		}
		synced := time.Since(start)
		if rss, hwm, err = procMemory(cmd.Process.Pid); err != nil {
			return err
		}
		if cpu, err = lsptest.ProcCPU(cmd.Process.Pid); err != nil {
			return err
		}
		fmt.Printf("recall index's first build done %v after start: server RSS %.0f MB, peak RSS %.0f MB = %.2f× the bound %.0f MB; server CPU %.2f s\n",
			synced.Round(100*time.Millisecond), rss, hwm, hwm/bound, bound, cpu.Seconds())
		time.Sleep(steady)
		if rss, _, err = procMemory(cmd.Process.Pid); err != nil {
			return err
		}
		fmt.Printf("steady, %v after the recall first build: server RSS %.0f MB = %.2f× the bound %.0f MB\n", steady, rss, rss/bound, bound)
	}
	if cacheHome != "" && recall {
		// The recall index is stored once its first build is done and
		// nobody has typed for a while (10 s at most): its peak counts.
		if err := awaitFile(filepath.Join(cacheHome, "dsh-refls", "recall-*.idx"), start); err != nil {
			return err
		}
	}
	if _, hwm, err = procMemory(cmd.Process.Pid); err != nil {
		return err
	}
	fmt.Printf("peak RSS over the whole run (saves included): %.0f MB = %.2f× the bound %.0f MB\n", hwm, hwm/bound, bound)
	_, _ = c.Call("shutdown", nil)
	_ = c.Notify("exit", nil)
	return cmd.Wait()
}

// awaitFile polls until a file matches pattern, for at most 5 minutes
// after start.
func awaitFile(pattern string, start time.Time) error {
	for {
		if m, err := filepath.Glob(pattern); err != nil || len(m) > 0 {
			return err
		}
		if time.Since(start) > 5*time.Minute {
			return fmt.Errorf("no %s within 5 minutes", pattern)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// awaitRecall polls dsh/status until the recall index reports its first
// build done (synced, and no session pending: a first build publishes its
// steps, each marked synced), for at most recallWait.
func awaitRecall(c *lsptest.Conn, start time.Time) error {
	const recallWait = 15 * time.Minute
	for {
		raw, err := c.Call("dsh/status", map[string]any{})
		if err != nil {
			return err
		}
		var st struct {
			Recall *struct {
				Synced  time.Time `json:"synced"`
				Pending int       `json:"pending"`
			} `json:"recall"`
		}
		if err := json.Unmarshal(raw, &st); err != nil {
			return err
		}
		if st.Recall != nil && !st.Recall.Synced.IsZero() && st.Recall.Pending == 0 {
			return nil
		}
		if time.Since(start) > recallWait {
			return fmt.Errorf("recall index not synced within %v", recallWait)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// steadyAfter is how long after the build the steady RSS is read by
// default: the memory releaser returns the build's garbage within it
// (docs/reliability.md; it runs after 500 ms without a request, and
// retries after 1 s, 2 s, ...).
const steadyAfter = 10 * time.Second

// procMemory reads a process's RSS and peak RSS (VmHWM), in MB.
func procMemory(pid int) (rss, hwm float64, err error) {
	r, err := lsptest.ProcStatusKB(pid, "VmRSS")
	if err != nil {
		return 0, 0, err
	}
	h, err := lsptest.ProcStatusKB(pid, "VmHWM")
	return float64(r) * 1024 / 1e6, float64(h) * 1024 / 1e6, err
}
