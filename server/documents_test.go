package server

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/dsh-refls/dsh-refls/internal/longtest"
)

func TestIncrementalChanges(t *testing.T) {
	tests := []struct {
		name    string
		enc     PositionEncoding
		text    string
		changes []contentChange
		want    string
	}{
		{"insert after emoji, utf-16", EncodingUTF16, "😀 @x\nline2",
			[]contentChange{{Range: &Range{Position{0, 5}, Position{0, 5}}, Text: "yz"}}, "😀 @xyz\nline2"},
		{"insert after emoji, utf-8", EncodingUTF8, "😀 @x\nline2",
			[]contentChange{{Range: &Range{Position{0, 7}, Position{0, 7}}, Text: "yz"}}, "😀 @xyz\nline2"},
		{"replace CJK across lines", EncodingUTF16, "文件一\n文件二",
			[]contentChange{{Range: &Range{Position{0, 2}, Position{1, 1}}, Text: "-"}}, "文件-件二"},
		{"full then incremental", EncodingUTF16, "old",
			[]contentChange{{Text: "new text"}, {Range: &Range{Position{0, 0}, Position{0, 3}}, Text: "NEW"}}, "NEW text"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := newDocuments()
			d.open(document{URI: "u", Version: 1, Text: tt.text})
			doc, err := d.change("u", 2, tt.changes, tt.enc)
			if err != nil {
				t.Fatal(err)
			}
			if doc.Text != tt.want || doc.Version != 2 {
				t.Errorf("text %q v%d, want %q v2", doc.Text, doc.Version, tt.want)
			}
		})
	}
	d := newDocuments()
	if _, err := d.change("missing", 2, nil, EncodingUTF16); err == nil {
		t.Error("change to a closed document gave no error")
	}
	d.open(document{URI: "u", Version: 1, Text: "a"})
	if _, err := d.change("u", 2, []contentChange{{Range: &Range{Position{3, 0}, Position{3, 0}}, Text: "x"}}, EncodingUTF16); err == nil {
		t.Error("change past the last line gave no error")
	}
	if doc, _ := d.get("u"); doc.Text != "a" || doc.Version != 1 {
		t.Errorf("a failed change modified the document: %+v", doc)
	}
}

// Sizes of TestManyEditsInOnePass.
const (
	// manyEditsDocBytes is large enough that a copy per edit (500 MB)
	// stands out from one buffer (twice the document) by 1000×.
	manyEditsDocBytes = 256 << 10
	// manyEditsCheckedBytes is the document checked against applying the
	// edits one by one, which costs a copy per edit.
	manyEditsCheckedBytes = 128 << 10
	manyEdits             = 2000
	// manyEditsAllocLimit is what applying them may allocate: the text in
	// and out plus room to grow. A copy per edit allocated 2 GB at 1 MB.
	manyEditsAllocLimit = 8 * manyEditsDocBytes
)

// TestManyEditsInOnePass applies 2,000 incremental edits in one didChange:
// on 128 KB the result matches applying them one by one through a Mapper
// (the straightforward reading of the protocol), with emoji and CJK on
// every line; on 256 KB the edits are spliced into one buffer instead of
// copying the document per edit.
func TestManyEditsInOnePass(t *testing.T) {
	longtest.Require(t)
	for _, enc := range []PositionEncoding{EncodingUTF16, EncodingUTF8} {
		text, changes := manyEditsCase(manyEditsCheckedBytes)
		want := text
		for i, c := range changes {
			m := NewMapper(want, enc)
			s, err1 := m.Offset(c.Range.Start)
			e, err2 := m.Offset(c.Range.End)
			if err1 != nil || err2 != nil || e < s {
				t.Fatalf("edit %d does not apply: %v %v", i, err1, err2)
			}
			want = want[:s] + c.Text + want[e:]
		}
		d := newDocuments()
		d.open(document{URI: "u", Version: 1, Text: text})
		doc, err := d.change("u", 2, changes, enc)
		if err != nil {
			t.Fatal(err)
		}
		if doc.Text != want {
			t.Fatalf("%s: result differs from applying the edits one by one", enc)
		}

		text, changes = manyEditsCase(manyEditsDocBytes)
		d.open(document{URI: "u", Version: 1, Text: text})
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		start := time.Now()
		_, err = d.change("u", 2, changes, enc)
		took := time.Since(start)
		runtime.ReadMemStats(&after)
		if err != nil {
			t.Fatal(err)
		}
		alloc := after.TotalAlloc - before.TotalAlloc
		t.Logf("%s: %d edits to %d bytes in %v, %d bytes allocated", enc, manyEdits, len(text), took, alloc)
		if alloc > manyEditsAllocLimit {
			t.Errorf("%s: applying %d edits to %d bytes allocated %d bytes, want at most %d", enc, manyEdits, len(text), alloc, manyEditsAllocLimit)
		}
	}
}

// manyEditsCase is a document of about size bytes and manyEdits random
// edits of it, each inserting or deleting a little and some joining lines.
func manyEditsCase(size int) (string, []contentChange) {
	var sb strings.Builder
	for i := 0; sb.Len() < size; i++ {
		fmt.Fprintf(&sb, "line %d 😀 文件 @ref-%d\r\n", i, i)
	}
	text := sb.String()
	lines := strings.Count(text, "\n")
	rng := rand.New(rand.NewPCG(1, 2))
	changes := make([]contentChange, manyEdits)
	for i := range changes {
		l := rng.IntN(lines - manyEdits) // each edit joins at most one line
		start := Position{Line: l, Character: rng.IntN(12)}
		end := Position{Line: l + rng.IntN(2), Character: rng.IntN(12)}
		if end.Line == start.Line && end.Character < start.Character {
			start, end = end, start
		}
		ins := []string{"", "x", "é", "😀", "a\nb", "文"}[rng.IntN(6)]
		changes[i] = contentChange{Range: &Range{Start: start, End: end}, Text: ins}
	}
	return text, changes
}

// TestEditPastLastLine: an edit naming a line past the end is an error,
// as with a Mapper.
func TestEditPastLastLine(t *testing.T) {
	d := newDocuments()
	d.open(document{URI: "u", Version: 1, Text: "one\ntwo"})
	_, err := d.change("u", 2, []contentChange{
		{Range: &Range{Position{1, 0}, Position{1, 0}}, Text: "x"},
		{Range: &Range{Position{2, 0}, Position{2, 0}}, Text: "y"},
	}, EncodingUTF16)
	if err == nil || !strings.Contains(err.Error(), "past the last line") {
		t.Errorf("edit past the last line: %v, want an error naming it", err)
	}
}
