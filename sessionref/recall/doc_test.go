package recall

import (
	"testing"
	"unsafe"

	"github.com/dsh-refls/dsh-refls/sessionref/dshlog"
)

// A doc is kept for every indexed session: 100,000 of them in a large
// store, so each byte is 100 KB of the server's memory.
func TestDocStaysSmall(t *testing.T) {
	if n := unsafe.Sizeof(doc{}); n > 96 {
		t.Fatalf("a doc takes %d bytes, more than 96", n)
	}
}

// A single block is kept without a block list; two or more keep theirs,
// and refs gives back what setRefs was given either way.
func TestRefsRoundTrip(t *testing.T) {
	for _, refs := range [][]blockRef{
		nil,
		{{off: 30, n: 100}},
		{{off: 30, n: 100}, {off: 138, n: 7}, {off: 153, n: 1 << 20}},
	} {
		var d doc
		if err := d.setRefs(refs); err != nil {
			t.Fatal(err)
		}
		if (d.lens == "") != (len(refs) <= 1) {
			t.Errorf("%d blocks: block list %q", len(refs), d.lens)
		}
		got, err := d.refs()
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(refs) {
			t.Fatalf("refs %v, want %v", got, refs)
		}
		for i := range refs {
			if got[i] != refs[i] {
				t.Errorf("ref %d: %v, want %v", i, got[i], refs[i])
			}
		}
	}
	// A single block shorter than its record header is damage, not a block.
	d := doc{first: 30, stored: recordHeaderLen - 1}
	if _, err := d.refs(); err == nil {
		t.Error("a 7-byte single block was accepted")
	}
}

// Every field of the title index's entry that tells a change changes the
// key; the id and title do not.
func TestKeyOfSeesEveryChange(t *testing.T) {
	base := dshlog.Entry{ID: "s1", Path: "/r/a/s1/log.jsonl", Offset: 100, LastSeq: 7, Generation: 1, FormatVersion: 4}
	k := keyOf(&base)
	for name, change := range map[string]func(e *dshlog.Entry){
		"path":       func(e *dshlog.Entry) { e.Path = "/r/a/s1/log2.jsonl" },
		"offset":     func(e *dshlog.Entry) { e.Offset = 101 },
		"lastSeq":    func(e *dshlog.Entry) { e.LastSeq = 8 },
		"generation": func(e *dshlog.Entry) { e.Generation = 2 },
		"format":     func(e *dshlog.Entry) { e.FormatVersion = 0 },
		"corrupt":    func(e *dshlog.Entry) { e.Corrupt = "bad line 3" },
	} {
		e := base
		change(&e)
		if keyOf(&e) == k {
			t.Errorf("a change of %s keeps the key", name)
		}
	}
	e := base
	e.Title = "renamed"
	if keyOf(&e) != k {
		t.Error("a new title changed the key")
	}
}
