// Package editors holds the tests of the editor clients in editors/vscode and
// editors/nvim. They drive real tools (Neovim, npm, vsce) against the real
// dsh-refls binary and skip with a printed reason when a tool is missing.
package editors

import (
	"bytes"
	"context"
	"encoding/base64"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dsh-refls/dsh-refls/internal/dshgen"
)

// buildTimeout bounds one `go build` of the server; a cold build on two
// cores takes well under a minute.
const buildTimeout = 3 * time.Minute

// repoRoot is the module root: the parent of this package's directory.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatalf("finding the repository root: %v", err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("repository root %s has no go.mod: %v", root, err)
	}
	return root
}

// serverBinEnv names a prebuilt dsh-refls binary to test instead of
// building one (CI may build once and share it).
const serverBinEnv = "DSH_REFLS_BIN"

// serverBuild builds the server at most once per test binary run; every
// test that needs it shares the result.
var serverBuild struct {
	once sync.Once
	dir  string
	bin  string
	out  []byte
	err  error
}

// TestMain removes the shared server build when the tests are done.
func TestMain(m *testing.M) {
	code := m.Run()
	if serverBuild.dir != "" {
		os.RemoveAll(serverBuild.dir)
	}
	os.Exit(code)
}

// buildServer builds cmd/dsh-refls once into a temporary directory and
// returns the binary's path, or returns $DSH_REFLS_BIN when that is set.
func buildServer(t *testing.T) string {
	t.Helper()
	if bin := os.Getenv(serverBinEnv); bin != "" {
		abs, err := filepath.Abs(bin)
		if err != nil {
			t.Fatalf("%s=%s: %v", serverBinEnv, bin, err)
		}
		if _, err := os.Stat(abs); err != nil {
			t.Fatalf("%s names a missing binary: %v", serverBinEnv, err)
		}
		t.Logf("testing %s from %s", abs, serverBinEnv)
		return abs
	}
	root := repoRoot(t)
	serverBuild.once.Do(func() {
		serverBuild.dir, serverBuild.err = os.MkdirTemp("", "dsh-refls-editors-")
		if serverBuild.err != nil {
			return
		}
		serverBuild.bin = filepath.Join(serverBuild.dir, "dsh-refls")
		ctx, cancel := context.WithTimeout(context.Background(), buildTimeout)
		defer cancel()
		cmd := exec.CommandContext(ctx, "go", "build", "-o", serverBuild.bin, "./cmd/dsh-refls")
		cmd.Dir = root
		serverBuild.out, serverBuild.err = cmd.CombinedOutput()
	})
	if serverBuild.err != nil {
		t.Fatalf("building dsh-refls: %v\n%s", serverBuild.err, serverBuild.out)
	}
	return serverBuild.bin
}

