package titles

import (
	"fmt"
	"math/rand"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/dsh-refls/dsh-refls/sessionref/dshlog"
	"github.com/dsh-refls/dsh-refls/sessionref/dshlog/layout"
)

// scopeStore writes n raw v0 sessions over three directories and none, of
// every kind, created a minute apart and last active up to ten days after
// their creation, with titles from a few words; it returns the store.
func scopeStore(t *testing.T, n int) *testStore {
	t.Helper()
	s := newTestStore(t)
	rnd := rand.New(rand.NewSource(30))
	words := []string{"rate", "limit", "login", "billing", "search", "refactor", "config", "audit", "generated", "separate"}
	cwds := []string{"/w", "/w", "/o1", "/o2", ""}
	at := func(typ string, seq, time int64, data any, op string) string {
		line := fmt.Sprintf(`{"type":%q,"seq":%d,"time":%d,"data":%s`, typ, seq, time, jsonText(data))
		if op != "" {
			line += `,"surfaceOp":` + op
		}
		return line + "}"
	}
	for i := 0; i < n; i++ {
		created := fixtureTime + int64(i)*60_000
		last := created + rnd.Int63n(10*24*3600_000)
		title := words[rnd.Intn(len(words))] + " the " + words[rnd.Intn(len(words))]
		h := headerSpec{ID: fmt.Sprintf("%04x%04x-s%d", rnd.Intn(1<<16), i, i), Cwd: cwds[i%len(cwds)], CreatedAt: created}
		h.HasCwd = h.Cwd != ""
		source := map[string]any{"kind": "user"}
		switch i % 7 {
		case 3:
			h.Parent = "parent-of-" + h.ID // a subagent child
		case 5:
			source = map[string]any{"kind": "plugin", "plugin": "webhook"}
		case 6:
			source = map[string]any{"kind": "plugin", "plugin": "session-archive"}
		}
		s.write(sessionSpec{Header: h, Encoding: layout.EncodingRaw, Batches: [][]string{{
			at("user/message", 0, created+1, map[string]any{"content": textBlocks(title), "source": source, "role": "user", "id": "m"}, opAppend),
			at("session/title", 1, last, map[string]any{"title": title, "messageSeqs": []int{0}, "source": map[string]any{"kind": "provider"}}, ""),
		}}})
	}
	return s
}

// TestScopedCandidatesAreTheFilteredList holds every scope to its
// definition: the scoped list is the unscoped list with the sessions out
// of scope taken out, cut at the limit, capped when more were in scope,
// through the lazy walk and the full ranking alike, in both orders.
func TestScopedCandidatesAreTheFilteredList(t *testing.T) {
	const n = 700
	snap := scopeStore(t, n).index().Snapshot()
	now := snap.Sessions[0].CreatedAt // the newest creation
	scopes := map[string]Scope{
		"workspace":          {WorkspaceOnly: true},
		"recent":             {ActiveSince: now - 3*24*3600_000},
		"hidden kinds":       {HideKinds: true},
		"workspace, hidden":  {WorkspaceOnly: true, HideKinds: true},
		"recent, hidden":     {ActiveSince: now - 24*3600_000, HideKinds: true},
		"all three":          {WorkspaceOnly: true, ActiveSince: now - 5*24*3600_000, HideKinds: true},
		"recent, none is":    {ActiveSince: now + 365*24*3600_000},
		"workspace of none":  {WorkspaceOnly: true},
		"hidden, typed id":   {HideKinds: true},
		"hidden, short id":   {HideKinds: true},
		"hidden, id and cwd": {HideKinds: true, WorkspaceOnly: true},
	}
	childID := ""
	for _, e := range snap.Sessions {
		if e.Kind() == dshlog.KindSubagent && e.Cwd == "/w" {
			childID = e.ID
			break
		}
	}
	if childID == "" {
		t.Fatal("the store has no subagent child in /w")
	}
	queries := []string{"", "r", "ra", "rate", "the", "separate", "gen", "zzz", "/w", "-s1"}
	for name, sc := range scopes {
		qs := queries
		target := "/w"
		switch name {
		case "workspace of none":
			target = "/nowhere"
		case "hidden, typed id", "hidden, id and cwd":
			qs = []string{childID[:MinHiddenIDPrefix], childID[:8], strings.ToUpper(childID[:6]), childID}
		case "hidden, short id":
			qs = []string{childID[:MinHiddenIDPrefix-1]}
		}
		for _, q := range qs {
			for _, byActivity := range []bool{false, true} {
				for _, limit := range []int{1, 7, 50, n + 1} {
					all, _, err := snap.Candidates(CandidateQuery{Query: q, TargetCwd: target, Limit: n + 1, ByActivity: byActivity})
					if err != nil {
						t.Fatal(err)
					}
					var want []string
					for _, c := range all {
						if snap.Admits(sc, c.SessionID, "", target, q) {
							want = append(want, c.SessionID)
						}
					}
					wantCapped := len(want) > limit
					want = want[:min(limit, len(want))]
					got, capped, err := snap.Candidates(CandidateQuery{Query: q, TargetCwd: target, Limit: limit, ByActivity: byActivity, Scope: sc})
					if err != nil {
						t.Fatal(err)
					}
					if ids := candidateIDs(got); !slices.Equal(ids, want) || capped != wantCapped {
						t.Errorf("%s, %q, by activity %v, limit %d: %d listed (capped %v), want %d (capped %v)\n got %v\nwant %v",
							name, q, byActivity, limit, len(ids), capped, len(want), wantCapped, ids, want)
					}
				}
			}
		}
	}
}

