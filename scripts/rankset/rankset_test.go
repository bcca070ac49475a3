package main

import (
	"strings"
	"testing"
)

// TestSetIsWellFormed: every query of testdata/queries.json has a known
// category and expects sessions the store holds and paths the workspace
// offers.
func TestSetIsWellFormed(t *testing.T) {
	s, err := parseSet(defaultSet)
	if err != nil {
		t.Fatal(err)
	}
	e, err := prepare(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := checkSet(s, e.facts); err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for _, q := range s.Queries {
		count[q.Category]++
	}
	t.Logf("%d queries: %v; %d sessions, %d workspace files", len(s.Queries), count, len(e.facts), len(workspaceFiles()))
}

// TestMalformedSetsAreRefused: the checks above fail on what they are
// meant to catch.
func TestMalformedSetsAreRefused(t *testing.T) {
	for _, bad := range []struct{ name, set, want string }{
		{"blank", `{"queries":[{"query":"two words","category":"title","expect":["file:go.mod"]}]}`, "blank"},
		{"category", `{"queries":[{"query":"x","category":"misc","expect":["file:go.mod"]}]}`, "category"},
		{"twice", `{"queries":[{"query":"x","category":"file","expect":["file:go.mod"]},{"query":"x","category":"file","expect":["file:go.mod"]}]}`, "twice"},
		{"nothing", `{"queries":[{"query":"x","category":"file","expect":[]}]}`, "expects nothing"},
		{"kind", `{"queries":[{"query":"x","category":"file","expect":["go.mod"]}]}`, "neither"},
		{"field", `{"queries":[{"query":"x","category":"file","expect":["file:go.mod"],"rank":1}]}`, "unknown field"},
	} {
		if _, err := parseSet([]byte(bad.set)); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%s: parseSet gave %v, want an error saying %q", bad.name, err, bad.want)
		}
	}
	e, err := prepare(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s, err := parseSet([]byte(`{"queries":[
		{"query":"a","category":"id","expect":["session:00000000-0000-4000-8000-000000000000"]},
		{"query":"b","category":"file","expect":["file:internal/invoice/missing.go"]},
		{"query":"c","category":"file","expect":["file:dist/ledger"]},
		{"query":"d","category":"file","expect":["file:web/admin/node_modules/react/index.js"]},
		{"query":"e","category":"file","expect":["file:internal/invoice/rounding.go","file:internal/invoice","session:` + idRounding + `"]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	err = checkSet(s, e.facts)
	for _, want := range []string{"query \"a\"", "query \"b\"", "query \"c\"", "query \"d\""} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("checkSet gave %v, want it to name %s", err, want)
		}
	}
	if err != nil && strings.Contains(err.Error(), "query \"e\"") {
		t.Errorf("checkSet refuses items that are there: %v", err)
	}
}

// TestRankOf: the position of the first expected item, from 1; 0 when
// none is listed; a directory named with or without its slash.
func TestRankOf(t *testing.T) {
	items := []item{{key: "session:s1"}, {key: "file:docs"}, {key: "file:docs/a.md"}}
	for _, c := range []struct {
		expect []string
		want   int
	}{
		{[]string{"session:s1"}, 1},
		{[]string{"file:docs/a.md", "file:docs/"}, 2},
		{[]string{"file:docs/a.md"}, 3},
		{[]string{"session:s2"}, 0},
	} {
		if got := rankOf(items, c.expect); got != c.want {
			t.Errorf("rankOf(%v) = %d, want %d", c.expect, got, c.want)
		}
	}
	if rr := (outcome{rank: 4}).rr(); rr != 0.25 {
		t.Errorf("rr of rank 4 = %v", rr)
	}
	if rr := (outcome{}).rr(); rr != 0 {
		t.Errorf("rr of an absent item = %v", rr)
	}
}

// TestPickGroups: a query is picked by itself when its own pick was
// replayed, by another query when one of its items was picked through
// another, else not picked; a directory named with its slash is the same
// item as the pick of it.
func TestPickGroups(t *testing.T) {
	s := querySet{Queries: []query{
		{Query: "a", Expect: []string{"file:docs/"}},
		{Query: "b", Expect: []string{"session:s1", "file:docs/"}},
		{Query: "c", Expect: []string{"session:s2"}},
		{Query: "d", Expect: []string{"session:s1"}},
	}}
	pr := &pickRun{picked: map[string]bool{"file:docs": true}, replayed: map[int]bool{0: true}}
	for i, want := range []string{groupSame, groupOther, groupUnknown, groupUnknown} {
		if got := pr.groupOf(s, i); got != want {
			t.Errorf("query %q is %q, want %q", s.Queries[i].Query, got, want)
		}
	}
	f := summarizeWhere([]outcome{{rank: 1}, {rank: 2}, {rank: 0}, {rank: 4}}, 4, func(i int) bool { return i != 0 })
	if f.n != 3 || f.mrr != (0.5+0+0.25)/3 || f.hit1 != 0 || f.hit3 != 1.0/3 {
		t.Errorf("summarizeWhere = %+v", f)
	}
}
