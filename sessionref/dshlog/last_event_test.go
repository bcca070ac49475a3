package dshlog_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/dsh-refls/dsh-refls/internal/dshgen"
	"github.com/dsh-refls/dsh-refls/sessionref/titles"
)

// TestIndexKeepsLastEventTime: the title index keeps the time of a log's
// newest event (read from that one line, no body decoded), through the
// cache and after the log grows.
func TestIndexKeepsLastEventTime(t *testing.T) {
	root := t.TempDir()
	s := dshgen.NewSession("s-active").Cwd("/w").CreatedAt(1_700_000_000_000).
		Turn(func(tt *dshgen.Turn) { tt.UserText("hi"); tt.Title("Active", "provider"); tt.AssistantText("yo") })
	path, err := s.Save(root, dshgen.Raw)
	if err != nil {
		t.Fatal(err)
	}
	lastTime := func() int64 {
		t.Helper()
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		var last int64
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var e struct {
				Time *int64 `json:"time"`
			}
			if json.Unmarshal(sc.Bytes(), &e) == nil && e.Time != nil {
				last = *e.Time
			}
		}
		return last
	}
	want := lastTime()
	if want <= 1_700_000_000_000 {
		t.Fatalf("generated log has no event times after creation (%d)", want)
	}
	ix := titles.NewIndex(root, titles.IndexOptions{})
	if err := ix.Build(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	e, ok := ix.Snapshot().Locate("s-active")
	if !ok || e.LastEventAt != want {
		t.Fatalf("LastEventAt = %d (found %v), want %d", e.LastEventAt, ok, want)
	}
	cache := filepath.Join(t.TempDir(), "index.gob")
	if err := ix.SaveCache(cache); err != nil {
		t.Fatal(err)
	}
	again := titles.NewIndex(root, titles.IndexOptions{})
	if err := again.LoadCache(cache); err != nil {
		t.Fatal(err)
	}
	if e, _ := again.Snapshot().Locate("s-active"); e.LastEventAt != want {
		t.Errorf("after the cache: LastEventAt = %d, want %d", e.LastEventAt, want)
	}
	// The log grows: the newest event's time follows.
	s.Turn(func(tt *dshgen.Turn) { tt.UserText("more"); tt.AssistantText("ok") })
	if _, err := s.Save(root, dshgen.Raw); err != nil {
		t.Fatal(err)
	}
	grown := lastTime()
	if err := again.Build(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if e, _ := again.Snapshot().Locate("s-active"); e.LastEventAt != grown || grown <= want {
		t.Errorf("after growth: LastEventAt = %d, want %d (> %d)", e.LastEventAt, grown, want)
	}
}

// TestCandidatesByActivity: within a cwd group, ByActivity ranks the
// session whose last event is newest first; without it SPEC §2.2's
// creation order holds; the limit keeps the most active.
func TestCandidatesByActivity(t *testing.T) {
	root := t.TempDir()
	// s-old was created first but talked to last (its events are later).
	sessions := []*dshgen.Session{
		dshgen.NewSession("s-old").Cwd("/w").CreatedAt(1_000_000).
			Turn(func(tt *dshgen.Turn) { tt.UserText("a"); tt.Title("Old", "provider"); tt.AssistantText("b") }),
		dshgen.NewSession("s-new").Cwd("/w").CreatedAt(1_010_000).
			Turn(func(tt *dshgen.Turn) { tt.UserText("a"); tt.Title("New", "provider"); tt.AssistantText("b") }),
		dshgen.NewSession("s-mid").Cwd("/w").CreatedAt(1_005_000).
			Turn(func(tt *dshgen.Turn) { tt.UserText("a"); tt.Title("Mid", "provider"); tt.AssistantText("b") }),
		dshgen.NewSession("s-else").Cwd("/elsewhere").CreatedAt(9_000_000).
			Turn(func(tt *dshgen.Turn) { tt.UserText("a"); tt.Title("Else", "provider"); tt.AssistantText("b") }),
	}
	// s-old gets many more turns so that its last event is the newest.
	for range 1000 {
		sessions[0].Turn(func(tt *dshgen.Turn) { tt.UserText("again"); tt.AssistantText("ok") })
	}
	for _, s := range sessions {
		if _, err := s.Save(root, dshgen.Raw); err != nil {
			t.Fatal(err)
		}
	}
	ix := titles.NewIndex(root, titles.IndexOptions{})
	if err := ix.Build(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	snap := ix.Snapshot()
	old, _ := snap.Locate("s-old")
	newer, _ := snap.Locate("s-new")
	if old.LastEventAt <= newer.LastEventAt {
		t.Fatalf("test setup: s-old last active %d, s-new %d", old.LastEventAt, newer.LastEventAt)
	}
	ids := func(q titles.CandidateQuery) string {
		t.Helper()
		cands, _, err := snap.Candidates(q)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, c := range cands {
			out = append(out, c.SessionID)
		}
		return fmt.Sprint(out)
	}
	for _, c := range []struct {
		q    titles.CandidateQuery
		want string
	}{
		{titles.CandidateQuery{TargetCwd: "/w"}, "[s-new s-mid s-old s-else]"},
		{titles.CandidateQuery{TargetCwd: "/w", ByActivity: true}, "[s-old s-new s-mid s-else]"},
		{titles.CandidateQuery{TargetCwd: "/w", ByActivity: true, Limit: 2}, "[s-old s-new]"},
		{titles.CandidateQuery{Query: "s-", TargetCwd: "/w", ByActivity: true, Limit: 1}, "[s-old]"},
	} {
		if got := ids(c.q); got != c.want {
			t.Errorf("Candidates(%+v) = %s, want %s", c.q, got, c.want)
		}
	}
}
