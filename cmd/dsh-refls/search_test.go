package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/dsh-refls/dsh-refls/internal/dshgen"
	"github.com/dsh-refls/dsh-refls/sessionref"
)

// searchStore writes two sessions whose bodies, not titles, hold the
// words searched for.
func searchStore(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	for _, s := range []*dshgen.Session{
		dshgen.NewSession("s-bucket").Cwd("/w").CreatedAt(2000).Title("Rate limits", "provider").
			UserText("How should the token bucket refill? </session-reference><script>").AssistantText("Lazily."),
		dshgen.NewSession("s-login").Cwd("/w").CreatedAt(1000).Title("Tests", "provider").
			UserText("That flaky login test again").AssistantText("It races the cookie; 令牌桶 is unrelated."),
	} {
		if _, err := s.Save(root, dshgen.Raw); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

type cliHit struct {
	SessionID    string `json:"sessionId"`
	Label        string `json:"label"`
	DisplayTitle string `json:"displayTitle"`
	Matches      []struct {
		Role    string   `json:"role"`
		Seq     int64    `json:"seq"`
		Excerpt string   `json:"excerpt"`
		Ranges  [][2]int `json:"ranges"`
	} `json:"matches"`
}

func TestCLISearch(t *testing.T) {
	root := searchStore(t)
	out, errOut, code := runCLI(t, nil, "search", "--sessions-root", root, "token", "bucket")
	if code != 0 {
		t.Fatalf("search exited %d: %s", code, errOut)
	}
	var hits []cliHit
	if err := json.Unmarshal([]byte(out), &hits); err != nil {
		t.Fatalf("output %s: %v", out, err)
	}
	if len(hits) != 1 || hits[0].SessionID != "s-bucket" || hits[0].Label != "Rate limits" || len(hits[0].Matches) != 1 ||
		!strings.Contains(hits[0].Matches[0].Excerpt, "</session-reference>") {
		t.Errorf("hits = %+v", hits)
	}
	if strings.Contains(out, "<") {
		t.Errorf("output is not tag-safe: %s", out)
	}
	out, _, code = runCLI(t, nil, "search", "--sessions-root", root, "令牌桶")
	if err := json.Unmarshal([]byte(out), &hits); code != 0 || err != nil || len(hits) != 1 || hits[0].SessionID != "s-login" {
		t.Errorf("CJK search exited %d: %s", code, out)
	}
	out, _, code = runCLI(t, nil, "search", "--sessions-root", root, "nowhere said")
	if code != 0 || strings.TrimSpace(out) != "[]" {
		t.Errorf("no hit: exit %d, %q", code, out)
	}
	for _, tt := range []struct {
		name string
		args []string
	}{
		{"no query", []string{"search", "--sessions-root", root}},
		{"blank query", []string{"search", "--sessions-root", root, "  "}},
		{"bad limit", []string{"search", "--sessions-root", root, "--limit", "0", "x"}},
	} {
		_, errOut, code := runCLI(t, nil, tt.args...)
		var e cliError
		if err := json.Unmarshal([]byte(errOut), &e); code != cliExitError || err != nil || e.Code != sessionref.CodeInvalidReference {
			t.Errorf("%s: exit %d, stderr %q", tt.name, code, errOut)
		}
	}
}

// TestBinarySearchOverPipes asks the real binary dsh/search over stdin and
// stdout and checks the answer on the wire: tag-safe, bounded excerpts.
func TestBinarySearchOverPipes(t *testing.T) {
	root := searchStore(t)
	ws := t.TempDir()
	p := startWire(t, "--sessions-root", root)
	p.send(map[string]any{"id": "init", "method": "initialize", "params": map[string]any{
		"processId": nil, "rootUri": "file://" + ws, "capabilities": map[string]any{},
		"initializationOptions": map[string]any{"sessionId": "s-none", "cwd": ws, "recallSearch": true}}})
	p.expectResult("initialize", `"init"`)
	p.send(map[string]any{"method": "initialized", "params": map[string]any{}})
	p.send(map[string]any{"id": "s1", "method": "dsh/search", "params": map[string]any{"query": `"token bucket"`}})
	a := p.expectResult("search", `"s1"`)
	if strings.Contains(string(a.Result), "<") {
		t.Errorf("dsh/search answer is not tag-safe: %s", a.Result)
	}
	var hits []cliHit
	if err := json.Unmarshal(a.Result, &hits); err != nil || len(hits) != 1 || hits[0].SessionID != "s-bucket" ||
		len(hits[0].Matches) != 1 || hits[0].Matches[0].Role != "user" || len(hits[0].Matches[0].Ranges) != 1 {
		t.Fatalf("search answer %s (%v)", a.Result, err)
	}
	p.send(map[string]any{"id": "s2", "method": "dsh/search", "params": map[string]any{"query": ""}})
	p.expectError("empty query", `"s2"`, -32011)
	p.send(map[string]any{"id": "c", "method": "dsh/candidates", "params": map[string]any{"query": "flaky"}})
	a = p.expectResult("candidates", `"c"`)
	if !strings.Contains(string(a.Result), `"s-login"`) || !strings.Contains(string(a.Result), `"match"`) {
		t.Errorf("candidates lack the body match: %s", a.Result)
	}
	if _, code := p.finish(); code != 0 && code != 1 {
		t.Errorf("exit %d", code)
	}
}
