package server

import (
	"strings"
	"testing"
)

// TestOpenDocumentsAreBounded: a document larger than maxDocumentBytes, or
// one that would bring all open documents over maxOpenDocumentBytes, is
// not kept (an earlier version of it is dropped too), by open and by
// change alike; closing a document gives its bytes back.
func TestOpenDocumentsAreBounded(t *testing.T) {
	d := newDocuments()
	if err := d.open(document{URI: "huge", Version: 1, Text: strings.Repeat("x", maxDocumentBytes+1)}); err == nil {
		t.Fatal("a document over maxDocumentBytes was kept")
	}
	if _, ok := d.get("huge"); ok || d.total != 0 {
		t.Fatalf("refused document tracked (total %d)", d.total)
	}
	part := strings.Repeat("y", maxOpenDocumentBytes/4)
	for _, uri := range []string{"a", "b", "c", "d"} {
		if err := d.open(document{URI: uri, Version: 1, Text: part}); err != nil {
			t.Fatalf("open %s: %v", uri, err)
		}
	}
	if err := d.open(document{URI: "e", Version: 1, Text: "one byte too many"}); err == nil {
		t.Fatal("open documents passed maxOpenDocumentBytes")
	}
	// Replacing a document counts its new size instead of its old one.
	if err := d.open(document{URI: "a", Version: 2, Text: "small now"}); err != nil {
		t.Fatalf("reopening a smaller: %v", err)
	}
	if err := d.open(document{URI: "e", Version: 1, Text: "fits again"}); err != nil {
		t.Fatalf("open after a shrink: %v", err)
	}
	// A change that grows a document over the bound drops it.
	grow := []contentChange{{Text: part + part}}
	if _, err := d.change("b", 2, grow, EncodingUTF16); err == nil {
		t.Fatal("a change passed maxOpenDocumentBytes")
	}
	if _, ok := d.get("b"); ok {
		t.Fatal("the document a refused change would have grown is still tracked")
	}
	d.close("c")
	d.close("d")
	d.close("a")
	d.close("e")
	if d.total != 0 || len(d.byURI) != 0 {
		t.Fatalf("after closing everything: %d documents, %d bytes", len(d.byURI), d.total)
	}
}
