//go:build unix

package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// filesPeakLimit is the resident-memory bound of issue 12 for every
// hostile workspace: the process's high-water mark must stay below it.
const filesPeakLimit = 300 << 20

// fileHit is one entry of a dsh/files answer.
type fileHit struct {
	Path string `json:"path"`
	Kind string `json:"kind"`
}

// startWorkspace starts the binary on the workspace ws (with an empty
// sessions root) and initializes it with settings, which may be nil.
func startWorkspace(t *testing.T, ws string, settings map[string]any) *wireProc {
	t.Helper()
	p := startWire(t, "--sessions-root", t.TempDir(), "--watch", "off", "--log-level", "info")
	if settings == nil {
		settings = map[string]any{}
	}
	p.send(map[string]any{"id": "init", "method": "initialize", "params": map[string]any{
		"processId": nil, "rootUri": "file://" + ws, "capabilities": map[string]any{},
		"initializationOptions": settings}})
	return p
}

// waitIndexed waits, with a deadline, until the server logs that it built
// the workspace index.
func (p *wireProc) waitIndexed() {
	p.t.Helper()
	deadline := time.Now().Add(abuseTimeout)
	for !strings.Contains(p.stderr.String(), "workspace indexed") {
		if time.Now().After(deadline) {
			p.t.Fatalf("the workspace index was not built within %v\nstderr:\n%s", abuseTimeout, p.stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// files asks dsh/files and decodes the answer.
func (p *wireProc) files(id string, params map[string]any) []fileHit {
	p.t.Helper()
	p.send(map[string]any{"id": id, "method": "dsh/files", "params": params})
	a := p.expectResult("dsh/files "+fmt.Sprint(params), strconv.Quote(id))
	var hits []fileHit
	if err := json.Unmarshal(a.Result, &hits); err != nil {
		p.t.Fatalf("dsh/files answer %s: %v", a.Result, err)
	}
	return hits
}

// peakRSS is the resident high-water mark of the process (VmHWM).
func (p *wireProc) peakRSS() int64 {
	p.t.Helper()
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	if err != nil {
		p.t.Skipf("cannot read the memory of the process: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				p.t.Fatalf("VmHWM %q: %v", v, err)
			}
			return kb << 10
		}
	}
	p.t.Fatalf("no VmHWM in /proc/%d/status", p.cmd.Process.Pid)
	return 0
}

// checkPeak fails when the process's resident peak passed filesPeakLimit
// and logs it, for docs/reliability.md.
func (p *wireProc) checkPeak(what string) {
	p.t.Helper()
	peak := p.peakRSS()
	p.t.Logf("%s: peak RSS %.1f MB", what, float64(peak)/(1<<20))
	if peak > filesPeakLimit {
		p.t.Errorf("%s: peak RSS %d bytes, over the bound of %d", what, peak, filesPeakLimit)
	}
}

// shutdown ends the process cleanly and checks its exit code.
func (p *wireProc) shutdown() {
	p.t.Helper()
	p.send(map[string]any{"id": "down", "method": "shutdown"})
	p.expectResult("shutdown", `"down"`)
	p.send(map[string]any{"method": "exit"})
	if _, code := p.finish(); code != 0 {
		p.t.Errorf("exit code %d, want 0\nstderr:\n%s", code, p.stderr.String())
	}
}

func writeFiles(t *testing.T, root string, names ...string) {
	t.Helper()
	for _, n := range names {
		path := filepath.Join(root, filepath.FromSlash(n))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(n), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestBinaryFileLimitsAreBounded: a client-sent limit of 1e10, in a
// dsh/files request or as the fileMaxResults setting, once made the
// server preallocate that many results and die out of memory. The request
// is clamped, the setting refused with INVALID_CONFIG.
func TestBinaryFileLimitsAreBounded(t *testing.T) {
	ws := t.TempDir()
	writeFiles(t, ws, "file1.txt", "file2.txt", "src/file3.go")

	p := startWorkspace(t, ws, nil)
	p.expectResult("initialize", `"init"`)
	p.send(map[string]any{"method": "initialized", "params": map[string]any{}})
	p.waitIndexed()
	for _, limit := range []any{1e10, 1 << 62} {
		hits := p.files("huge", map[string]any{"query": "file", "limit": limit})
		if len(hits) != 3 {
			t.Errorf("dsh/files with limit %v: %v, want the 3 files", limit, hits)
		}
	}
	p.checkPeak("dsh/files limit 1e10")
	p.shutdown()

	p = startWorkspace(t, ws, map[string]any{"fileMaxResults": 1e10})
	a := p.response()
	if a.Error == nil || a.Error.Code != -32010 || !strings.Contains(a.Error.Message, "fileMaxResults") {
		t.Errorf("initialize with fileMaxResults 1e10 answered %s %+v, want INVALID_CONFIG naming the setting", a.Result, a.Error)
	}
	p.checkPeak("fileMaxResults 1e10")
	p.send(map[string]any{"method": "exit"})
	p.finish()
}

// TestBinaryHostileIgnoreFiles: ignore files that are devices, FIFOs or
// symlinks to them once grew memory by hundreds of MB per second or
// blocked the index build forever. Each is now skipped with a logged
// reason; the index is built and the workspace's files are offered, with
// the resident peak below the bound.
func TestBinaryHostileIgnoreFiles(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, "xdg"))
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	mkfifo := func(t *testing.T, path string) {
		t.Helper()
		if err := syscall.Mkfifo(path, 0o644); err != nil {
			t.Skipf("cannot make a FIFO: %v", err)
		}
	}
	symlink := func(t *testing.T, target, path string) {
		t.Helper()
		if err := os.Symlink(target, path); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name string
		// setup prepares the repository repo and returns the workspace
		// to open.
		setup  func(t *testing.T, repo string) string
		logged string
	}{
		{"info/exclude linked to /dev/zero", func(t *testing.T, repo string) string {
			symlink(t, "/dev/zero", filepath.Join(repo, ".git", "info", "exclude"))
			return repo
		}, "is a symlink, which is not followed"},
		{"info/exclude a FIFO", func(t *testing.T, repo string) string {
			mkfifo(t, filepath.Join(repo, ".git", "info", "exclude"))
			return repo
		}, "is a FIFO"},
		{"core.excludesFile = /dev/zero", func(t *testing.T, repo string) string {
			writeFiles(t, repo, ".git/config")
			if err := os.WriteFile(filepath.Join(repo, ".git", "config"), []byte("[core]\n\texcludesFile = /dev/zero\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			return repo
		}, "is a character device"},
		{"global config a FIFO", func(t *testing.T, repo string) string {
			mkfifo(t, filepath.Join(home, ".gitconfig"))
			t.Cleanup(func() { _ = os.Remove(filepath.Join(home, ".gitconfig")) })
			return repo
		}, "is a FIFO"},
		{"parent .gitignore linked to /dev/zero, subfolder opened", func(t *testing.T, repo string) string {
			symlink(t, "/dev/zero", filepath.Join(repo, ".gitignore"))
			writeFiles(t, repo, "sub/keep.txt")
			return filepath.Join(repo, "sub")
		}, "is a symlink, which is not followed"},
		{"in-tree .dshignore linked to /dev/zero and .gitignore a FIFO", func(t *testing.T, repo string) string {
			symlink(t, "/dev/zero", filepath.Join(repo, ".dshignore"))
			writeFiles(t, repo, "sub/x.txt")
			mkfifo(t, filepath.Join(repo, "sub", ".gitignore"))
			return repo
		}, ""},
		{".gitignore of 2 GiB (sparse)", func(t *testing.T, repo string) string {
			writeFiles(t, repo, ".gitignore")
			if err := os.Truncate(filepath.Join(repo, ".gitignore"), 2<<30); err != nil {
				t.Fatal(err)
			}
			return repo
		}, "more than the 1048576 read"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			repo := t.TempDir()
			writeFiles(t, repo, "keep.txt", ".git/info/.keep")
			ws := tt.setup(t, repo)
			p := startWorkspace(t, ws, nil)
			p.expectResult("initialize", `"init"`)
			p.send(map[string]any{"method": "initialized", "params": map[string]any{}})
			p.waitIndexed()
			hits := p.files("keep", map[string]any{"query": "keep"})
			if len(hits) != 1 || hits[0].Path != "keep.txt" {
				t.Errorf("dsh/files keep = %v, want keep.txt", hits)
			}
			p.checkPeak(tt.name)
			if !strings.Contains(p.stderr.String(), tt.logged) {
				t.Errorf("the reason %q is not logged:\n%s", tt.logged, p.stderr.String())
			}
			p.shutdown()
		})
	}
}

// TestBinaryFilesNeverLeaveTheWorkspace: a directory symlink to a secret
// directory (link → ~/.ssh) and a .gitignore'd file are never offered,
// right after initialize (while the index may still be building, when a
// separate lister once followed the link and offered link/id_rsa) and
// after the build.
func TestBinaryFilesNeverLeaveTheWorkspace(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	ws := t.TempDir()
	ssh := filepath.Join(home, ".ssh")
	writeFiles(t, ssh, "id_rsa")
	writeFiles(t, ws, "notes.md", "secret.env", ".gitignore")
	if err := os.WriteFile(filepath.Join(ws, ".gitignore"), []byte("secret.env\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(ssh, filepath.Join(ws, "link")); err != nil {
		t.Fatal(err)
	}
	p := startWorkspace(t, ws, nil)
	p.expectResult("initialize", `"init"`)
	check := func(when string) {
		for _, q := range []string{"link/", "link/id", "id_rsa", "secret", ""} {
			for _, h := range p.files("q", map[string]any{"query": q}) {
				if strings.HasPrefix(h.Path, "link") || strings.Contains(h.Path, "id_rsa") || strings.Contains(h.Path, "secret") {
					t.Errorf("%s: dsh/files %q offers %s", when, q, h.Path)
				}
			}
		}
	}
	check("right after initialize")
	p.send(map[string]any{"method": "initialized", "params": map[string]any{}})
	p.waitIndexed()
	check("after the build")
	if hits := p.files("n", map[string]any{"query": "notes"}); len(hits) != 1 || hits[0].Path != "notes.md" {
		t.Errorf("dsh/files notes = %v, want notes.md", hits)
	}
	p.shutdown()
}

// TestBinaryPathologicalIgnorePatterns: patterns whose backtracking is
// exponential in git's matcher (`*a*a*a*a*a*a*a*a*a*a*b` against a long
// name of a's, `**/**/**/**/**/a*b*…` against a deep path) once kept the
// index from ever being built with a core at 100%. The index is built,
// git's answers kept (the long name ending in "c" is offered, the one
// ending in "b" ignored), and listings answered, within the bound.
func TestBinaryPathologicalIgnorePatterns(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	ws := t.TempDir()
	long := strings.Repeat("a", 240) + "c"
	deep := strings.Repeat("x/", 30) + strings.Repeat("abcdefghi", 4) + "z"
	ignored := strings.Repeat("a", 240) + "b"
	writeFiles(t, ws, long, ignored, deep, "keep.txt", "ab.log", ".gitignore")
	// The last line is 900 KB of "**/" (under the 1 MiB cap), which took
	// 1.2 s and 200 MB of stack per path before runs of "**/" collapsed.
	patterns := "*a*a*a*a*a*a*a*a*a*a*b\n**/**/**/**/**/a*b*c*d*e*f*g*h*i*j\n*a*a*a*a*a*a*a*a*a*a*a*a*.log\n" +
		strings.Repeat("**/", 300000) + "nothing-here\n"
	if err := os.WriteFile(filepath.Join(ws, ".gitignore"), []byte(patterns), 0o644); err != nil {
		t.Fatal(err)
	}
	p := startWorkspace(t, ws, nil)
	p.expectResult("initialize", `"init"`)
	p.send(map[string]any{"method": "initialized", "params": map[string]any{}})
	p.waitIndexed()
	if hits := p.files("c", map[string]any{"query": "aaaaaaaaaaaac"}); len(hits) != 1 || hits[0].Path != long {
		t.Errorf("the long name is not offered: %v", hits)
	}
	if hits := p.files("z", map[string]any{"query": "ghiz"}); len(hits) != 1 || hits[0].Path != deep {
		t.Errorf("the deep file is not offered: %v", hits)
	}
	if hits := p.files("b", map[string]any{"query": "aaaaaaaaaaaab"}); len(hits) != 0 {
		t.Errorf("the name *a*a*a*a*a*a*a*a*a*a*b ignores is offered: %v", hits)
	}
	if hits := p.files("l", map[string]any{"query": "ab.log"}); len(hits) != 1 {
		t.Errorf("ab.log (which *a*…*.log with 12 a's does not match) is not offered: %v", hits)
	}
	// Listings match every entry of the directory live, keystroke by
	// keystroke.
	for i := 1; i <= 12; i++ {
		q := strings.Repeat("x/", 30)[:2*min(i, 30)]
		p.files("list", map[string]any{"query": q})
	}
	p.checkPeak("pathological ignore patterns")
	p.shutdown()
}

// TestBinaryInvalidUTF8NamesAreNotOffered: a file name that is not valid
// UTF-8 was offered as "bad\uFFFD\uFFFD.txt", a path that does not exist.
// It is not offered, before or after the build, and the reason is logged.
func TestBinaryInvalidUTF8NamesAreNotOffered(t *testing.T) {
	ws := t.TempDir()
	writeFiles(t, ws, "bad\xff\xfe.txt", "bad.txt")
	p := startWorkspace(t, ws, nil)
	p.expectResult("initialize", `"init"`)
	check := func(when string) {
		for _, q := range []string{"bad", ""} {
			hits := p.files("q", map[string]any{"query": q})
			if len(hits) != 1 || hits[0].Path != "bad.txt" {
				t.Errorf("%s: dsh/files %q = %v, want only bad.txt", when, q, hits)
			}
		}
	}
	check("right after initialize")
	p.send(map[string]any{"method": "initialized", "params": map[string]any{}})
	p.waitIndexed()
	check("after the build")
	if !strings.Contains(p.stderr.String(), "not valid UTF-8") {
		t.Errorf("the skipped name is not logged:\n%s", p.stderr.String())
	}
	p.checkPeak("a name that is not valid UTF-8")
	p.shutdown()
}
