package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dsh-refls/dsh-refls/internal/testfixtures"
	"github.com/dsh-refls/dsh-refls/sessionref"
	"github.com/dsh-refls/dsh-refls/sessionref/prepare"
	"github.com/dsh-refls/dsh-refls/sessionref/titles"
)

// runCLI runs the built binary and returns stdout, stderr and the exit code.
func runCLI(t *testing.T, env []string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if exit, ok := err.(*exec.ExitError); ok {
		code = exit.ExitCode()
	} else if err != nil {
		t.Fatalf("running %v: %v", args, err)
	}
	return stdout.String(), stderr.String(), code
}

// TestCLIMatchesRecordedFixtures runs `candidates` and `prepare` as a new
// user would, on both recorded stores, and compares with expected.json.
func TestCLIMatchesRecordedFixtures(t *testing.T) {
	dir := testfixtures.Dir(t)
	want := testfixtures.LoadExpected(t, dir)
	for _, store := range []string{"raw", "zstd"} {
		t.Run(store, func(t *testing.T) {
			root := filepath.Join(dir, store, "sessions")
			checkCandidates(t, root, want)
			for _, w := range want {
				t.Run(w.Name, func(t *testing.T) { checkPrepared(t, root, w) })
			}
		})
	}
}

// checkCandidates runs `candidates` on root with a query matching every
// session and compares each candidate with its session in expected.json:
// label (the title, or the id without one), display title, mention,
// createdAt and cwd; every session is listed once.
func checkCandidates(t *testing.T, root string, want []testfixtures.Expected) {
	t.Helper()
	out, errOut, code := runCLI(t, nil, "candidates", "--sessions-root", root, "--session", "not-a-session", "--limit", "100")
	if code != 0 {
		t.Fatalf("candidates exited %d: %s", code, errOut)
	}
	var cands []titles.Candidate
	if err := json.Unmarshal([]byte(out), &cands); err != nil {
		t.Fatalf("candidates output is not a JSON array: %v\n%s", err, out)
	}
	byID := map[string]titles.Candidate{}
	for _, c := range cands {
		byID[c.SessionID] = c
	}
	if len(cands) != len(want) || len(byID) != len(want) {
		t.Errorf("%d candidates (%d distinct), expected.json has %d sessions", len(cands), len(byID), len(want))
	}
	for _, w := range want {
		c, ok := byID[w.SessionID]
		if !ok {
			t.Errorf("%s (%s) not a candidate", w.Name, w.SessionID)
			continue
		}
		label := w.SessionID
		if w.Title != nil {
			label = *w.Title
		}
		if c.Label != label || c.DisplayTitle != w.DisplayTitle || c.Mention != w.Mention || c.CreatedAt != w.CreatedAt {
			t.Errorf("%s: candidate %+v, want label %q displayTitle %q mention %s createdAt %d", w.Name, c, label, w.DisplayTitle, w.Mention, w.CreatedAt)
		}
		if (c.Cwd == nil) != (w.Cwd == nil) || (c.Cwd != nil && *c.Cwd != *w.Cwd) {
			t.Errorf("%s: cwd %v, want %v", w.Name, c.Cwd, w.Cwd)
		}
	}
}

// checkPrepared prepares a message holding the bare URI of one session (so
// the label is the id, as in expected.json) and compares the snapshot.
func checkPrepared(t *testing.T, root string, w testfixtures.Expected) {
	out, errOut, code := runCLI(t, nil, "prepare", "--sessions-root", root, "--session", "target-session",
		"--spill-dir", "", "--text", "Recall "+w.URI+" please")
	if code != 0 {
		t.Fatalf("prepare exited %d: %s", code, errOut)
	}
	var res struct {
		Content           string
		References        []sessionref.Reference
		AdditionalContext *prepare.ContextMessage
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("prepare output: %v\n%s", err, out)
	}
	if res.Content != "Recall @"+w.SessionID+" please" {
		t.Errorf("content %q", res.Content)
	}
	if res.AdditionalContext == nil || len(res.AdditionalContext.Content) != 1 {
		t.Fatalf("no context message: %s", out)
	}
	prompt := res.AdditionalContext.Content[0].Text
	open, closeTag := "<referenced-sessions>\n", "\n</referenced-sessions>"
	i, j := strings.Index(prompt, open), strings.Index(prompt, closeTag)
	if i < 0 || j < i {
		t.Fatalf("prompt has no snapshot block:\n%s", prompt)
	}
	var got []json.RawMessage
	if err := json.Unmarshal([]byte(prompt[i+len(open):j]), &got); err != nil || len(got) != 1 {
		t.Fatalf("snapshot is not a one-element JSON array (%v): %s", err, prompt[i+len(open):j])
	}
	var snap struct {
		Data  json.RawMessage `json:"data"`
		Stats prepare.Stats
	}
	if err := json.Unmarshal(w.Snapshot, &snap); err != nil {
		t.Fatal(err)
	}
	// The prompt writes every '<' as \u003c; decoding both sides compares values.
	if !testfixtures.SameJSON(t, got[0], snap.Data) {
		t.Errorf("snapshot data\n got %s\nwant %s", got[0], snap.Data)
	}
	facts := res.AdditionalContext.Source.References
	if len(facts) != 1 || facts[0].Stats != snap.Stats {
		t.Errorf("recall facts %+v, want %+v", facts, snap.Stats)
	}
	if strings.Count(prompt, "<") != 2 {
		t.Errorf("prompt has a '<' outside its two tags:\n%s", prompt)
	}
}

