package server

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/dsh-refls/dsh-refls/completion"
	"github.com/dsh-refls/dsh-refls/sessionref/titles"
)

// The values of the sessionScope setting (docs/sessions.md).
const (
	sessionScopeAll       = "all"
	sessionScopeWorkspace = "workspace"
	sessionScopeRecent    = "recent"
)

// recentScopeWindow is how far back the recent scope reaches: sessions
// whose newest event (or creation) is at most a week old. A week holds
// what a person worked on since the same day last week, so Monday's list
// still shows Friday's sessions; a count ("the last 20") would list
// month-old sessions to someone who did little lately and cut a busy
// day's, and would not say "lately" at all.
const recentScopeWindow = 7 * 24 * time.Hour

// decodeSessionScope decodes the sessionScope setting.
func decodeSessionScope(v json.RawMessage) (string, error) {
	s, err := decodeString(v)
	if err != nil {
		return "", err
	}
	switch s {
	case sessionScopeAll, sessionScopeWorkspace, sessionScopeRecent:
		return s, nil
	}
	return "", fmt.Errorf(`must be "workspace", "all" or "recent", got %q`, s)
}

// sessionQuery is what completion asks the session index for one `@`
// token: the query after any scope switch, and the scope.
type sessionQuery struct {
	text  string
	scope titles.Scope
}

// sessionQueryOf reads the scope switch of tok (completion.SplitSwitch)
// and resolves it against the settings: a switch replaces sessionScope
// for this token; `@all:` also lists the hidden kinds, which
// showAutomationSessions lists always.
func (s *Server) sessionQueryOf(tok completion.Token, cfg Config) sessionQuery {
	sw, text := completion.SplitSwitch(tok)
	q := sessionQuery{text: text}
	scope := cfg.SessionScope
	switch sw {
	case completion.SwitchHere:
		scope = sessionScopeWorkspace
	case completion.SwitchRecent:
		scope = sessionScopeRecent
	case completion.SwitchAll:
		return q // every session of every kind
	}
	switch scope {
	case sessionScopeWorkspace:
		q.scope.WorkspaceOnly = true
	case sessionScopeRecent:
		q.scope.ActiveSince = s.now().Add(-recentScopeWindow).UnixMilli()
	}
	q.scope.HideKinds = !cfg.ShowAutomationSessions
	return q
}
