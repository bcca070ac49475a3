package main

import (
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dsh-refls/dsh-refls/completion/frecency"
	"github.com/dsh-refls/dsh-refls/internal/dshgen"
)

// frecencyRun is one server process over a demo store and workspace with
// its own user cache dir, shared by the restarts of a test.
type frecencyRun struct {
	t                *testing.T
	store, ws, cache string
	expected         []dshgen.Expected
}

func newFrecencyRun(t *testing.T) *frecencyRun {
	t.Helper()
	r := &frecencyRun{t: t, store: t.TempDir(), ws: t.TempDir(), cache: t.TempDir()}
	var err error
	if r.expected, err = dshgen.DemoStoreFor(r.store, r.ws, time.Now()); err != nil {
		t.Fatal(err)
	}
	return r
}

// statePath is where the binary keeps the workspace's picks: the same
// function, under the test's cache dir.
func (r *frecencyRun) statePath() string {
	r.t.Helper()
	r.t.Setenv("XDG_CACHE_HOME", r.cache)
	p, err := frecency.DefaultPath(r.ws)
	if err != nil {
		r.t.Fatal(err)
	}
	return p
}

// start starts the binary and initializes it with settings.
func (r *frecencyRun) start(settings map[string]any) *wireProc {
	r.t.Helper()
	p := startWireCache(r.t, r.cache, "--sessions-root", r.store, "--watch", "off")
	if settings == nil {
		settings = map[string]any{}
	}
	settings["cwd"] = r.ws
	settings["recallSearch"] = false
	p.send(map[string]any{"id": "init", "method": "initialize", "params": map[string]any{
		"processId": nil, "rootUri": "file://" + r.ws, "capabilities": map[string]any{},
		"initializationOptions": settings}})
	p.expectResult("initialize", `"init"`)
	p.send(map[string]any{"method": "initialized", "params": map[string]any{}})
	p.send(map[string]any{"method": "textDocument/didOpen", "params": map[string]any{"textDocument": map[string]any{
		"uri": "file://" + r.ws + "/prompt.md", "languageId": "markdown", "version": 1, "text": "Please read @"}}})
	return p
}

type wireItem struct {
	Label   string          `json:"label"`
	Data    json.RawMessage `json:"data"`
	Command *wireCommand    `json:"command"`
}

type wireCommand struct {
	Command   string            `json:"command"`
	Arguments []json.RawMessage `json:"arguments"`
}

// resolved is the command completionItem/resolve gives it, nil for none.
func resolved(t *testing.T, p *wireProc, id int, it wireItem) *wireCommand {
	t.Helper()
	p.send(map[string]any{"id": id, "method": "completionItem/resolve", "params": map[string]any{"label": it.Label, "data": it.Data}})
	var r wireItem
	if err := json.Unmarshal(p.expectResult("resolve", strconv.Itoa(id)).Result, &r); err != nil {
		t.Fatal(err)
	}
	return r.Command
}

// accept runs the command it resolves with, as an editor does on accepting it.
func accept(t *testing.T, p *wireProc, id int, it wireItem) {
	t.Helper()
	cmd := resolved(t, p, id, it)
	if cmd == nil || cmd.Command != "dsh-refls.accepted" || len(cmd.Arguments) != 1 {
		t.Fatalf("%q resolves with command %+v, want dsh-refls.accepted with its data", it.Label, cmd)
	}
	p.send(map[string]any{"id": id + 1, "method": "workspace/executeCommand", "params": map[string]any{
		"command": cmd.Command, "arguments": cmd.Arguments}})
	p.expectResult("accepted", strconv.Itoa(id+1))
}

// complete asks for the list at the end of "Please read @", once the
// session index is built.
func (r *frecencyRun) complete(p *wireProc, id int) []wireItem {
	r.t.Helper()
	deadline := time.Now().Add(abuseTimeout)
	for poll := 0; ; poll++ {
		p.send(map[string]any{"id": "status" + jsonInt(poll), "method": "dsh/status"})
		var st struct {
			SessionsIndexed int  `json:"sessionsIndexed"`
			Building        bool `json:"building"`
		}
		if err := json.Unmarshal(p.expectResult("status", `"status`+jsonInt(poll)+`"`).Result, &st); err != nil {
			r.t.Fatal(err)
		}
		if st.SessionsIndexed > 0 && !st.Building {
			break
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("the session index was not built within %v", abuseTimeout)
		}
		time.Sleep(20 * time.Millisecond) // the poll's pause, within the deadline
	}
	p.send(map[string]any{"id": id, "method": "textDocument/completion", "params": map[string]any{
		"textDocument": map[string]any{"uri": "file://" + r.ws + "/prompt.md"}, "position": map[string]any{"line": 0, "character": 13}}})
	var list struct {
		Items []wireItem `json:"items"`
	}
	if err := json.Unmarshal(p.expectResult("completion", jsonInt(id)).Result, &list); err != nil {
		r.t.Fatal(err)
	}
	if len(list.Items) == 0 {
		r.t.Fatal("an empty list")
	}
	return list.Items
}

