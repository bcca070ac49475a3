package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/dsh-refls/dsh-refls/internal/dshgen"
	"github.com/dsh-refls/dsh-refls/internal/lsptest"
	"github.com/dsh-refls/dsh-refls/sessionref"
	"github.com/dsh-refls/dsh-refls/sessionref/titles"
)

// The sessions of the scopes store, by display title.
const (
	scopeParent  = "Refactor config loader"
	scopeChild   = "Audit config call sites"
	scopeFork    = "Try the loader with env vars"
	scopeWebhook = "Review pull request 12"
	scopeNoInput = "Archive digest"
	scopeOther   = "Weekly notes"
	scopeOld     = "Rotate the old logs"
)

// scopeIDs are the ids of those sessions.
var scopeIDs = map[string]string{
	scopeParent:  "8a1f4e2b-0c3d-4e5f-8a9b-1c2d3e4f5a6b",
	scopeChild:   "9b2a5f3c-1d4e-4f60-9bac-2d3e4f5a6b7c",
	scopeFork:    "c3d4e5f6-a7b8-4c9d-8e0f-1a2b3c4d5e6f",
	scopeWebhook: "d4e5f6a7-b8c9-4d0e-9f1a-2b3c4d5e6f70",
	scopeNoInput: "e5f6a7b8-c9d0-4e1f-8a2b-3c4d5e6f7081",
	scopeOther:   "f6a7b8c9-d0e1-4f2a-9b3c-4d5e6f708192",
	scopeOld:     "a7b8c9d0-e1f2-4a3b-8c4d-5e6f708192a3",
}

// scopeStore writes a store of every kind of session: in workspace ws a
// parent, its subagent child, a fork of it, a webhook's session, one a
// plugin alone wrote and one last active 20 days ago; one in another
// directory. The fork and the webhook session are v4, the rest v0.
func scopeStore(t *testing.T, root, ws string, now time.Time) {
	t.Helper()
	ago := func(d time.Duration) int64 { return now.Add(-d).UnixMilli() }
	turn := func(prompt, title string) func(*dshgen.Turn) {
		return func(tt *dshgen.Turn) { tt.UserText(prompt); tt.Title(title, "provider"); tt.AssistantText("Done.") }
	}
	sessions := []*dshgen.Session{
		dshgen.NewSession(scopeIDs[scopeParent]).Cwd(ws).CreatedAt(ago(30 * time.Hour)).Turn(turn("Refactor the config loader.", scopeParent)),
		dshgen.NewSession(scopeIDs[scopeChild]).Cwd(ws).CreatedAt(ago(29 * time.Hour)).Parent(scopeIDs[scopeParent]).
			Descriptor(scopeChild).Turn(turn("List every config call site.", "List every config")),
		dshgen.NewV4Session(scopeIDs[scopeFork]).Cwd(ws).CreatedAt(ago(28*time.Hour)).ForkOf(scopeIDs[scopeParent], 0).
			Turn(turn("Try reading the settings from the environment.", scopeFork)),
		dshgen.NewV4Session(scopeIDs[scopeWebhook]).Cwd(ws).CreatedAt(ago(2 * time.Hour)).Turn(func(tt *dshgen.Turn) {
			tt.Webhook("Review pull request #12 of the config loader.")
			tt.Title(scopeWebhook, "provider")
			tt.AssistantText("Reviewed: two comments.")
		}),
		dshgen.NewSession(scopeIDs[scopeNoInput]).Cwd(ws).CreatedAt(ago(3 * time.Hour)).Turn(func(tt *dshgen.Turn) {
			tt.UserPlugin("session-archive", "Digest the archived config sessions.")
			tt.Title(scopeNoInput, "provider")
			tt.AssistantText("Digest written.")
		}),
		dshgen.NewSession(scopeIDs[scopeOther]).Cwd("/home/dev/notes").CreatedAt(ago(5 * time.Hour)).Turn(turn("Summarise the config notes.", scopeOther)),
		dshgen.NewSession(scopeIDs[scopeOld]).Cwd(ws).CreatedAt(ago(20 * 24 * time.Hour)).Turn(turn("Rotate the config logs.", scopeOld)),
	}
	for _, s := range sessions {
		if _, err := s.Save(root, dshgen.Raw); err != nil {
			t.Fatal(err)
		}
	}
}

