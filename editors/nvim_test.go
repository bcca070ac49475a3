package editors

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dsh-refls/dsh-refls/internal/dshgen"
	"github.com/dsh-refls/dsh-refls/internal/testfixtures"
)

// nvimTimeout bounds one headless Neovim run; the script's own overall
// timeout is shorter, so a hang is reported by the script when possible.
const nvimTimeout = 2 * time.Minute

// demoSessionTitle is the demo session the tests mention: it shares the
// workspace cwd, so it ranks among the first candidates.
const demoSessionTitle = "Fix flaky login test"

// demoFile is a workspace file that completion at a bare "@" lists.
const demoFile = "README.md"

// rateFile and rateSession are what typing "@rate" must narrow to (issue 11).
const (
	rateFile    = "design notes/rate plan.md"
	rateSession = "Add rate limiting to the API"
)

// demoSetup is a session store and a workspace for the editor tests.
type demoSetup struct {
	root      string // session store root
	workspace string // workspace root (holds .git, README.md, message.md)
	// hostWorkspace is the workspace on the host: workspace itself, but
	// for an editor in a chroot (newDemoSetupAt).
	hostWorkspace string
	message       string // the Markdown file the tests edit
	session       dshgen.Expected
	mention       string // canonical mention of session
}

// newDemoSetup writes the demo store with the workspace as the cwd of its
// main project, and a workspace with a README and a message file.
func newDemoSetup(t *testing.T, dir string) demoSetup {
	t.Helper()
	return newDemoSetupAt(t, dir, dir)
}

// newDemoSetupAt is newDemoSetup for an editor that sees hostDir as
// insideDir (a chroot): files are written under hostDir, and every path
// the store records or the setup returns is the one under insideDir.
// hostWorkspace is the workspace's path on the host.
func newDemoSetupAt(t *testing.T, hostDir, insideDir string) demoSetup {
	t.Helper()
	d := demoSetup{root: filepath.Join(insideDir, "sessions"), workspace: filepath.Join(insideDir, "workspace"),
		hostWorkspace: filepath.Join(hostDir, "workspace")}
	writeFiles(t, d.hostWorkspace, map[string]string{
		".git/HEAD":      "ref: refs/heads/main\n",
		demoFile:         "# Demo project\n",
		"src/login.ts":   "export const login = () => true;\n",
		"message.md":     "Please review the login fix:\n",
		".gitignore":     "dist/\n",
		"dist/bundle.js": "// built\n",
		// For "@rate": a nested file with a space, and fuzzy decoys
		// (docs/migration.md holds r-a-t; src/generated/ holds "rate" inside a
		// word, so it may follow) that must not crowd it out.
		rateFile:               "# Rate plan\n",
		"docs/migration.md":    "# Migration\n",
		"src/generated/api.ts": "// generated\n",
	})
	d.message = filepath.Join(d.workspace, "message.md")
	facts, err := dshgen.DemoStoreFor(filepath.Join(hostDir, "sessions"), d.workspace, time.Now())
	if err != nil {
		t.Fatalf("writing the demo store: %v", err)
	}
	for _, f := range facts {
		if f.Title == demoSessionTitle {
			d.session = f
		}
	}
	if d.session.ID == "" {
		t.Fatalf("the demo store has no session titled %q", demoSessionTitle)
	}
	d.mention = sessionMention(t, d.session.DisplayTitle, d.session.ID)
	return d
}

// e2eParams is what editors/nvim/tests/e2e.lua reads from DSH_E2E_PARAMS.
type e2eParams struct {
	PluginDir      string   `json:"plugin_dir"`
	Server         string   `json:"server"`
	SessionsRoot   string   `json:"sessions_root"`
	Workspace      string   `json:"workspace"`
	MessageFile    string   `json:"message_file"`
	FileName       string   `json:"file_name"`
	SessionTitle   string   `json:"session_title"`
	SessionMention string   `json:"session_mention"`
	LogFile        string   `json:"log_file"`
	HoverContains  []string `json:"hover_contains"`
	// Settings are server options beside sessionsRoot, for every
	// setup() and update_settings() of the run.
	Settings map[string]any `json:"settings,omitempty"`
}

// lookNvim returns the nvim binary or skips the test with the reason.
func lookNvim(t *testing.T) string {
	t.Helper()
	nvim, err := exec.LookPath("nvim")
	if err != nil {
		t.Skip("nvim is not on PATH; install Neovim (apt-get install -y neovim) to run the Neovim tests")
	}
	return nvim
}

// runNvimScript runs a Lua test script in headless Neovim and returns its
// stderr; the test fails when Neovim exits non-zero.
func runNvimScript(t *testing.T, nvim, script string, env []string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), nvimTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, nvim, "--headless", "-u", "NONE", "-i", "NONE", "-n", "-c", "luafile "+script)
	cmd.Dir = repoRoot(t)
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	err := cmd.Run()
	// The servers Neovim started save their caches into the isolated
	// HOME's directories as they exit, after Neovim: wait for them, so
	// that the test's directory is removed after their last write.
	for _, kv := range env {
		if home, ok := strings.CutPrefix(kv, "HOME="); ok {
			awaitHomeServersExit(t, home)
		}
	}
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit):
		t.Fatalf("%s exited with code %d\nstderr:\n%s\nstdout:\n%s", script, exit.ExitCode(), stderr.String(), stdout.String())
	default:
		t.Fatalf("running %s: %v\nstderr:\n%s", script, err, stderr.String())
	}
	return stderr.String()
}

