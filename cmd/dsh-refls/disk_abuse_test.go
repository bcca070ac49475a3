//go:build linux

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dsh-refls/dsh-refls/internal/dshgen"
	"github.com/dsh-refls/dsh-refls/sessionref"
)

// diskSecret is the content of a file outside the store that a log link
// points to; its first byte is one no reason spells on its own.
const diskSecret = "Qsecret:$6$SALT$HASH:19000:0:99999:7:::\n"

// wireStatus is the part of dsh/status these tests read.
type wireStatus struct {
	Building        bool                 `json:"building"`
	SessionsIndexed int                  `json:"sessionsIndexed"`
	Skipped         []sessionref.Skipped `json:"skipped"`
}

// initialize opens a server session for target in ws and waits until the
// first session index build is done (candidates wait for it).
func (p *wireProc) initialize(ws, target string) {
	p.t.Helper()
	p.send(map[string]any{"id": "init", "method": "initialize", "params": map[string]any{
		"processId": nil, "rootUri": "file://" + ws, "capabilities": map[string]any{},
		"initializationOptions": map[string]any{"sessionId": target, "cwd": ws}}})
	p.expectResult("initialize", `"init"`)
	p.send(map[string]any{"method": "initialized", "params": map[string]any{}})
	p.send(map[string]any{"id": "first", "method": "dsh/candidates", "params": map[string]any{"query": ""}})
	p.expectResult("first candidates", `"first"`)
}

// status asks dsh/status.
func (p *wireProc) status() wireStatus {
	p.t.Helper()
	p.send(map[string]any{"id": "st", "method": "dsh/status", "params": map[string]any{}})
	a := p.expectResult("status", `"st"`)
	var st wireStatus
	if err := json.Unmarshal(a.Result, &st); err != nil {
		p.t.Fatalf("status %s: %v", a.Result, err)
	}
	return st
}

// candidateIDs asks dsh/candidates for query and returns the ids offered.
func (p *wireProc) candidateIDs(query string) []string {
	p.t.Helper()
	p.send(map[string]any{"id": "c", "method": "dsh/candidates", "params": map[string]any{"query": query}})
	a := p.expectResult("candidates", `"c"`)
	var res []sessionref.Candidate
	if err := json.Unmarshal(a.Result, &res); err != nil {
		p.t.Fatalf("candidates %s: %v", a.Result, err)
	}
	var ids []string
	for _, c := range res {
		ids = append(ids, c.SessionID)
	}
	return ids
}

// TestBinaryDoesNotFollowLogLinks serves a store whose session logs are
// symbolic links to a secret outside the store and to a well-formed log
// elsewhere: the binary lists neither, says "symbolic link" in their skip
// reasons, quotes no byte of the secret, and refuses to prepare them.
func TestBinaryDoesNotFollowLogLinks(t *testing.T) {
	base := t.TempDir()
	store := filepath.Join(base, "sessions")
	ws := filepath.Join(base, "ws")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	expected, err := dshgen.DemoStoreFor(store, ws, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(base, "shadow")
	if err := os.WriteFile(secret, []byte(diskSecret), 0o600); err != nil {
		t.Fatal(err)
	}
	const linkedID = "linked-elsewhere"
	elsewhere := filepath.Join(base, "elsewhere", "session.jsonl")
	if err := dshgen.NewSession(linkedID).Cwd(ws).Turn(func(tr *dshgen.Turn) {
		tr.UserText("ELSEWHERE-LOG outside the store")
		tr.Title("Elsewhere", "user")
	}).SaveAs(elsewhere, dshgen.Raw); err != nil {
		t.Fatal(err)
	}
	project := filepath.Join(store, sessionref.ProjectDir(ws, true))
	links := map[string]string{linkedID: elsewhere, "linked-shadow": secret}
	for id, target := range links {
		dir := filepath.Join(project, sessionref.EncodeSegment(id))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, filepath.Join(dir, "session.jsonl")); err != nil {
			t.Fatal(err)
		}
	}

	p := startWire(t, "--sessions-root", store, "--watch", "poll")
	p.initialize(ws, expected[0].ID)
	st := p.status()
	found := 0
	for _, s := range st.Skipped {
		if strings.ContainsAny(s.Reason, "Q$") || strings.Contains(s.Reason, "ELSEWHERE") {
			t.Errorf("skip reason of %s quotes file bytes: %q", s.Path, s.Reason)
		}
		for id := range links {
			if s.Path == filepath.Join(project, sessionref.EncodeSegment(id)) {
				found++
				if !strings.Contains(s.Reason, "symbolic link") {
					t.Errorf("%s skipped for %q, want the symbolic link named", id, s.Reason)
				}
			}
		}
	}
	if found != len(links) {
		t.Errorf("%d of %d linked sessions reported as skipped: %+v", found, len(links), st.Skipped)
	}
	for _, id := range p.candidateIDs("") {
		if _, linked := links[id]; linked {
			t.Errorf("linked session %q is offered", id)
		}
	}
	p.send(map[string]any{"id": "prep", "method": "dsh/prepare", "params": map[string]any{
		"text": "see " + sessionref.Mention("Elsewhere", linkedID)}})
	a := p.response()
	if a.Error == nil && strings.Contains(string(a.Result), "ELSEWHERE-LOG") {
		t.Errorf("the linked log was prepared: %s", a.Result)
	}
	p.send(map[string]any{"id": "down", "method": "shutdown"})
	p.expectResult("shutdown", `"down"`)
	p.send(map[string]any{"method": "exit"})
	if _, code := p.finish(); code != 0 {
		t.Errorf("exit code %d\nstderr:\n%s", code, p.stderr.String())
	}
}
