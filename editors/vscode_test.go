package editors

import (
	"archive/zip"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// npmTimeout bounds one npm step (type-check, unit tests, packaging).
const npmTimeout = 5 * time.Minute

// serverOptionKeys are the option keys of SPEC §4.1; each has a dsh.<key> setting.
var serverOptionKeys = []string{
	"sessionsRoot", "sessionId", "cwd", "maxReferences", "maxReferenceBytes",
	"referenceContextFraction", "contextWindow", "candidateLimit", "fileMaxResults",
	"excludedDirectories", "spillDir", "watch", "candidateOrder", "recallSearch", "redactSecrets", "frecency",
}

// extensionManifest is the part of package.json the test checks.
type extensionManifest struct {
	Name             string            `json:"name"`
	Publisher        string            `json:"publisher"`
	Main             string            `json:"main"`
	Engines          map[string]string `json:"engines"`
	ActivationEvents []string          `json:"activationEvents"`
	Contributes      struct {
		Languages []struct {
			ID               string   `json:"id"`
			Extensions       []string `json:"extensions"`
			FilenamePatterns []string `json:"filenamePatterns"`
		} `json:"languages"`
		Commands []struct {
			Command string `json:"command"`
			Title   string `json:"title"`
		} `json:"commands"`
		Configuration struct {
			Properties map[string]json.RawMessage `json:"properties"`
		} `json:"configuration"`
	} `json:"contributes"`
}

// vsixEntries reads every file of a .vsix (a zip) into memory.
func vsixEntries(t *testing.T, path string) map[string][]byte {
	t.Helper()
	r, err := zip.OpenReader(path)
	if err != nil {
		t.Fatalf("opening %s: %v", path, err)
	}
	defer r.Close()
	files := map[string][]byte{}
	for _, f := range r.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatalf("opening %s in %s: %v", f.Name, path, err)
		}
		data, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatalf("reading %s in %s: %v", f.Name, path, err)
		}
		files[f.Name] = data
	}
	return files
}

func TestVSCodeExtension(t *testing.T) {
	// CI runs this test first, in a step of its own beside others; the
	// README's command then lists it as skipped, with that run named.
	// npm and vsce mostly wait on the file system; the Neovim tests run
	// meanwhile (and so they do while the check waits for that step).
	t.Parallel()
	skipIfPassedEarlier(t)
	ext := filepath.Join(repoRoot(t), "editors", "vscode")
	if _, err := os.Stat(filepath.Join(ext, "node_modules")); err != nil {
		t.Skip("editors/vscode/node_modules is missing; run `npm ci` in editors/vscode to run the VS Code extension tests")
	}
	if _, err := exec.LookPath("npm"); err != nil {
		t.Skip("npm is not on PATH; install Node.js 20 and run `npm ci` in editors/vscode")
	}
	bin := buildServer(t)
	dir := t.TempDir()
	env := isolatedEnv(dir, "npm_config_update_notifier=false", "npm_config_fund=false")

	// The browser check needs only the linux-x64 .vsix: it is packaged
	// first, and code-server runs it (most of this test's time, waiting on
	// the browser) while the other subtest runs the unit tests and packages
	// the other six beside it.
	vsixDir := filepath.Join(dir, "vsix")
	packageVSIX(t, env, vsixDir, "linux-x64")
	t.Run("code-server", func(t *testing.T) {
		t.Parallel()
		testInCodeServer(t, vsixDir, bin)
	})
	t.Run("unit tests and packages", func(t *testing.T) {
		t.Parallel()
		extensionUnitTests(t, ext, env, bin)
		packageVSIX(t, env, vsixDir, append([]string{"plain"}, otherTargets("linux-x64")...)...)
		checkPackages(t, vsixDir)
	})
}

// extensionUnitTests type-checks the extension and runs its unit tests,
// plus src/test/server.test.ts, which drives the real binary bin through
// the extension's lookup, settings mapping and presentation.
func extensionUnitTests(t *testing.T, ext string, env []string, bin string) {
	t.Helper()
	d := newDemoSetup(t, t.TempDir())
	runIn(t, ext, env, npmTimeout, "npm", "run", "compile")
	testEnv := append(env[:len(env):len(env)],
		"DSH_REFLS_BIN="+bin,
		"DSH_E2E_SESSIONS_ROOT="+d.root,
		"DSH_E2E_WORKSPACE="+d.workspace,
		"DSH_E2E_SESSION_MENTION="+d.mention,
		"DSH_E2E_SESSION_TITLE="+d.session.DisplayTitle,
	)
	out := runIn(t, ext, testEnv, npmTimeout, "npm", "test")
	// The node runner's own summary lines are kept out of a passing run's
	// output, where they could be taken for the suite's closing lines.
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("npm test:\n%s", out)
		}
	})
	if !strings.Contains(out, "# fail 0") || strings.Contains(out, "# pass 0\n") {
		t.Fatalf("npm test did not report passing tests:\n%s", out)
	}
	if strings.Contains(out, "# SKIP") {
		t.Fatalf("npm test skipped a suite although the server environment was set:\n%s", out)
	}
}

