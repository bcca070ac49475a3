package titles

import (
	"reflect"
	"testing"

	"github.com/dsh-refls/dsh-refls/sessionref/internal/idorder"
)

// Expected values are Node's (dsh runs there): String.prototype.
// toLocaleLowerCase under the en-US default, and Array.sort with
// localeCompare, as dsh's listCandidates and listSessions use them.

func foldStore(t *testing.T) *Snapshot {
	s := newTestStore(t)
	s.simple("greek", "/w", fixtureTime+3, userMsg(0, "q"), titleEvent(1, "Λόγος ΟΣ"), turnEnd(2))
	s.simple("dotted", "/w", fixtureTime+2, userMsg(0, "q"), titleEvent(1, "İstanbul notes"), turnEnd(2))
	s.simple("plain", "/w", fixtureTime+1, userMsg(0, "q"), titleEvent(1, "pin list"), turnEnd(2))
	// Same createdAt: dsh orders them by localeCompare of the ids.
	for _, id := range []string{"team-x", "B-5", "é-sess", "b-4", "a_1", "a-1", "Z", "10", "9"} {
		s.simple(id, "/w", fixtureTime, userMsg(0, "q"), turnEnd(1))
	}
	return s.index().Snapshot()
}

func queryIDs(t *testing.T, snap *Snapshot, query string) []string {
	t.Helper()
	cands, _, err := snap.Candidates(CandidateQuery{Query: query, TargetCwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	ids := []string{}
	for _, c := range cands {
		ids = append(ids, c.SessionID)
	}
	return ids
}

func TestCandidatesFoldCaseAsJavaScript(t *testing.T) {
	snap := foldStore(t)
	tests := []struct {
		query string
		want  []string
	}{
		{"σ", []string{}},                  // "Λόγος ΟΣ" lowercases to "λόγος ος": no σ
		{"ς", []string{"greek"}},           // final sigma, from both the ς and the Σ
		{"ΟΣ", []string{"greek"}},          // the query folds to "ος" too
		{"İ", []string{"dotted"}},          // "i̇", not every i
		{"I", []string{"dotted", "plain"}}, // "i" is in "i̇stanbul" and "pin"
	}
	for _, tt := range tests {
		if got := queryIDs(t, snap, tt.query); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("query %q: %v, want dsh's %v", tt.query, got, tt.want)
		}
	}
	if got := foldCase("ΟΔΟΣ İ ẞ ǅ"); got != "οδος i̇ ß ǆ" {
		t.Errorf("foldCase = %q", got)
	}
}

func TestSessionTiesOrderedByLocaleCompare(t *testing.T) {
	snap := foldStore(t)
	var got []string
	for _, e := range snap.Sessions {
		if e.CreatedAt == fixtureTime {
			got = append(got, e.ID)
		}
	}
	want := []string{"10", "9", "a_1", "a-1", "b-4", "B-5", "é-sess", "team-x", "Z"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("tie order %v, want localeCompare's %v", got, want)
	}
	if all := queryIDs(t, snap, ""); !reflect.DeepEqual(all[3:], want) {
		t.Errorf("candidates %v, want greek, dotted, plain then %v", all, want)
	}
	var o idorder.Order
	if o.Compare("a", "a") != 0 || o.Compare("b", "B") >= 0 || o.Compare("B", "b") <= 0 {
		t.Error("idorder.Order is not lower case first")
	}
}