func jsonInt(i int) string { return strconv.Itoa(i) }

func (r *frecencyRun) find(items []wireItem, label string) wireItem {
	r.t.Helper()
	for _, it := range items {
		if it.Label == label {
			return it
		}
	}
	r.t.Fatalf("%q not listed", label)
	return wireItem{}
}

// shutdown ends the process as an editor does and checks the exit code.
func shutdown(t *testing.T, p *wireProc) {
	t.Helper()
	p.send(map[string]any{"id": "bye", "method": "shutdown"})
	p.expectResult("shutdown", `"bye"`)
	p.send(map[string]any{"method": "exit"})
	if _, code := p.finish(); code != 0 {
		t.Errorf("exit code %d, want 0\nstderr:\n%s", code, p.stderr.String())
	}
}

// A session picked through its command ranks first among the sessions of
// its directory after a restart; a corrupt state file is ignored with one
// log line, serving goes on, and the next save replaces it.
func TestBinaryFrecencySurvivesRestartAndCorruption(t *testing.T) {
	r := newFrecencyRun(t)
	path := r.statePath()
	p := r.start(nil)
	items := r.complete(p, 1)
	if items[0].Label != "Migration plan for the billing database" {
		t.Fatalf("at @ the newest session is listed first, got %q", items[0].Label)
	}
	accept(t, p, 2, r.find(items, "Fix flaky login test"))
	shutdown(t, p)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("no state file after the shutdown: %v", err)
	}
	if !strings.HasPrefix(string(data), "dsh-refls frecency 1\n") || !strings.Contains(string(data), r.expected[0].ID) ||
		strings.Contains(string(data), "login") || strings.Contains(string(data), r.ws) {
		t.Errorf("state file %s: want the header and the session's id, no title and no path", data)
	}

	p = r.start(nil)
	if items := r.complete(p, 1); items[0].Label != "Fix flaky login test" {
		t.Errorf("after a restart @ lists %q first, want the picked session", items[0].Label)
	}
	shutdown(t, p)

	if err := os.WriteFile(path, data[:len(data)/2], 0o600); err != nil {
		t.Fatal(err)
	}
	p = r.start(nil)
	items = r.complete(p, 1)
	if items[0].Label != "Migration plan for the billing database" {
		t.Errorf("with a corrupt state @ lists %q first", items[0].Label)
	}
	accept(t, p, 2, r.find(items, "Add rate limiting to the API"))
	shutdown(t, p)
	if n := strings.Count(p.stderr.String(), "frecency state"); n != 1 || !strings.Contains(p.stderr.String(), "replaced on the next save") {
		t.Errorf("%d log lines about the state, want one saying it is replaced:\n%s", n, p.stderr.String())
	}
	p = r.start(nil)
	if items := r.complete(p, 1); items[0].Label != "Add rate limiting to the API" {
		t.Errorf("after the corrupt file was replaced @ lists %q first", items[0].Label)
	}
	shutdown(t, p)
	if strings.Contains(p.stderr.String(), "frecency state") {
		t.Errorf("the replaced file was reported again:\n%s", p.stderr.String())
	}
}

// With the setting off items resolve without the command and nothing is
// written; the forget command removes what was saved.
func TestBinaryFrecencyOffAndForget(t *testing.T) {
	r := newFrecencyRun(t)
	path := r.statePath()
	p := r.start(map[string]any{"frecency": false})
	items := r.complete(p, 1)
	for i, it := range items {
		if it.Command != nil || resolved(t, p, 100+i, it) != nil {
			t.Errorf("item %q carries or resolves with a command with frecency off", it.Label)
		}
	}
	p.send(map[string]any{"id": 2, "method": "workspace/executeCommand", "params": map[string]any{
		"command": "dsh-refls.accepted", "arguments": []any{map[string]any{"kind": "session", "sessionId": r.expected[0].ID}}}})
	p.expectResult("accepted while off", "2")
	shutdown(t, p)
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("a state file was written with frecency off (%v)", err)
	}

	p = r.start(nil)
	items = r.complete(p, 1)
	accept(t, p, 2, r.find(items, "Fix flaky login test"))
	shutdown(t, p)
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("no state file: %v", err)
	}
	p = r.start(nil)
	p.send(map[string]any{"id": 3, "method": "workspace/executeCommand", "params": map[string]any{"command": "dsh-refls.forgetPicks"}})
	a := p.expectResult("forget", "3")
	if string(a.Result) != `{"forgotten":1}` {
		t.Errorf("forget answered %s", a.Result)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("the state file is still there after forget (%v)", err)
	}
	if items := r.complete(p, 4); items[0].Label != "Migration plan for the billing database" {
		t.Errorf("after forget @ lists %q first", items[0].Label)
	}
	shutdown(t, p)
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("a state file was written again after forget (%v)", err)
	}
}