// vsixFiles is every file a .vsix holds, and nothing else may: the
// manifests vsce writes, the extension's manifest and README, the
// language configuration, the grammar and the bundle. A platform-specific
// .vsix holds bin/dsh-refls (bin/dsh-refls.exe) besides.
var vsixFiles = []string{
	"[Content_Types].xml",
	"extension.vsixmanifest",
	"extension/dist/extension.js",
	"extension/language-configuration.json",
	"extension/package.json",
	"extension/readme.md",
	"extension/syntaxes/dsh-prompt.tmLanguage.json",
}

// checkVSIXFiles reports every file of a .vsix that is not in want (a
// test script, a source file, a map) and every file of want it lacks.
func checkVSIXFiles(t *testing.T, what string, files map[string][]byte, want []string) {
	t.Helper()
	for _, name := range want {
		if _, ok := files[name]; !ok {
			t.Errorf("%s lacks %s", what, name)
		}
	}
	for name := range files {
		if !slices.Contains(want, name) {
			t.Errorf("%s holds %s, which the extension does not need: .vscodeignore must keep it out", what, name)
		}
	}
}

// checkPackages checks the plain .vsix in vsixDir (what it carries, its
// manifest, its bundle) and the six platform-specific ones.
func checkPackages(t *testing.T, vsixDir string) {
	t.Helper()
	vsix := filepath.Join(vsixDir, "dsh-refls-0.1.0.vsix")
	files := vsixEntries(t, vsix)

	checkVSIXFiles(t, "the plain .vsix", files, vsixFiles)

	var m extensionManifest
	if err := json.Unmarshal(files["extension/package.json"], &m); err != nil {
		t.Fatalf("extension/package.json: %v", err)
	}
	if m.Main != "./dist/extension.js" {
		t.Errorf("main = %q, want ./dist/extension.js", m.Main)
	}
	if m.Name != "dsh-refls" || m.Publisher == "" || !strings.HasPrefix(m.Engines["vscode"], "^1.") {
		t.Errorf("name %q, publisher %q, engines.vscode %q", m.Name, m.Publisher, m.Engines["vscode"])
	}
	for _, lang := range []string{"markdown", "plaintext", "dsh-prompt"} {
		if !slices.Contains(m.ActivationEvents, "onLanguage:"+lang) {
			t.Errorf("activationEvents %v lack onLanguage:%s", m.ActivationEvents, lang)
		}
	}
	var prompt bool
	for _, l := range m.Contributes.Languages {
		if l.ID == "dsh-prompt" && slices.Contains(l.Extensions, ".dshprompt") && slices.Contains(l.FilenamePatterns, "*.prompt.md") {
			prompt = true
		}
	}
	if !prompt {
		t.Errorf("no dsh-prompt language for *.prompt.md and *.dshprompt: %+v", m.Contributes.Languages)
	}
	titles := map[string]string{}
	for _, c := range m.Contributes.Commands {
		titles[c.Command] = c.Title
	}
	if titles["dsh.prepareMessage"] != "Prepare Message" || titles["dsh.showIndexStatus"] != "Show Index Status" {
		t.Errorf("commands: %v", titles)
	}
	for _, key := range append([]string{"serverPath"}, serverOptionKeys...) {
		if _, ok := m.Contributes.Configuration.Properties["dsh."+key]; !ok {
			t.Errorf("no setting dsh.%s", key)
		}
	}
	// Paths on the server's machine are machine settings (Remote settings in
	// a remote window); every other setting, the privacy switch among them,
	// keeps the window scope, so a User value applies in remote windows too.
	machine := []string{"dsh.serverPath", "dsh.logFile", "dsh.sessionsRoot", "dsh.spillDir"}
	for key, raw := range m.Contributes.Configuration.Properties {
		var p struct {
			Scope string `json:"scope"`
		}
		if err := json.Unmarshal(raw, &p); err != nil {
			t.Fatalf("setting %s: %v", key, err)
		}
		if want := slices.Contains(machine, key); want != (p.Scope == "machine-overridable") {
			t.Errorf("setting %s has scope %q; machine-overridable is for %v only", key, p.Scope, machine)
		}
	}

	// The bundle must be what main names, export activate, and carry the
	// language client inside (vscode itself is the host's).
	js := string(files["extension/dist/extension.js"])
	if !strings.Contains(js, "activate") || !strings.Contains(js, "deactivate") {
		t.Errorf("dist/extension.js does not export activate and deactivate")
	}
	if !strings.Contains(js, "Server process exited with code") || strings.Contains(js, `require("vscode-languageclient`) {
		t.Errorf("dist/extension.js does not bundle vscode-languageclient")
	}
	if !strings.Contains(js, `require("vscode")`) {
		t.Errorf("dist/extension.js does not leave vscode to the host")
	}

	checkPlatformPackages(t, vsixDir)
}
