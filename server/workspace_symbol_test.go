package server

import (
	"path"
	"testing"
)

// TestWorkspaceSymbolsFindSessions: sessions are found by title, id and
// working directory and located at their recall preview; the prompt's own
// session is not listed.
func TestWorkspaceSymbolsFindSessions(t *testing.T) {
	opts, _, ws := testOptions(t)
	h := newHarness(t, opts)
	res := featureInit(t, h, initOptions{root: ws, settings: map[string]any{"sessionId": "s-target"}})
	if !res.Capabilities.WorkspaceSymbolProvider {
		t.Fatal("workspaceSymbolProvider not advertised to a client with workspace symbols")
	}
	query := func(q string) []symbolInformation {
		t.Helper()
		var out []symbolInformation
		h.mustCall("workspace/symbol", map[string]any{"query": q}, &out)
		return out
	}
	for _, c := range []struct{ query, want string }{
		{"parser", "Fix the parser"},
		{"s-beta", "Write `docs` for <api>"},
		{path.Base(testOtherCwd), "Write `docs` for <api>"},
	} {
		syms := query(c.query)
		if len(syms) != 1 || syms[0].Name != c.want {
			t.Errorf("workspace/symbol %q = %+v, want only %q", c.query, syms, c.want)
			continue
		}
		if syms[0].Kind != symbolKindFile || syms[0].ContainerName != testOtherCwd && syms[0].ContainerName != testCwd {
			t.Errorf("symbol %+v: kind or container", syms[0])
		}
		id, err := sessionOfURI(syms[0].Location.URI)
		if err != nil || (c.want == "Fix the parser") != (id == "s-alpha") {
			t.Errorf("symbol %q located at %s (%s, %v)", c.want, syms[0].Location.URI, id, err)
		}
	}
	all := query("")
	for _, s := range all {
		if s.Name == "The current session" {
			t.Errorf("the prompt's own session is listed: %+v", all)
		}
	}
	if len(all) != 4 {
		t.Errorf("empty query lists %d sessions, want the 4 others: %+v", len(all), all)
	}
	if all[0].ContainerName != testCwd {
		t.Errorf("first symbol %+v, want a session of the prompt's workspace %s first", all[0], testCwd)
	}
}
