package titles

import (
	"testing"

	"github.com/dsh-refls/dsh-refls/sessionref/dshlog/layout"
)

// TestDisplayTitlesByFormat pins the display-title rules: in v4 the last
// subagent/descriptor decides and only a well-formed version 3 gives a
// label (SPEC §1.7); v0–v3 keep §1.5's version-2 rule; a child whose own
// log gives none takes the label its indexed parent's subagent/catalog
// records.
func TestDisplayTitlesByFormat(t *testing.T) {
	desc := func(seq int64, data map[string]any) string { return eventLine("subagent/descriptor", seq, data, "") }
	v3 := func(seq int64, label string) string {
		return desc(seq, map[string]any{"version": 3, "mode": "one-shot", "provider": "spawn", "label": label})
	}
	s := newTestStore(t)
	write := func(id string, version int, parent string, events ...string) {
		s.write(sessionSpec{Header: headerSpec{ID: id, Cwd: "/p", HasCwd: true, CreatedAt: fixtureTime, Version: version, Parent: parent},
			Encoding: layout.EncodingZstd, Generation: version, Batches: [][]string{events}})
	}
	write("parent", 4, "", userMsg(0, "spawn children"), titleEvent(1, "Parent title"),
		catalogEvent(2, "child-none", "Catalogued label"), catalogEvent(3, "child-v2-last", "Catalogued too"), catalogEvent(4, "child-v3", "Not used"),
		eventLine("future/log-only", 5, map[string]any{}, ""), eventLine("future/log-only", 6, map[string]any{}, ""))
	write("child-v3", 4, "parent", titleEvent(0, "Child title"), v3(1, "Descriptor label"))
	write("child-v2-last", 4, "parent", titleEvent(0, "Child title"), v3(1, "Earlier"),
		desc(2, map[string]any{"version": 2, "mode": "one-shot", "provider": "spawn", "label": "v2 label"}))
	write("child-malformed", 4, "", titleEvent(0, "Own title"),
		desc(1, map[string]any{"version": 3, "mode": "continuable", "provider": "spawn"}))
	write("child-extra-key", 4, "", titleEvent(0, "Own title"),
		desc(1, map[string]any{"version": 3, "mode": "one-shot", "provider": "spawn", "label": "L", "capacity": 2}))
	write("child-none", 4, "parent", titleEvent(0, "Child title"))
	write("orphan", 4, "not-indexed", titleEvent(0, "Orphan title"))
	s.write(sessionSpec{Header: headerSpec{ID: "child-v0", Cwd: "/p", HasCwd: true, CreatedAt: fixtureTime},
		Encoding: layout.EncodingRaw, Batches: [][]string{{titleEvent(0, "v0 title"), descriptorEvent(1, 2, ptr("v0 label")),
			descriptorEvent(2, 3, ptr("v3 in a v0 log"))}}})
	snap := s.index().Snapshot()
	for id, want := range map[string]string{
		"parent":          "Parent title",
		"child-v3":        "Descriptor label",
		"child-v2-last":   "Catalogued too",
		"child-malformed": "Own title",
		"child-extra-key": "Own title",
		"child-none":      "Catalogued label",
		"orphan":          "Orphan title",
		"child-v0":        "v0 label",
	} {
		e := mustLocate(t, snap, id)
		if got := e.DisplayTitle(); got != want {
			t.Errorf("%s: display title %q, want %q", id, got, want)
		}
	}
	if n := mustLocate(t, snap, "parent").UnknownEvents; n != 2 || snap.UnknownEvents != 2 {
		t.Errorf("unknown events: parent %d, snapshot %d; want 2 and 2", n, snap.UnknownEvents)
	}
	// The catalogue label is searchable like any display title.
	got, _, err := snap.Candidates(CandidateQuery{Query: "catalogued label"})
	if err != nil || len(got) != 1 || got[0].SessionID != "child-none" {
		t.Errorf("candidates for the catalogue label: %+v, %v", got, err)
	}
}

func ptr(s string) *string { return &s }