// scopeServer starts the binary over a scopes store with a workspace that
// holds files whose names start like the switches, and waits (within
// abuseTimeout) until every session is indexed.
func scopeServer(t *testing.T, settings map[string]any) (*lsptest.Editor, string) {
	t.Helper()
	root, ws := t.TempDir(), t.TempDir()
	scopeStore(t, root, ws, time.Now())
	for _, f := range []string{"here:todo.md", "allowed.go", "recent-changes.md"} {
		if err := os.WriteFile(filepath.Join(ws, f), []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(binary, "--sessions-root", root, "--watch", "off", "--no-index-cache")
	cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+t.TempDir())
	opts := map[string]any{"cwd": ws, "recallSearch": false}
	for k, v := range settings {
		opts[k] = v
	}
	e, err := lsptest.Start(cmd, lsptest.Config{
		RootURI: "file://" + ws, InitializationOptions: opts,
		Capabilities: map[string]any{"textDocument": map[string]any{"hover": map[string]any{"contentFormat": []string{"markdown"}}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = e.Close()
		<-e.Done()
		_ = cmd.Wait()
	})
	ctx, cancel := context.WithTimeout(context.Background(), abuseTimeout)
	defer cancel()
	if err := e.Initialize(ctx, nil); err != nil {
		t.Fatal(err)
	}
	for {
		var st struct {
			SessionsIndexed int  `json:"sessionsIndexed"`
			Building        bool `json:"building"`
		}
		if err := e.Status(ctx, &st); err != nil {
			t.Fatalf("waiting for the index of %d sessions: %v", len(scopeIDs), err)
		}
		if !st.Building && st.SessionsIndexed == len(scopeIDs) {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the index never listed the %d sessions (last status %+v)", len(scopeIDs), st)
		case <-time.After(20 * time.Millisecond):
		}
	}
	return e, ws
}

// labels types text (with its cursor) into a document and returns the
// labels completion lists, in order.
func labels(t *testing.T, e *lsptest.Editor, uri, text string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), abuseTimeout)
	defer cancel()
	var pos lsptest.Position
	var err error
	if _, _, open := e.Text(uri); open {
		pos, err = e.SetText(ctx, uri, text)
	} else {
		pos, err = e.OpenFile(ctx, uri, text)
	}
	if err != nil {
		t.Fatal(err)
	}
	var list struct {
		Items []struct {
			Label    string `json:"label"`
			SortText string `json:"sortText"`
		} `json:"items"`
	}
	if err := e.Completion(ctx, uri, pos, &list); err != nil {
		t.Fatal(err)
	}
	sort.SliceStable(list.Items, func(i, j int) bool { return list.Items[i].SortText < list.Items[j].SortText })
	out := make([]string, len(list.Items))
	for i, it := range list.Items {
		out[i] = it.Label
	}
	return out
}

// sessionLabels keeps the session titles of the scopes store in got.
func sessionLabels(got []string) []string {
	var out []string
	for _, l := range got {
		if _, ok := scopeIDs[l]; ok {
			out = append(out, l)
		}
	}
	sort.Strings(out)
	return out
}

func sorted(s ...string) []string { sort.Strings(s); return s }

// TestBinarySessionScopes types every scope switch into the real binary
// with the default settings: the hidden kinds are left out at @ and in
// every scope but @all:, @here: lists this workspace's sessions, @recent:
// those of the last week, a typed id lists a hidden session, and files
// whose names start like a switch are still found.
func TestBinarySessionScopes(t *testing.T) {
	e, ws := scopeServer(t, nil)
	uri := "file://" + ws + "/prompt.md"
	visible := sorted(scopeParent, scopeFork, scopeOther, scopeOld)
	for _, tt := range []struct {
		typed string
		want  []string
	}{
		{"@", visible},
		{"@config", sorted(scopeParent)}, // not the child, "Audit config call sites"
		{"@all:config", sorted(scopeParent, scopeChild)},
		{"@all:", sorted(scopeParent, scopeChild, scopeFork, scopeWebhook, scopeNoInput, scopeOther, scopeOld)},
		{"@all:audit", sorted(scopeChild)},
		{"@here:", sorted(scopeParent, scopeFork, scopeOld)},
		{"@recent:", sorted(scopeParent, scopeFork, scopeOther)},
		{"@audit", nil},
		{"@" + scopeIDs[scopeChild][:8], sorted(scopeChild)}, // an id names the session
		{"@" + scopeIDs[scopeChild][:3], nil},
	} {
		if got := sessionLabels(labels(t, e, uri, "See "+tt.typed+lsptest.Cursor)); !slices.Equal(got, tt.want) {
			t.Errorf("%s lists %q, want %q", tt.typed, got, tt.want)
		}
	}
	// Files are found by all that was typed: a name that starts like a
	// switch, and the words of the switches without their colon.
	for typed, file := range map[string]string{"@here:todo": "here:todo.md", "@allowed": "allowed.go", "@recent-ch": "recent-changes.md", "@all": "allowed.go"} {
		if got := labels(t, e, uri, "See "+typed+lsptest.Cursor); !slices.Contains(got, file) {
			t.Errorf("%s does not list %s: %q", typed, file, got)
		}
	}
	// dsh/candidates keeps dsh's list: every session, hidden kinds too.
	ctx, cancel := context.WithTimeout(context.Background(), abuseTimeout)
	defer cancel()
	var cands []titles.Candidate
	if err := e.Call(ctx, "dsh/candidates", map[string]any{"query": ""}, &cands); err != nil {
		t.Fatal(err)
	}
	if len(cands) != len(scopeIDs) {
		t.Errorf("dsh/candidates lists %d sessions, want all %d", len(cands), len(scopeIDs))
	}
	// A hidden session mentioned by id still resolves: prepared, and no
	// diagnostic.
	mention := sessionref.Mention(scopeChild, scopeIDs[scopeChild])
	var prep struct {
		References []sessionref.Reference `json:"references"`
	}
	if err := e.Prepare(ctx, map[string]any{"text": "see " + mention}, &prep); err != nil || len(prep.References) != 1 {
		t.Errorf("prepare of the hidden child: %+v, %v", prep, err)
	}
	// Beside a mention of a session no store holds, which is diagnosed,
	// the hidden child's mention is not.
	diagURI := "file://" + ws + "/diagnosed.md"
	unknown := sessionref.Mention("Gone", "no-such-session")
	if _, err := e.OpenFile(ctx, diagURI, "see "+mention+"\nand "+unknown); err != nil {
		t.Fatal(err)
	}
	m, err := e.Await(ctx, lsptest.DiagnosticsFor(diagURI, -1))
	if err != nil {
		t.Fatalf("no diagnostics for %s: %v", diagURI, err)
	}
	var diags struct {
		Diagnostics []struct {
			Range struct {
				Start struct{ Line int } `json:"start"`
			} `json:"range"`
			Message string `json:"message"`
		} `json:"diagnostics"`
	}
	if err := m.DecodeParams(&diags); err != nil {
		t.Fatal(err)
	}
	if len(diags.Diagnostics) != 1 || diags.Diagnostics[0].Range.Start.Line != 1 {
		t.Errorf("diagnostics %+v, want one, on the unknown session's line 1", diags.Diagnostics)
	}
}

// TestBinarySessionScopeSettings: sessionScope "workspace" narrows a bare
// @ to this workspace, a switch still overrides it, and
// showAutomationSessions lists the hidden kinds; both take effect on a
// configuration change, with no restart.
func TestBinarySessionScopeSettings(t *testing.T) {
	e, ws := scopeServer(t, map[string]any{"sessionScope": "workspace"})
	uri := "file://" + ws + "/prompt.md"
	if got, want := sessionLabels(labels(t, e, uri, "@"+lsptest.Cursor)), sorted(scopeParent, scopeFork, scopeOld); !slices.Equal(got, want) {
		t.Errorf("sessionScope workspace: @ lists %q, want %q", got, want)
	}
	if got, want := sessionLabels(labels(t, e, uri, "@recent:"+lsptest.Cursor)), sorted(scopeParent, scopeFork, scopeOther); !slices.Equal(got, want) {
		t.Errorf("sessionScope workspace: @recent: lists %q, want %q", got, want)
	}
	ctx, cancel := context.WithTimeout(context.Background(), abuseTimeout)
	defer cancel()
	if err := e.Notify(ctx, "workspace/didChangeConfiguration", map[string]any{"settings": map[string]any{"dsh": map[string]any{
		"cwd": ws, "recallSearch": false, "sessionScope": "recent", "showAutomationSessions": true}}}); err != nil {
		t.Fatal(err)
	}
	want := sorted(scopeParent, scopeChild, scopeFork, scopeWebhook, scopeNoInput, scopeOther)
	var got []string
	for deadline := time.Now().Add(abuseTimeout); ; time.Sleep(20 * time.Millisecond) {
		if got = sessionLabels(labels(t, e, uri, "@"+lsptest.Cursor)); slices.Equal(got, want) || time.Now().After(deadline) {
			break
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("sessionScope recent with showAutomationSessions: @ lists %q, want %q", got, want)
	}
}

// TestBinaryHoverRelations hovers mentions of a parent, its subagent
// child, its fork and a webhook's session: each says how it is related,
// and a hidden kind says how to list it.
func TestBinaryHoverRelations(t *testing.T) {
	e, ws := scopeServer(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), abuseTimeout)
	defer cancel()
	hover := func(title string) string {
		t.Helper()
		uri := "file://" + ws + "/hover-" + scopeIDs[title] + ".md"
		pos, err := e.OpenFile(ctx, uri, "x "+lsptest.Cursor+sessionref.Mention(title, scopeIDs[title]))
		if err != nil {
			t.Fatal(err)
		}
		var h struct {
			Contents struct{ Value string } `json:"contents"`
		}
		if err := e.Hover(ctx, uri, pos, &h); err != nil {
			t.Fatal(err)
		}
		return h.Contents.Value
	}
	parentURI := "`" + sessionref.EncodeURI(scopeIDs[scopeParent]) + "`"
	for title, want := range map[string][]string{
		scopeChild:   {"child of **Refactor config loader** (" + parentURI + ")", "subagent child: not listed at @ unless you type `@all:`"},
		scopeFork:    {"forked from **Refactor config loader** (" + parentURI + ")"},
		scopeParent:  {"1 subagent child: **Audit config call sites**", "1 fork: **Try the loader with env vars**"},
		scopeWebhook: {"automation: not listed at @ unless you type `@all:`"},
		scopeNoInput: {"no prompt: not listed at @ unless you type `@all:`"},
	} {
		got := hover(title)
		for _, w := range want {
			if !strings.Contains(got, w) {
				t.Errorf("hover of %s lacks %q:\n%s", title, w, got)
			}
		}
		if title != scopeChild && title != scopeFork && strings.Contains(got, "child of") {
			t.Errorf("hover of %s says child of:\n%s", title, got)
		}
	}
	if got := hover(scopeOther); strings.Contains(got, "child") || strings.Contains(got, "fork") || strings.Contains(got, "not listed") {
		t.Errorf("hover of an unrelated interactive session speaks of relations:\n%s", got)
	}
}
