package titles

import (
	"testing"

	"github.com/dsh-refls/dsh-refls/sessionref/dshlog"
)

// TestAddEntryMatchesNewSearchText checks that publish's folding straight
// into the columns gives each session the search text newSearchText gives
// it (which LoadCache's fallback and keepOwnSearch still use), for ASCII,
// for text whose lowercase is longer or shorter than it ("İ", "ẞ"), and
// for every source of the display title.
func TestAddEntryMatchesNewSearchText(t *testing.T) {
	entries := []dshlog.Entry{
		{ID: "ABC-def", Cwd: "/Home/U/Proj", HasCwd: true, Title: "Fix The Parser", HasTitle: true},
		{ID: "plain", Title: "", HasTitle: false},
		{ID: "x", Cwd: "/tmp", HasCwd: true, Title: "İstanbul ẞtraße ÄÖÜ", HasTitle: true, DescriptorLabel: "Ünïcode Label"},
		{ID: "child-1", Title: "Child", HasTitle: true, CatalogLabel: "From The Catalog"},
		{ID: "Κεφαλαία", Cwd: "/ΔΙΑΔΡΟΜΗ", HasCwd: true, Title: "ΣΟΦΙΑ", HasTitle: true},
	}
	want := newColumnsBuilder(0, 0)
	got := newColumnsBuilder(0, 0)
	var buf []byte
	for i := range entries {
		st := newSearchText(&entries[i])
		want.add(&st)
		got.addEntry(&entries[i], &buf)
	}
	w, g := want.done(), got.done()
	if w.text != g.text {
		t.Fatalf("columns text\n got %q\nwant %q", g.text, w.text)
	}
	for i := range entries {
		if g.spans[i] != w.spans[i] || g.bytes[i] != w.bytes[i] || g.pairs[i] != w.pairs[i] {
			t.Errorf("entry %d (%q): span %+v, want %+v (or its byte or pair set differs)", i, entries[i].ID, g.spans[i], w.spans[i])
		}
	}
}

// TestColumnsPastTheirTextBoundKeepIDsAlone fills columns whose bound on
// full texts (4 GiB less a gigabyte in a real build) is a few bytes: the
// sessions past it keep their id alone, every way a text is added (a
// search text, an entry), and queries still
// find them by id and the others by title.
func TestColumnsPastTheirTextBoundKeepIDsAlone(t *testing.T) {
	first := dshlog.Entry{ID: "first", Title: "Alpha", HasTitle: true}
	st := newSearchText(&first)
	b := newColumnsBuilder(0, 0)
	b.fullMax = len(st.all) + 1 + 20
	b.add(&st) // fits
	second := dshlog.Entry{ID: "second", Title: "Bravo Title Far Too Long", HasTitle: true}
	var buf []byte
	b.addEntry(&second, &buf) // past the bound: id alone
	third := newSearchText(&dshlog.Entry{ID: "third", Title: "Charlie", HasTitle: true})
	b.add(&third)
	var fourth []byte
	b.addEntry(&dshlog.Entry{ID: "fourth", Title: "Delta", HasTitle: true}, &fourth)
	c := b.done()
	if c.len() != 4 {
		t.Fatalf("%d sessions in the columns, want 4", c.len())
	}
	if got := c.at(0); got.all != st.all || got.title != "alpha" {
		t.Errorf("session 0 = %q (title %q), want %q in full", got.all, got.title, st.all)
	}
	for i, id := range []string{"second", "third", "fourth"} {
		got := c.at(int32(i + 1))
		if got.all != id+"\x00\x00\x00" || got.id != id || got.title != "" || got.display != "" {
			t.Errorf("session %d = %+v, want the id %q alone", i+1, got, id)
		}
	}
	var out matchSet
	var sc queryScratch
	for _, q := range []struct {
		query string
		want  []int32
	}{{"alp", []int32{0}}, {"bravo", nil}, {"sec", []int32{1}}, {"ourt", []int32{3}}} {
		c.match(q.query, nil, false, &out, &sc)
		if len(out.ids) != len(q.want) || (len(q.want) > 0 && out.ids[0] != q.want[0]) {
			t.Errorf("match(%q) = %v, want %v", q.query, out.ids, q.want)
		}
	}
}