// TestScopeAdmits checks each rule of a scope on sessions of known facts.
func TestScopeAdmits(t *testing.T) {
	s := newTestStore(t)
	s.simple("person", "/w", fixtureTime, userMsg(0, "Fix it"), titleEvent(1, "Fix it"))
	s.simple("elsewhere", "/o", fixtureTime+1, userMsg(0, "Fix that"), titleEvent(1, "Fix that"))
	s.write(sessionSpec{Header: headerSpec{ID: "abcd1234-child", Cwd: "/w", HasCwd: true, CreatedAt: fixtureTime + 2, Parent: "person"},
		Encoding: layout.EncodingRaw, Batches: [][]string{{userMsg(0, "Audit it"), titleEvent(1, "Audit it")}}})
	s.simple("blank", "/w", fixtureTime+3)
	snap := s.index().Snapshot()
	for _, tt := range []struct {
		sc    Scope
		id, q string
		want  bool
	}{
		{Scope{}, "abcd1234-child", "", true},
		{Scope{}, "missing", "", false},
		{Scope{HideKinds: true}, "abcd1234-child", "", false},
		{Scope{HideKinds: true}, "abcd1234-child", "abc", false},
		{Scope{HideKinds: true}, "abcd1234-child", "ABCD", true},
		{Scope{HideKinds: true}, "abcd1234-child", "audit", false},
		{Scope{HideKinds: true}, "blank", "", false},
		{Scope{HideKinds: true}, "person", "", true},
		{Scope{WorkspaceOnly: true}, "person", "", true},
		{Scope{WorkspaceOnly: true}, "elsewhere", "", false},
		{Scope{ActiveSince: fixtureTime + 1}, "person", "", true}, // its title event is newer
		{Scope{ActiveSince: fixtureTime + 100}, "person", "", false},
	} {
		if got := snap.Admits(tt.sc, tt.id, "", "/w", tt.q); got != tt.want {
			t.Errorf("Admits(%+v, %q, query %q) = %v, want %v", tt.sc, tt.id, tt.q, got, tt.want)
		}
	}
	// The target's own directory wins over the cwd given.
	if !snap.Admits(Scope{WorkspaceOnly: true}, "elsewhere", "elsewhere", "/w", "") {
		t.Error("a session of the target's directory is out of its workspace scope")
	}
}

// TestChildrenOf lists a parent's subagent children and forks apart, the
// first k of each newest first, with their counts.
func TestChildrenOf(t *testing.T) {
	s := newTestStore(t)
	s.simple("parent", "/w", fixtureTime, userMsg(0, "Start"), titleEvent(1, "Parent"))
	for i := 0; i < 4; i++ {
		s.write(sessionSpec{Header: headerSpec{ID: fmt.Sprintf("child-%d", i), Cwd: "/w", HasCwd: true, CreatedAt: fixtureTime + 1 + int64(i), Parent: "parent"},
			Encoding: layout.EncodingRaw, Batches: [][]string{{userMsg(0, "Audit")}}})
	}
	fork := headerLine(headerSpec{ID: "fork-1", Cwd: "/w", HasCwd: true, CreatedAt: fixtureTime + 10})
	fork = strings.Replace(fork, `"delegationDepth":0`, `"delegationDepth":0,"parentSession":"parent","seedLength":2`, 1)
	dir := s.sessionDir(headerSpec{ID: "fork-1", Cwd: "/w", HasCwd: true})
	writeDir(t, dir)
	writeLog(t, dir+"/session.jsonl", layout.EncodingRaw, fork, [][]string{{userMsg(0, "Start"), userMsg(1, "Branch")}})
	s.simple("unrelated", "/w", fixtureTime+11, userMsg(0, "Other"))
	snap := s.index().Snapshot()
	c := snap.ChildrenOf("parent", 3)
	var subs, forks []string
	for _, e := range c.Subagents {
		subs = append(subs, e.ID)
	}
	for _, e := range c.Forks {
		forks = append(forks, e.ID)
	}
	if c.SubagentCount != 4 || !slices.Equal(subs, []string{"child-3", "child-2", "child-1"}) || c.ForkCount != 1 || !slices.Equal(forks, []string{"fork-1"}) {
		t.Errorf("ChildrenOf(parent) = %d %v, %d %v", c.SubagentCount, subs, c.ForkCount, forks)
	}
	if c := snap.ChildrenOf("unrelated", 3); c.SubagentCount+c.ForkCount != 0 {
		t.Errorf("an unrelated session has children: %+v", c)
	}
	if c := snap.ChildrenOf("", 3); c.SubagentCount+c.ForkCount != 0 {
		t.Errorf("the empty id has children: %+v", c)
	}
	if e, _ := snap.Locate("fork-1"); !e.Seeded || e.IsSubagent() {
		t.Errorf("fork-1: seeded %v, subagent %v", e.Seeded, e.IsSubagent())
	}
}

func writeDir(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
}
