//go:build linux

package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/dsh-refls/dsh-refls/internal/dshgen"
	"github.com/dsh-refls/dsh-refls/sessionref"
	"github.com/dsh-refls/dsh-refls/sessionref/dshlog"
	"github.com/dsh-refls/dsh-refls/sessionref/dshlog/layout"
	"github.com/dsh-refls/dsh-refls/sessionref/titles"
)

// diskSecret is the content of a file outside the store that a log link
// points to; its first byte is one no reason spells on its own.
const diskSecret = "Qsecret:$6$SALT$HASH:19000:0:99999:7:::\n"

// wireStatus is the part of dsh/status these tests read.
type wireStatus struct {
	Building        bool             `json:"building"`
	SessionsIndexed int              `json:"sessionsIndexed"`
	Skipped         []dshlog.Skipped `json:"skipped"`
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
	var res []titles.Candidate
	if err := json.Unmarshal(a.Result, &res); err != nil {
		p.t.Fatalf("candidates %s: %v", a.Result, err)
	}
	var ids []string
	for _, c := range res {
		ids = append(ids, c.SessionID)
	}
	return ids
}

// demoStoreUnder writes the demo store to base/sessions for a workspace at
// base/ws, both under a new temporary directory base, and returns the three
// paths and the store's expected sessions.
func demoStoreUnder(t *testing.T) (base, store, ws string, expected []dshgen.Expected) {
	t.Helper()
	base = t.TempDir()
	store = filepath.Join(base, "sessions")
	ws = filepath.Join(base, "ws")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	expected, err := dshgen.DemoStoreFor(store, ws, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return base, store, ws, expected
}

// TestBinaryDoesNotFollowLogLinks serves a store whose session logs are
// symbolic links to a secret outside the store and to a well-formed log
// elsewhere: the binary lists neither, says "symbolic link" in their skip
// reasons, quotes no byte of the secret, and refuses to prepare them.
func TestBinaryDoesNotFollowLogLinks(t *testing.T) {
	base, store, ws, expected := demoStoreUnder(t)
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
	project := filepath.Join(store, layout.ProjectDir(ws, true))
	links := map[string]string{linkedID: elsewhere, "linked-shadow": secret}
	for id, target := range links {
		dir := filepath.Join(project, layout.EncodeSegment(id))
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
			if s.Path == filepath.Join(project, layout.EncodeSegment(id)) {
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

// TestBinaryCacheOnTheDisk serves a store whose index cache path holds a
// FIFO, next to a temporary file a killed save left an hour ago: the first
// build does not block (candidates and status answer, not "building"), the
// cache written in the FIFO's place is a regular file holding no byte of
// the logs' last 32 bytes (message text), and the stale temporary file is
// gone.
func TestBinaryCacheOnTheDisk(t *testing.T) {
	base, store, ws, expected := demoStoreUnder(t)
	cacheHome := filepath.Join(base, "cache")
	t.Setenv("XDG_CACHE_HOME", cacheHome) // for DefaultCachePath below only
	cachePath, err := titles.DefaultCachePath(store)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(cachePath), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(cachePath, 0o600); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(filepath.Dir(cachePath), ".index-killed.tmp")
	if err := os.WriteFile(stale, []byte("partial"), 0o600); err != nil {
		t.Fatal(err)
	}
	past := time.Now().Add(-time.Hour)
	if err := os.Chtimes(stale, past, past); err != nil {
		t.Fatal(err)
	}

	p := startWireCache(t, cacheHome, "--sessions-root", store, "--watch", "poll")
	p.initialize(ws, expected[0].ID)
	if st := p.status(); st.Building || st.SessionsIndexed == 0 {
		t.Errorf("status after the first build: %+v", st)
	}
	deadline := time.Now().Add(abuseTimeout)
	for {
		info, err := os.Lstat(cachePath)
		if err == nil && info.Mode().IsRegular() {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the cache was not written in the FIFO's place: %v %v", info, err)
		}
		time.Sleep(20 * time.Millisecond) // polling the file system for the save, bounded by the deadline
	}
	p.send(map[string]any{"id": "down", "method": "shutdown"})
	p.expectResult("shutdown", `"down"`)
	p.send(map[string]any{"method": "exit"})
	if _, code := p.finish(); code != 0 {
		t.Errorf("exit code %d\nstderr:\n%s", code, p.stderr.String())
	}
	cache, err := os.ReadFile(cachePath)
	if err != nil {
		t.Fatal(err)
	}
	logs, _ := filepath.Glob(filepath.Join(store, "*", "*", "session*.jsonl*"))
	if len(logs) == 0 {
		t.Fatal("no logs in the demo store")
	}
	for _, l := range logs {
		b, err := os.ReadFile(l)
		if err != nil {
			t.Fatal(err)
		}
		if tail := b[max(0, len(b)-32):]; bytes.Contains(cache, tail) {
			t.Errorf("the cache holds the last 32 bytes of %s: %q", l, tail)
		}
	}
	if _, err := os.Lstat(stale); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the stale temporary cache file is still there: %v", err)
	}
}

// TestBinaryHugeTitlesAreCapped serves a store with a 4 MiB title and a
// 4 MiB display title: each `@` completion answer stays small, every label
// is at most dshlog.MaxLabelBytes of valid UTF-8, and preparing a
// mention the server offered carries the same label.
func TestBinaryHugeTitlesAreCapped(t *testing.T) {
	_, store, ws, expected := demoStoreUnder(t)
	huge := "Huge " + strings.Repeat("ü", 2<<20)
	for _, s := range []*dshgen.Session{
		dshgen.NewSession("huge-title").Cwd(ws).Turn(func(tr *dshgen.Turn) { tr.UserText("q"); tr.Title(huge, "user") }),
		dshgen.NewSession("huge-label").Cwd(ws).DescriptorVersion(2, huge),
	} {
		if _, err := s.Save(store, dshgen.Raw); err != nil {
			t.Fatal(err)
		}
	}
	p := startWire(t, "--sessions-root", store, "--watch", "poll")
	p.initialize(ws, expected[0].ID)
	uri := "file://" + ws + "/msg.md"
	p.send(map[string]any{"method": "textDocument/didOpen", "params": map[string]any{"textDocument": map[string]any{
		"uri": uri, "languageId": "markdown", "version": 1, "text": "@"}}})
	for i := range 3 {
		start := time.Now()
		p.send(map[string]any{"id": i, "method": "textDocument/completion", "params": map[string]any{
			"textDocument": map[string]any{"uri": uri}, "position": map[string]any{"line": 0, "character": 1}}})
		a := p.expectResult("completion", fmt.Sprint(i))
		if !strings.Contains(string(a.Result), "Huge üü") {
			t.Fatalf("completion does not offer the huge-title sessions: %.300s", a.Result)
		}
		if len(a.Result) > 256<<10 {
			t.Errorf("completion answer of %d bytes", len(a.Result))
		}
		t.Logf("completion %d: %d bytes in %v", i, len(a.Result), time.Since(start))
	}
	p.send(map[string]any{"id": "c", "method": "dsh/candidates", "params": map[string]any{"query": "huge ü"}})
	a := p.expectResult("candidates", `"c"`)
	var cands []titles.Candidate
	if err := json.Unmarshal(a.Result, &cands); err != nil {
		t.Fatal(err)
	}
	if len(cands) != 2 {
		t.Fatalf("%d candidates for the huge titles, want 2", len(cands))
	}
	for _, c := range cands {
		for _, l := range []string{c.Label, c.DisplayTitle} {
			if len(l) > dshlog.MaxLabelBytes || !utf8.ValidString(l) {
				t.Errorf("%s: label of %d bytes (valid UTF-8: %v)", c.SessionID, len(l), utf8.ValidString(l))
			}
		}
		p.send(map[string]any{"id": "prep", "method": "dsh/prepare", "params": map[string]any{"text": "see " + c.Mention}})
		a := p.expectResult("prepare", `"prep"`)
		var res struct {
			References []struct {
				SessionID string `json:"sessionId"`
				Label     string `json:"label"`
			} `json:"references"`
		}
		if err := json.Unmarshal(a.Result, &res); err != nil {
			t.Fatal(err)
		}
		if len(res.References) != 1 || res.References[0].Label != c.DisplayTitle {
			t.Errorf("%s: prepared references %+v, want the offered label (%d bytes)", c.SessionID, res.References, len(c.DisplayTitle))
		}
	}
	p.send(map[string]any{"id": "down", "method": "shutdown"})
	p.expectResult("shutdown", `"down"`)
	p.send(map[string]any{"method": "exit"})
	if _, code := p.finish(); code != 0 {
		t.Errorf("exit code %d\nstderr:\n%s", code, p.stderr.String())
	}
}
