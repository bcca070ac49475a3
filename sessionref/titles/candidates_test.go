package titles

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/dsh-refls/dsh-refls/sessionref"
)

func candidateIDs(cs []Candidate) []string {
	ids := []string{}
	for _, c := range cs {
		ids = append(ids, c.SessionID)
	}
	return ids
}

// candidateStore writes sessions of three groups relative to the target's
// cwd /work/proj; createdAt grows with the position in the list.
func candidateStore(t *testing.T) *Snapshot {
	s := newTestStore(t)
	sessions := []struct{ id, cwd, title string }{
		{"target", "/work/proj", "The target"},
		{"same-old", "/work/proj", "Refactor the parser"},
		{"other-old", "/elsewhere", "Unrelated"},
		{"nocwd-old", "", "Scratch notes"},
		{"same-new", "/work/proj", "Bugfix in parser"},
		{"other-new", "/elsewhere/parser", "Deploy"},
		{"nocwd-new", "", "Parser questions"},
		{"accent", "/elsewhere", "Écrire la doc"},
	}
	for i, ss := range sessions {
		s.simple(ss.id, ss.cwd, fixtureTime+int64(i)*1000, titleEvent(0, ss.title))
	}
	return s.index().Snapshot()
}

func TestCandidatesOrder(t *testing.T) {
	snap := candidateStore(t)
	tests := []struct {
		name  string
		query CandidateQuery
		want  []string
	}{
		{"groups, newest first", CandidateQuery{TargetID: "target"},
			[]string{"same-new", "same-old", "nocwd-new", "nocwd-old", "accent", "other-new", "other-old"}},
		{"target cwd from the query when the target is not indexed", CandidateQuery{TargetID: "unknown", TargetCwd: "/elsewhere"},
			[]string{"accent", "other-old", "nocwd-new", "nocwd-old", "other-new", "same-new", "same-old", "target"}},
		// "parser" matches titles and, for other-new, only the cwd: every substring match is kept.
		{"every substring match kept", CandidateQuery{TargetID: "target", Query: "parser"},
			[]string{"same-new", "same-old", "nocwd-new", "other-new"}},
		{"title prefix before substring within a group", CandidateQuery{TargetID: "target", Query: "PARS"},
			[]string{"same-new", "same-old", "nocwd-new", "other-new"}},
		{"id match", CandidateQuery{TargetID: "target", Query: "-old"}, []string{"same-old", "nocwd-old", "other-old"}},
		{"unicode case folding upper query", CandidateQuery{TargetID: "target", Query: "ÉCRIRE"}, []string{"accent"}},
		{"unicode case folding lower query", CandidateQuery{TargetID: "target", Query: "écrire"}, []string{"accent"}},
		{"no match", CandidateQuery{TargetID: "target", Query: "zzz"}, []string{}},
		{"target never offered", CandidateQuery{TargetID: "target", Query: "target"}, []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, capped, err := snap.Candidates(tt.query)
			if err != nil {
				t.Fatal(err)
			}
			if capped {
				t.Error("capped without a limit reached")
			}
			if ids := candidateIDs(got); !reflect.DeepEqual(ids, tt.want) {
				t.Errorf("candidates %v, want %v", ids, tt.want)
			}
		})
	}
}

func TestCandidatesPreferTitlePrefix(t *testing.T) {
	s := newTestStore(t)
	s.simple("older-prefix", "/p", fixtureTime, titleEvent(0, "Fix the tests"))
	s.simple("newer-substring", "/p", fixtureTime+1, titleEvent(0, "A bugfix"))
	s.simple("newest-word", "/p", fixtureTime+2, titleEvent(0, "A fix for it"))
	got, _, err := s.index().Snapshot().Candidates(CandidateQuery{TargetID: "t", TargetCwd: "/p", Query: "fix"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"older-prefix", "newest-word", "newer-substring"}
	if ids := candidateIDs(got); !reflect.DeepEqual(ids, want) {
		t.Errorf("candidates %v, want %v", ids, want)
	}
}

func TestCandidateFields(t *testing.T) {
	s := newTestStore(t)
	label := "Child ]label\\"
	s.simple("child", "/work/proj", fixtureTime, titleEvent(0, "Child title"), descriptorEvent(1, 2, &label))
	s.simple("bare", "", fixtureTime+1)
	got, _, err := s.index().Snapshot().Candidates(CandidateQuery{TargetID: "t", TargetCwd: "/work/proj"})
	if err != nil {
		t.Fatal(err)
	}
	cwd := "/work/proj"
	want := []Candidate{
		{SessionID: "child", Label: "Child title", DisplayTitle: label, Cwd: &cwd, SameWorkspace: true, CreatedAt: fixtureTime,
			Mention: `@[Child \]label\\](` + sessionref.EncodeURI("child") + ")"},
		{SessionID: "bare", Label: "bare", DisplayTitle: "bare", SameWorkspace: false, CreatedAt: fixtureTime + 1,
			Mention: "@[bare](" + sessionref.EncodeURI("bare") + ")"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("candidates\n got %+v\nwant %+v", got, want)
	}
	// NoMention leaves only the mention out.
	got, _, err = s.index().Snapshot().Candidates(CandidateQuery{TargetID: "t", TargetCwd: "/work/proj", NoMention: true})
	if err != nil {
		t.Fatal(err)
	}
	for i := range want {
		want[i].Mention = ""
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("candidates with NoMention\n got %+v\nwant %+v", got, want)
	}
}

func TestCandidatesLimit(t *testing.T) {
	s := newTestStore(t)
	const n = DefaultCandidateLimit + 3
	for i := 0; i < n; i++ {
		s.simple(fmt.Sprintf("s%03d", i), "/p", fixtureTime+int64(i))
	}
	snap := s.index().Snapshot()
	tests := []struct {
		limit      int
		wantLen    int
		wantCapped bool
	}{
		{0, DefaultCandidateLimit, true},
		{5, 5, true},
		{n, n, false},
		{n + 10, n, false},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.limit), func(t *testing.T) {
			got, capped, err := snap.Candidates(CandidateQuery{TargetID: "t", Limit: tt.limit})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != tt.wantLen || capped != tt.wantCapped {
				t.Errorf("%d candidates capped %v, want %d and %v", len(got), capped, tt.wantLen, tt.wantCapped)
			}
			if len(got) > 0 && got[0].SessionID != fmt.Sprintf("s%03d", n-1) {
				t.Errorf("first candidate %s, want the newest", got[0].SessionID)
			}
		})
	}
	if _, _, err := snap.Candidates(CandidateQuery{Limit: -1}); sessionref.CodeOf(err) != sessionref.CodeInvalidReference {
		t.Errorf("a negative limit: %v, want %s", err, sessionref.CodeInvalidReference)
	}
}

