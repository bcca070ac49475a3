package recall

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	"github.com/dsh-refls/dsh-refls/internal/dshgen"
)

// wantSortedOrder checks that the published order is every current
// document sorted newest first, as a full sort gives it.
func wantSortedOrder(t *testing.T, ix *Index, step string) {
	t.Helper()
	ix.syncMu.Lock()
	want := make([]*doc, 0, len(ix.docs))
	for _, d := range ix.docs {
		want = append(want, d)
	}
	ix.syncMu.Unlock()
	slices.SortFunc(want, newestFirst)
	got := ix.cur.Load().order
	if !slices.Equal(got, want) {
		var g, w []string
		for _, d := range got {
			g = append(g, d.id)
		}
		for _, d := range want {
			w = append(w, d.id)
		}
		t.Fatalf("%s: order %v, want %v", step, g, w)
	}
}

// The order a publish walks from the last view and merges the fresh
// documents into is the full sort, through new sessions, appends (to the
// overlay and, past overlayMax, merged), deletes, sessions of one
// createdAt, a save (compaction) and a load.
func TestOrderIsKeptAsAFullSortWouldGiveIt(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var ss []*dshgen.Session
	next := 0
	newSession := func() *dshgen.Session {
		s := dshgen.NewSession(fmt.Sprintf("s-%03d", next)).CreatedAt(int64(1000 + r.IntN(40))).UserText("word " + fmt.Sprint(next))
		next++
		ss = append(ss, s)
		return s
	}
	for range 30 {
		newSession()
	}
	st := newStore(t, ss...)
	wantSortedOrder(t, st.rc, "first build")
	// Many rounds of few appends: the overlay's slots outgrow the
	// documents and a sync merges them at its end, after fresh
	// documents were set.
	for round := range 90 {
		for range r.IntN(6)*max(0, 10-round)/10 + r.IntN(2) {
			if _, err := newSession().Save(st.root, dshgen.Raw); err != nil {
				t.Fatal(err)
			}
		}
		appends := 1 + r.IntN(4)
		if round == 5 {
			appends = overlayMax + 2 // past the overlay: a merge
		}
		for range appends {
			s := ss[r.IntN(len(ss))]
			if s == nil {
				continue
			}
			s.AssistantText("more words")
			if err := s.Append(s.Path(st.root, dshgen.Raw)); err != nil {
				t.Fatal(err)
			}
		}
		if k := r.IntN(len(ss)); ss[k] != nil && round%3 == 1 {
			if err := removeAll(ss[k].Dir(st.root)); err != nil {
				t.Fatal(err)
			}
			ss[k] = nil
		}
		st.sync()
		wantSortedOrder(t, st.rc, fmt.Sprintf("round %d", round))
	}
	path := filepath.Join(t.TempDir(), "r.idx")
	if err := st.rc.Save(path, st.root); err != nil {
		t.Fatal(err)
	}
	wantSortedOrder(t, st.rc, "save")
	loaded := New(Options{})
	if err := loaded.Load(path, st.root); err != nil {
		t.Fatal(err)
	}
	wantSortedOrder(t, loaded, "load")
	if _, err := newSession().Save(st.root, dshgen.Raw); err != nil {
		t.Fatal(err)
	}
	if err := st.title.Build(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
	if err := loaded.Sync(t.Context(), st.title.Snapshot()); err != nil {
		t.Fatal(err)
	}
	wantSortedOrder(t, loaded, "sync after load")
}
