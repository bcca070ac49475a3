package sessionref

import "testing"

// TestAddEntryMatchesNewSearchText checks that publish's folding straight
// into the columns gives each session the search text newSearchText gives
// it (which LoadCache's fallback and keepOwnSearch still use), for ASCII,
// for text whose lowercase is longer or shorter than it ("İ", "ẞ"), and
// for every source of the display title.
func TestAddEntryMatchesNewSearchText(t *testing.T) {
	entries := []Entry{
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