func TestNeovimPluginUnit(t *testing.T) {
	nvim := lookNvim(t)
	dir := t.TempDir()
	script := filepath.Join(repoRoot(t), "editors", "nvim", "tests", "unit.lua")
	out := runNvimScript(t, nvim, script, isolatedEnv(dir))
	if !strings.Contains(out, "PASS: unit") {
		t.Fatalf("unit.lua exited 0 without reporting PASS:\n%s", out)
	}
}

func TestNeovimEndToEnd(t *testing.T) {
	nvim := lookNvim(t)
	bin := buildServer(t)
	plugin := filepath.Join(repoRoot(t), "editors", "nvim")
	script := filepath.Join(repoRoot(t), "editors", "nvim", "tests", "e2e.lua")

	t.Run("demo store", func(t *testing.T) {
		dir := t.TempDir()
		d := newDemoSetup(t, dir)
		runE2E(t, nvim, script, dir, e2eParams{
			PluginDir:      plugin,
			Server:         bin,
			SessionsRoot:   d.root,
			Workspace:      d.workspace,
			MessageFile:    d.message,
			FileName:       demoFile,
			SessionTitle:   d.session.DisplayTitle,
			SessionMention: d.mention,
			// The hover names the session and gives the recall facts of §4.2.
			HoverContains: []string{d.session.DisplayTitle, d.session.ID, "messages kept", "budget"},
		})
	})

	// The recorded dsh logs in their zstd form, with the expected mention
	// taken from the fixtures rather than computed here.
	t.Run("recorded zstd store", func(t *testing.T) {
		fixtures := testfixtures.Dir(t)
		sessions := testfixtures.LoadExpected(t, fixtures)
		var s *testfixtures.Expected
		for i := range sessions {
			if sessions[i].Name == "subagent-child" {
				s = &sessions[i]
			}
		}
		if s == nil {
			t.Fatal("expected.json has no subagent-child session")
		}
		dir := t.TempDir()
		ws := filepath.Join(dir, "workspace")
		writeFiles(t, ws, map[string]string{".git/HEAD": "ref: refs/heads/main\n", demoFile: "# Demo\n", "message.md": "Recorded sessions:\n"})
		runE2E(t, nvim, script, dir, e2eParams{
			PluginDir:      plugin,
			Server:         bin,
			SessionsRoot:   filepath.Join(fixtures, "zstd", "sessions"),
			Workspace:      ws,
			MessageFile:    filepath.Join(ws, "message.md"),
			FileName:       demoFile,
			SessionTitle:   s.DisplayTitle,
			SessionMention: s.Mention,
			HoverContains:  []string{s.DisplayTitle, s.SessionID, "messages kept", "budget"},
			// The recorded subagent child is a hidden kind (docs/sessions.md):
			// listed at @ with showAutomationSessions, from setup() on.
			Settings: map[string]any{"showAutomationSessions": true},
		})
	})
}

// runE2E writes params for editors/nvim/tests/e2e.lua, runs it in headless
// Neovim and checks that it reported success; the server log is printed on
// failure.
func runE2E(t *testing.T, nvim, script, dir string, params e2eParams) {
	t.Helper()
	params.LogFile = filepath.Join(dir, "server.log")
	data, err := json.Marshal(params)
	if err != nil {
		t.Fatal(err)
	}
	paramsFile := filepath.Join(dir, "params.json")
	if err := os.WriteFile(paramsFile, data, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			if log, err := os.ReadFile(params.LogFile); err == nil {
				t.Logf("server log:\n%s", log)
			}
		}
	})
	out := runNvimScript(t, nvim, script, isolatedEnv(dir, "DSH_E2E_PARAMS="+paramsFile))
	t.Logf("e2e.lua:\n%s", out)
	if !strings.Contains(out, "PASS: nvim e2e") {
		t.Fatalf("e2e.lua exited 0 without reporting PASS:\n%s", out)
	}
}

func TestNeovimHelpTags(t *testing.T) {
	nvim := lookNvim(t)
	dir := t.TempDir()
	doc, err := os.ReadFile(filepath.Join(repoRoot(t), "editors", "nvim", "doc", "dsh_refls.txt"))
	if err != nil {
		t.Fatal(err)
	}
	docDir := filepath.Join(dir, "doc")
	writeFiles(t, docDir, map[string]string{"dsh_refls.txt": string(doc)})
	// :helptags fails (E154) on duplicate tags; cquit turns any error into exit code 1.
	ctx, cancel := context.WithTimeout(context.Background(), nvimTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, nvim, "--headless", "-u", "NONE", "-i", "NONE", "-n",
		"-c", "try | helptags "+docDir+" | catch | cquit 1 | endtry", "-c", "qall!")
	cmd.Env = isolatedEnv(dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("helptags: %v\n%s", err, out)
	}
	tags, err := os.ReadFile(filepath.Join(docDir, "tags"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"dsh_refls\t", ":DshPrepare\t", ":DshStatus\t", ":DshSearch\t", "dsh_refls.search()\t", ":DshFollow\t", "dsh_refls.setup()\t", "dsh_refls-settings\t"} {
		if !strings.Contains(string(tags), want) {
			t.Errorf("help tags lack %q:\n%s", strings.TrimSpace(want), tags)
		}
	}
}