// TestCLIErrors checks that every failure is one JSON object on stderr with
// the §2.4 code, and exit status 2.
func TestCLIErrors(t *testing.T) {
	root := t.TempDir()
	self := sessionref.EncodeURI("me")
	cases := []struct {
		name string
		args []string
		code sessionref.Code
	}{
		{"no session", []string{"prepare", "--sessions-root", root, "--text", "x"}, sessionref.CodeInvalidConfig},
		{"both text and file", []string{"prepare", "--sessions-root", root, "--session", "me", "--text", "x", "--file", "y"}, sessionref.CodeInvalidConfig},
		{"bad mode", []string{"prepare", "--sessions-root", root, "--session", "me", "--mode", "shout", "--text", "x"}, sessionref.CodeInvalidConfig},
		{"malformed mention", []string{"prepare", "--sessions-root", root, "--session", "me", "--text", "@[x](dsh-session:%%%)"}, sessionref.CodeInvalidReference},
		{"self reference", []string{"prepare", "--sessions-root", root, "--session", "me", "--text", self}, sessionref.CodeSelfReference},
		{"too many", []string{"prepare", "--sessions-root", root, "--session", "me", "--text",
			sessionref.EncodeURI("a") + " " + sessionref.EncodeURI("b") + " " + sessionref.EncodeURI("c") + " " + sessionref.EncodeURI("d")}, sessionref.CodeTooMany},
		{"unknown session", []string{"prepare", "--sessions-root", root, "--session", "me", "--text", sessionref.EncodeURI("ghost")}, sessionref.CodeReadFailed},
		{"bad limit", []string{"candidates", "--sessions-root", root, "--limit", "0"}, sessionref.CodeInvalidReference},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := runCLI(t, nil, tc.args...)
			if code != 2 {
				t.Fatalf("exit %d, want 2 (stdout %q, stderr %q)", code, out, errOut)
			}
			if out != "" {
				t.Errorf("stdout %q on failure", out)
			}
			var e struct {
				Code    sessionref.Code `json:"code"`
				Message string          `json:"message"`
			}
			if err := json.Unmarshal([]byte(strings.TrimSpace(errOut)), &e); err != nil {
				t.Fatalf("stderr is not one JSON object: %v\n%s", err, errOut)
			}
			if e.Code != tc.code || e.Message == "" {
				t.Errorf("error %+v, want code %s with a message", e, tc.code)
			}
		})
	}
}

// TestCLIRootFromDSHHome checks §1.1's root resolution through the
// environment, as a user without flags would run it.
func TestCLIRootFromDSHHome(t *testing.T) {
	dir := testfixtures.Dir(t)
	home := t.TempDir()
	if err := os.Symlink(filepath.Join(dir, "raw", "sessions"), filepath.Join(home, "sessions")); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runCLI(t, []string{"DSH_HOME=" + home}, "candidates", "--query", "CHILD_OK")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "33333333-3333-4333-8333-333333333333") {
		t.Errorf("DSH_HOME root not used: %s", out)
	}
	out, _, _ = runCLI(t, []string{"DSH_HOME=   ", "HOME=" + home}, "candidates")
	if strings.TrimSpace(out) != "[]" {
		t.Errorf("a blank DSH_HOME must fall back to ~/.dsh/sessions (empty here), got %s", out)
	}
}

// TestCLIBudgetExceeded asks for a 16-byte budget, which no session fits.
func TestCLIBudgetExceeded(t *testing.T) {
	root := filepath.Join(testfixtures.Dir(t), "raw", "sessions")
	uri := sessionref.EncodeURI("228b7b82-84ed-49b7-a567-981c03b28c77")
	out, errOut, code := runCLI(t, nil, "prepare", "--sessions-root", root, "--session", "me", "--max-reference-bytes", "16", "--text", uri)
	if code != 2 || out != "" {
		t.Fatalf("exit %d, stdout %q; want 2 and nothing on stdout", code, out)
	}
	if !strings.Contains(errOut, `"code":"SESSION_REFERENCE_BUDGET_EXCEEDED"`) || !strings.Contains(errOut, "228b7b82") {
		t.Errorf("stderr %s", errOut)
	}
}
