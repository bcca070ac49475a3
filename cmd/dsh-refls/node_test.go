package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/dsh-refls/dsh-refls/sessionref/prepare"
	"github.com/dsh-refls/dsh-refls/sessionref/titles"
)

// nodeTarget is the session the Node client writes in (the multi-turn
// fixture).
const nodeTarget = "228b7b82-84ed-49b7-a567-981c03b28c77"

// TestNodeClient drives the binary from a real LSP client library
// (test/node/client.mjs, vscode-languageserver-protocol) over real pipes and
// checks that its dsh/prepare answer equals sessionref's for the same input.
func TestNodeClient(t *testing.T) {
	root := fixturesRoot(t)
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed; the Node client test needs node and `npm ci` in test/node")
	}
	dir, err := filepath.Abs(filepath.Join("..", "..", "test", "node"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "vscode-languageserver-protocol")); err != nil {
		t.Skipf("test/node/node_modules is missing; run `npm ci` in %s first", dir)
	}
	out := filepath.Join(t.TempDir(), "prepare.json")
	cmd := exec.Command(node, "client.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"DSH_REFLS_BIN="+binary,
		"DSH_REFLS_SESSIONS="+root,
		"DSH_REFLS_WORKSPACE="+t.TempDir(),
		"DSH_REFLS_OUT="+out,
		"XDG_CACHE_HOME="+t.TempDir(), // spill files, if any, stay in the test's directory
	)
	output, err := runCombined(cmd, 60*time.Second)
	if err != nil {
		t.Fatalf("node client: %v\n%s", err, output)
	}

	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatalf("the client wrote no prepare result: %v\n%s", err, output)
	}
	var got struct {
		PrepareText string             `json:"prepareText"`
		Prepared    prepare.TextResult `json:"prepared"`
	}
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	ix := titles.NewIndex(root, titles.IndexOptions{})
	if err := ix.Build(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	want, err := prepare.PrepareText(context.Background(), ix.Snapshot(), nodeTarget, got.PrepareText, prepare.ModeReplace, nil, prepare.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Prepared.AdditionalContext == nil || want.AdditionalContext == nil {
		t.Fatal("a context message is missing")
	}
	got.Prepared.AdditionalContext.ID, want.AdditionalContext.ID = "", ""
	gj, _ := json.Marshal(got.Prepared)
	wj, _ := json.Marshal(want)
	if string(gj) != string(wj) {
		t.Errorf("dsh/prepare over the wire differs from prepare.PrepareText:\n got %s\nwant %s", gj, wj)
	}
}

// runCombined runs cmd with a deadline and returns its combined output.
func runCombined(cmd *exec.Cmd, d time.Duration) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	c := exec.CommandContext(ctx, cmd.Path, cmd.Args[1:]...)
	c.Dir, c.Env = cmd.Dir, cmd.Env
	return c.CombinedOutput()
}
