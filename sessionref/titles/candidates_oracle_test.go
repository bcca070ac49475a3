package titles_test

import (
	"context"
	"math/rand"
	"reflect"
	"sort"
	"strings"
	"testing"
	"unicode"

	"golang.org/x/text/cases"
	"golang.org/x/text/language"

	"github.com/dsh-refls/dsh-refls/internal/dshgen"
	"github.com/dsh-refls/dsh-refls/sessionref/dshlog"
	"github.com/dsh-refls/dsh-refls/sessionref/titles"
)

func foldCase(s string) string { return cases.Lower(language.Und).String(s) }

func candidateIDs(cs []titles.Candidate) []string {
	ids := []string{}
	for _, c := range cs {
		ids = append(ids, c.SessionID)
	}
	return ids
}

// oracleCandidates ranks a query the plain way: every session tested,
// then one stable sort by group, match tier and order. It shares nothing
// with Candidates but the snapshot's creation order.
func oracleCandidates(snap *titles.Snapshot, folded [][4]string, q titles.CandidateQuery) ([]string, bool) {
	query := foldCase(q.Query)
	targetCwd, hasTargetCwd := q.TargetCwd, q.TargetCwd != ""
	for _, e := range snap.Sessions {
		if e.ID == q.TargetID {
			targetCwd, hasTargetCwd = e.Cwd, e.HasCwd
		}
	}
	type ranked struct {
		id                 string
		group, tier, index int
		active             int64
	}
	var all []ranked
	for i, e := range snap.Sessions {
		if e.ID == q.TargetID {
			continue
		}
		id, cwd, title, display := folded[i][0], folded[i][1], folded[i][2], folded[i][3]
		if !strings.Contains(id, query) && !strings.Contains(cwd, query) && !strings.Contains(title, query) && !strings.Contains(display, query) {
			continue
		}
		r := ranked{id: e.ID, index: i, group: 2, tier: 3, active: e.CreatedAt}
		if e.LastEventAt > 0 {
			r.active = e.LastEventAt
		}
		switch {
		case !e.HasCwd:
			r.group = 1
		case hasTargetCwd && e.Cwd == targetCwd:
			r.group = 0
		}
		if query != "" {
			switch {
			case strings.HasPrefix(title, query) || strings.HasPrefix(display, query):
				r.tier = 0
			case startsWord(title, query) || startsWord(display, query):
				r.tier = 1
			case strings.HasPrefix(id, query):
				r.tier = 2
			}
		} else {
			r.tier = 0
		}
		all = append(all, r)
	}
	sort.SliceStable(all, func(a, b int) bool {
		x, y := all[a], all[b]
		if x.group != y.group {
			return x.group < y.group
		}
		if x.tier != y.tier {
			return x.tier < y.tier
		}
		if q.ByActivity && x.active != y.active {
			return x.active > y.active
		}
		return x.index < y.index
	})
	limit := q.Limit
	if limit == 0 {
		limit = titles.DefaultCandidateLimit
	}
	ids := []string{}
	for _, r := range all[:min(limit, len(all))] {
		ids = append(ids, r.id)
	}
	return ids, len(all) > limit
}

// startsWord reports whether query occurs in s at its start or right
// after a rune that is neither a letter nor a digit.
func startsWord(s, query string) bool {
	prev := ' '
	for j, r := range s {
		if !unicode.IsLetter(prev) && !unicode.IsDigit(prev) && strings.HasPrefix(s[j:], query) {
			return true
		}
		prev = r
	}
	return false
}

// TestCandidatesMatchOracle types random queries, one keystroke at a time,
// on a store shaped like the 100,000-session bench store (dshgen: titles
// from a hundred verb and object pairs and the session number, 40
// sessions per project, one in 50 without cwd) and compares every ranked
// list and its capped flag with oracleCandidates: dense first keystrokes
// (walked lazily), sparse later ones (narrowed from the memo), both
// orders, several limits and targets.
func TestCandidatesMatchOracle(t *testing.T) {
	n, typed := 2500, 30
	if testing.Short() {
		n, typed = 2500, 12
	}
	root := t.TempDir()
	if _, err := dshgen.BenchStoreWith(context.Background(), root, dshgen.BenchConfig{Sessions: n, TargetBytes: int64(n) * 2048, Seed: 5}); err != nil {
		t.Fatal(err)
	}
	ix := titles.NewIndex(root, titles.IndexOptions{})
	if err := ix.Build(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	snap := ix.Snapshot()
	if len(snap.Sessions) != n {
		t.Fatalf("indexed %d sessions, want %d", len(snap.Sessions), n)
	}
	folded := make([][4]string, n)
	for i, e := range snap.Sessions {
		folded[i] = [4]string{foldCase(e.ID), foldCase(e.Cwd), foldCase(e.Title), foldCase(e.DisplayTitle())}
	}
	rnd := rand.New(rand.NewSource(11))
	pick := func() dshlog.Entry { return snap.Sessions[rnd.Intn(n)] }
	lazy, full := 0, 0
	for k := 0; k < typed; k++ {
		e := pick()
		var text string
		switch k % 5 {
		case 0, 1: // a title from its start
			text = e.DisplayTitle()
		case 2: // from a later word
			words := strings.Fields(e.DisplayTitle())
			text = strings.Join(words[rnd.Intn(len(words)):], " ")
		case 3: // the id
			text = e.ID
		default: // the project name
			text = e.Cwd[strings.LastIndex(e.Cwd, "/")+1:]
		}
		if rnd.Intn(3) == 0 {
			text = strings.ToUpper(text)
		}
		q := titles.CandidateQuery{Limit: []int{0, 1, 5, 200}[rnd.Intn(4)], ByActivity: rnd.Intn(2) == 0}
		switch rnd.Intn(3) {
		case 0:
			q.TargetID = pick().ID
		case 1:
			q.TargetCwd = pick().Cwd
		}
		runes := []rune(text)
		for m := 0; m <= len(runes) && m <= 24; m++ {
			q.Query = string(runes[:m])
			if !snap.WalksLazily(q.Query) {
				full++
			} else {
				lazy++
			}
			got, gotCapped, err := snap.Candidates(q)
			if err != nil {
				t.Fatal(err)
			}
			want, wantCapped := oracleCandidates(snap, folded, q)
			if !reflect.DeepEqual(candidateIDs(got), want) || gotCapped != wantCapped {
				t.Fatalf("%+v:\n got %v (capped %v)\nwant %v (capped %v)", q, candidateIDs(got), gotCapped, want, wantCapped)
			}
		}
	}
	if lazy == 0 || full == 0 {
		t.Errorf("%d queries walked lazily first, %d narrowed: both paths should be compared", lazy, full)
	}
}
