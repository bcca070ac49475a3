package titles

import (
	"fmt"
	"math/rand"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/dsh-refls/dsh-refls/sessionref/dshlog"
)

// typingSnapshot publishes n sessions whose titles share words, so that
// short queries match most sessions (the dense case) and longer ones few.
// The sessions are put in the writer's state directly: writing thousands
// of logs would test the disk, not the queries.
func typingSnapshot(t *testing.T, n int) *Snapshot {
	t.Helper()
	words := []string{"fix", "the", "parser", "retry", "Über", "straße", "flaky", "login", "aa", "aaa", "cache", "ΣΊΣΥΦΟΣ"}
	rnd := rand.New(rand.NewSource(3))
	ix := NewIndex(t.TempDir(), IndexOptions{})
	for i := 0; i < n; i++ {
		var title []string
		for k := 0; k < 2+rnd.Intn(4); k++ {
			title = append(title, words[rnd.Intn(len(words))])
		}
		e := dshlog.Entry{ID: fmt.Sprintf("s-%05d", i), Cwd: fmt.Sprintf("/work/p%d", i%7), HasCwd: i%5 != 0,
			CreatedAt: fixtureTime + int64(i)*1000, Title: strings.Join(title, " "), HasTitle: i%11 != 0}
		if !e.HasCwd {
			e.Cwd = ""
		}
		proj := "--work--"
		dir, ok := dshlog.MakeSessionDir(proj, e.ID, filepath.Join(ix.root, proj, e.ID), dshlog.LogFile{Path: filepath.Join(ix.root, proj, e.ID, "session.jsonl")}, 0)
		if !ok {
			t.Fatal("makeSessionDir refused a joined path")
		}
		tr := &tracked{dir: dir, entry: &e, started: true}
		st := newSearchText(tr.entry)
		tr.fresh = &st
		ix.tracked[tr.dir.Path()] = tr
	}
	ix.writeMu.Lock()
	ix.publishLocked(false)
	ix.writeMu.Unlock()
	return ix.Snapshot()
}

// freshCopy is the same snapshot with nothing remembered, so each query
// is answered by a search over every session.
func freshCopy(s *Snapshot) *Snapshot {
	return &Snapshot{Root: s.Root, Sessions: s.Sessions, byID: s.byID, search: s.search, cwdOf: s.cwdOf, cwds: s.cwds}
}

// foldedFields holds, per session id, its id, cwd, title and display
// title case-folded: SPEC §2.2 matches a query against each of them.
func foldedFields(s *Snapshot) map[string][]string {
	out := map[string][]string{}
	for _, e := range s.Sessions {
		out[e.ID] = []string{foldCase(e.ID), foldCase(e.Cwd), foldCase(e.Title), foldCase(e.DisplayTitle())}
	}
	return out
}

// substringMatches lists the sessions one of whose fields contains query,
// case-folded.
func substringMatches(fields map[string][]string, query string) map[string]bool {
	q := foldCase(query)
	out := map[string]bool{}
	for id, fs := range fields {
		for _, f := range fs {
			if strings.Contains(f, q) {
				out[id] = true
			}
		}
	}
	return out
}

// TestCandidatesWhileTyping types queries one character at a time, and
// deletes and retypes, on one snapshot (which narrows the previous
// keystroke's matches) and checks every answer against a snapshot that
// remembers nothing and against the substring rule.
func TestCandidatesWhileTyping(t *testing.T) {
	n := parallelFilterMin + 500 // above the parallel threshold
	if testing.Short() {
		n = 600
	}
	snap := typingSnapshot(t, n)
	if len(snap.Sessions) != n {
		t.Fatalf("indexed %d sessions, want %d", len(snap.Sessions), n)
	}
	fields := foldedFields(snap)
	typed := []string{"fix the parser", "aaa aa", "über straße", "straße", "σίσυφος", "s-0001", "/work/p3", "zzz", "the", "parser retry fix"}
	for _, text := range typed {
		runes := []rune(text)
		var steps []string
		for k := 1; k <= len(runes); k++ {
			steps = append(steps, string(runes[:k]))
		}
		// Delete back to one character and type again.
		for k := len(runes) - 1; k >= 1; k-- {
			steps = append(steps, string(runes[:k]))
		}
		steps = append(steps, text)
		for _, q := range steps {
			for _, limit := range []int{5, 1 << 20} {
				query := CandidateQuery{Query: q, TargetCwd: "/work/p3", Limit: limit}
				got, gotCapped, err := snap.Candidates(query)
				if err != nil {
					t.Fatal(err)
				}
				want, wantCapped, err := freshCopy(snap).Candidates(query)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(candidateIDs(got), candidateIDs(want)) || gotCapped != wantCapped {
					t.Fatalf("query %q limit %d while typing: %v (capped %v), from scratch: %v (capped %v)", q, limit, candidateIDs(got), gotCapped, candidateIDs(want), wantCapped)
				}
				if limit > n {
					rule := substringMatches(fields, q)
					if len(got) != len(rule) {
						t.Fatalf("query %q: %d candidates, %d sessions contain it", q, len(got), len(rule))
					}
					for _, c := range got {
						if !rule[c.SessionID] {
							t.Fatalf("query %q offered %s, which does not contain it", q, c.SessionID)
						}
					}
				}
			}
		}
	}
}