// sessionMention is the canonical mention of SPEC §2.1, computed here
// independently of the server: for an id of plain ASCII letters, digits and
// dashes, JSON.stringify only adds the quotes.
func sessionMention(t *testing.T, label, id string) string {
	t.Helper()
	for _, r := range id {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-') {
			t.Fatalf("sessionMention only handles plain ids, got %q", id)
		}
	}
	escaped := strings.NewReplacer(`\`, `\\`, `]`, `\]`).Replace(label)
	return "@[" + escaped + "](dsh-session:" + base64.RawURLEncoding.EncodeToString([]byte(`"`+id+`"`)) + ")"
}

// isolatedEnv is the environment for a child process whose home, caches and
// state live under dir, so that tests never touch the user's files.
func isolatedEnv(dir string, extra ...string) []string {
	env := []string{}
	for _, kv := range os.Environ() {
		key, _, _ := strings.Cut(kv, "=")
		switch key {
		case "HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME", "DSH_HOME", "NVIM", "NVIM_LISTEN_ADDRESS", "VIMINIT", "MYVIMRC":
			continue
		}
		env = append(env, kv)
	}
	env = append(env,
		"HOME="+filepath.Join(dir, "home"),
		"XDG_CACHE_HOME="+filepath.Join(dir, "cache"),
		"XDG_STATE_HOME="+filepath.Join(dir, "state"),
		"XDG_DATA_HOME="+filepath.Join(dir, "data"),
		"XDG_CONFIG_HOME="+filepath.Join(dir, "config"),
	)
	return append(env, extra...)
}

// runIn runs a command in dir with a timeout and returns its combined output,
// failing the test with that output when it fails.
func runIn(t *testing.T, dir string, env []string, timeout time.Duration, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = env
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s in %s: %v\n%s", name, strings.Join(args, " "), dir, err, out.String())
	}
	return out.String()
}

// writeFiles creates files (path relative to dir → content), with parents.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for rel, content := range files {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// serverProcesses lists the processes whose command line names logFile:
// the dsh-refls servers an editor under test started with --log-file.
func serverProcesses(logFile string) []int {
	return processes(func(cmdline []string, _ func() []string) bool { return slices.Contains(cmdline, logFile) })
}

// homeServers lists the dsh-refls processes whose environment names home:
// those the editor of a test's own account started, which no other
// process shares. (A server's command line may name its log file as
// "~/.cache/dsh-refls.log", the same for every account.)
func homeServers(home string) []int {
	return processes(func(cmdline []string, environ func() []string) bool {
		return len(cmdline) > 0 && filepath.Base(cmdline[0]) == "dsh-refls" && slices.Contains(environ(), "HOME="+home)
	})
}

// processes lists the processes for which match holds, given the
// arguments of their command line and, when asked for, their environment.
// It reads /proc, so it finds nothing where there is none (the editor
// tests that use it drive tmux, which runs only where /proc does).
func processes(match func(cmdline []string, environ func() []string) bool) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	split := func(b []byte) []string { return strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00") }
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		environ := func() []string {
			b, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
			return split(b)
		}
		if match(split(cmdline), environ) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// awaitServersExit waits until no server logging to logFile runs, so a
// test's temporary directory is removed only after the server's last write
// into it (a server saves its index caches when its editor goes away).
func awaitServersExit(t *testing.T, logFile string) {
	t.Helper()
	awaitExit(t, func() []int { return serverProcesses(logFile) })
}

// awaitHomeServersExit waits until the servers of home have exited after
// their editor, as awaitServersExit does for a log file.
func awaitHomeServersExit(t *testing.T, home string) {
	t.Helper()
	awaitExit(t, func() []int { return homeServers(home) })
}

// awaitExit waits until find lists no server. A server still running after
// exitWait is an error, and is killed: it must exit once its editor has
// closed its end of the pipe.
func awaitExit(t *testing.T, find func() []int) {
	t.Helper()
	const exitWait = 20 * time.Second
	start := time.Now()
	for {
		pids := find()
		if len(pids) == 0 {
			t.Logf("the server exited %v after its editor", time.Since(start).Round(time.Millisecond))
			return
		}
		if time.Since(start) > exitWait {
			for _, pid := range pids {
				if p, err := os.FindProcess(pid); err == nil {
					_ = p.Kill()
				}
			}
			t.Errorf("server process %v still runs %v after its editor ended; killed it", pids, exitWait)
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// movedTitle is a session that dsh 0.2.1 moved into the workspace with
// working-directory/change: its header names another project.
const movedTitle = "Move the billing job into this project"

// writeMovedSession writes movedTitle into the store at root: started in
// another project age ago, then moved into workspace, so that it is the
// newest session working there when age is below every other's.
func writeMovedSession(t *testing.T, age time.Duration) func(root, workspace string) {
	return func(root, workspace string) {
		s := dshgen.NewV4Session("moved-into-workspace").Cwd("/home/dev/webshop").CreatedAt(time.Now().Add(-age).UnixMilli()).
			Turn(func(tt *dshgen.Turn) {
				tt.UserText("The billing job belongs with the API.")
				tt.Title(movedTitle, "provider")
				tt.AssistantText("Moving there.")
			})
		s.ChangeDirectory(workspace)
		if _, err := s.Save(root, dshgen.Zstd); err != nil {
			t.Fatalf("writing the moved session: %v", err)
		}
	}
}
