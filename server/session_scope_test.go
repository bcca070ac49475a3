package server

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dsh-refls/dsh-refls/completion"
	"github.com/dsh-refls/dsh-refls/internal/lsptest"
	"github.com/dsh-refls/dsh-refls/sessionref/titles"
)

// TestSessionScopeSettings: the defaults keep today's list (every scope,
// hidden kinds hidden), the values are checked, and a bad one fails
// initialize with INVALID_CONFIG naming the key.
func TestSessionScopeSettings(t *testing.T) {
	d := DefaultConfig()
	if d.SessionScope != sessionScopeAll || d.ShowAutomationSessions {
		t.Errorf("defaults sessionScope %q, showAutomationSessions %v; want %q, false", d.SessionScope, d.ShowAutomationSessions, sessionScopeAll)
	}
	for _, v := range []string{sessionScopeAll, sessionScopeWorkspace, sessionScopeRecent} {
		c, _, err := applyConfig(d, json.RawMessage(`{"sessionScope":"`+v+`","showAutomationSessions":true}`))
		if err != nil || c.SessionScope != v || !c.ShowAutomationSessions {
			t.Errorf("sessionScope %q: %+v, %v", v, c, err)
		}
	}
	for _, tt := range []struct {
		settings map[string]any
		field    string
		says     string
	}{
		{map[string]any{"sessionScope": "here"}, "sessionScope", `"workspace", "all" or "recent"`},
		{map[string]any{"sessionScope": "All"}, "sessionScope", `got "All"`},
		{map[string]any{"sessionScope": 3}, "sessionScope", "must be a string"},
		{map[string]any{"showAutomationSessions": "yes"}, "showAutomationSessions", "true or false"},
	} {
		opts, _, _ := testOptions(t)
		h := newHarness(t, opts)
		err := h.call("initialize", initParams(initOptions{settings: tt.settings}), nil)
		if code, scode := rpcError(t, err); code != CodeInvalidConfig || scode != "SESSION_REFERENCE_INVALID_CONFIG" {
			t.Fatalf("%v: code %d/%s, want INVALID_CONFIG", tt.settings, code, scode)
		}
		var e *lsptest.Error
		_ = asRPC(err, &e)
		var data ErrorData
		_ = json.Unmarshal(e.Data, &data)
		if data.Field != tt.field || !strings.Contains(e.Message, tt.says) {
			t.Errorf("%v: error %q names %q, want %q saying %s", tt.settings, e.Message, data.Field, tt.field, tt.says)
		}
	}
}

// TestSessionQueryOf resolves each switch against each setting: a switch
// replaces sessionScope for its token, `@all:` lists every kind, and
// showAutomationSessions shows the hidden kinds in every scope.
func TestSessionQueryOf(t *testing.T) {
	now := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	s := &Server{opts: Options{Now: func() time.Time { return now }}}
	week := now.Add(-7 * 24 * time.Hour).UnixMilli()
	for _, tt := range []struct {
		setting string
		show    bool
		typed   string
		text    string
		want    titles.Scope
	}{
		{sessionScopeAll, false, "@rate", "rate", titles.Scope{HideKinds: true}},
		{sessionScopeAll, true, "@rate", "rate", titles.Scope{}},
		{sessionScopeWorkspace, false, "@rate", "rate", titles.Scope{WorkspaceOnly: true, HideKinds: true}},
		{sessionScopeRecent, false, "@", "", titles.Scope{ActiveSince: week, HideKinds: true}},
		{sessionScopeRecent, true, "@", "", titles.Scope{ActiveSince: week}},
		{sessionScopeAll, false, "@here:rate", "rate", titles.Scope{WorkspaceOnly: true, HideKinds: true}},
		{sessionScopeWorkspace, false, "@recent:", "", titles.Scope{ActiveSince: week, HideKinds: true}},
		{sessionScopeWorkspace, false, "@all:rate", "rate", titles.Scope{}},
		{sessionScopeRecent, false, "@all:", "", titles.Scope{}},
		{sessionScopeAll, false, "@allowed", "allowed", titles.Scope{HideKinds: true}},
	} {
		tok, _ := completion.At(tt.typed, len(tt.typed))
		got := s.sessionQueryOf(tok, Config{SessionScope: tt.setting, ShowAutomationSessions: tt.show})
		if got.text != tt.text || got.scope != tt.want {
			t.Errorf("%s, show %v, %q: %q %+v, want %q %+v", tt.setting, tt.show, tt.typed, got.text, got.scope, tt.text, tt.want)
		}
	}
}

// TestColonTriggersCompletion: ":" is a trigger character, so a client that
// opens the menu only at trigger characters opens it again at the colon of
// a switch; a colon outside an @ token gets an empty list.
func TestColonTriggersCompletion(t *testing.T) {
	opts, fake, ws := testOptions(t)
	h := newHarness(t, opts)
	res := h.initialize(initOptions{root: ws, settings: map[string]any{"cwd": "/home/dev/proj"}})
	fake.waitBuilt(t)
	if !slices.Contains(res.Capabilities.CompletionProvider.TriggerCharacters, ":") {
		t.Errorf(": is not a trigger character: %v", res.Capabilities.CompletionProvider.TriggerCharacters)
	}
	if list := completeAt(t, h, "file:///colon.md", "see http:"+cursor); len(list.Items) != 0 {
		t.Errorf("a colon outside an @ token lists %v", labelsOf(list))
	}
	if list := completeAt(t, h, "file:///switch.md", "see @all:"+cursor); len(list.Items) == 0 || !list.IsIncomplete {
		t.Errorf("@all: lists %v (incomplete %v), want sessions, asked again as typing goes on", labelsOf(list), list.IsIncomplete)
	}
}