// TestCandidatesCappedByLowerTier: the best tier fills the list, and a
// lesser match seen before it is what makes the list capped.
func TestCandidatesCappedByLowerTier(t *testing.T) {
	s := newTestStore(t)
	s.simple("prefix", "/p", fixtureTime, titleEvent(0, "Parser rewrite"))
	s.simple("word", "/p", fixtureTime+1, titleEvent(0, "Notes on the parser"))
	s.simple("other", "/p", fixtureTime+2, titleEvent(0, "Unrelated"))
	snap := s.index().Snapshot()
	for _, byActivity := range []bool{false, true} {
		got, capped, err := snap.Candidates(CandidateQuery{Query: "parser", Limit: 1, ByActivity: byActivity})
		if err != nil {
			t.Fatal(err)
		}
		if ids := candidateIDs(got); !reflect.DeepEqual(ids, []string{"prefix"}) || !capped {
			t.Errorf("by activity %v: %v capped %v, want [prefix] capped", byActivity, ids, capped)
		}
	}
}

// TestCandidatesOfACommonPair: a query occurring more often than a match
// set keeps occurrences of (maxOccPerSession a session) still finds every
// session that holds it.
func TestCandidatesOfACommonPair(t *testing.T) {
	s := newTestStore(t)
	s.simple("many", "/w", fixtureTime, titleEvent(0, strings.Repeat("</", 3*maxOccPerSession+1)))
	s.simple("once", "/w", fixtureTime+1, titleEvent(0, "a </ b"))
	s.simple("none", "/w", fixtureTime+2, titleEvent(0, "plain"))
	got, _, err := s.index().Snapshot().Candidates(CandidateQuery{Query: "</"})
	if err != nil {
		t.Fatal(err)
	}
	if ids := candidateIDs(got); !reflect.DeepEqual(ids, []string{"many", "once"}) {
		t.Errorf("candidates %v, want many (a title prefix) and once", ids)
	}
}

// TestCandidateOfMatchesCandidates: the candidate of one listed session is
// the one Candidates lists for it, its sameWorkspace decided by the target's
// own cwd when the target is indexed, else by the workspace given; an
// unlisted id and the target itself have none.
func TestCandidateOfMatchesCandidates(t *testing.T) {
	s := newTestStore(t)
	s.simple("here", "/work/a", fixtureTime, titleEvent(0, "Here"))
	s.simple("there", "/work/b", fixtureTime+1, titleEvent(0, "There"))
	s.simple("target", "/work/b", fixtureTime+2, titleEvent(0, "Target"))
	snap := s.index().Snapshot()
	for _, q := range []struct{ target, cwd string }{{"", "/work/a"}, {"target", "/work/a"}, {"", ""}} {
		listed, _, err := snap.Candidates(CandidateQuery{TargetID: q.target, TargetCwd: q.cwd})
		if err != nil || len(listed) < 2 {
			t.Fatalf("target %q: listed %d (%v), want at least 2", q.target, len(listed), err)
		}
		for _, want := range listed {
			got, ok := snap.CandidateOf(want.SessionID, q.target, q.cwd)
			if !ok || !reflect.DeepEqual(got, want) {
				t.Errorf("target %q in %q: CandidateOf(%s) = %+v (%v), Candidates lists %+v", q.target, q.cwd, want.SessionID, got, ok, want)
			}
		}
	}
	if _, ok := snap.CandidateOf("missing", "", "/work/a"); ok {
		t.Error("an unlisted id has a candidate")
	}
	if _, ok := snap.CandidateOf("target", "target", "/work/a"); ok {
		t.Error("the target itself has a candidate")
	}
}
