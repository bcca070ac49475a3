package titles

import (
	"strings"
	"testing"

	"github.com/dsh-refls/dsh-refls/sessionref/dshlog"
)

// TestHugeTitlesAreCappedInTheIndex writes a 4 MiB title and a 4 MiB
// display title: the index, its queries and its cache keep the capped
// forms, and a query for text beyond the cap finds nothing.
func TestHugeTitlesAreCappedInTheIndex(t *testing.T) {
	s := newTestStore(t)
	huge := "start " + strings.Repeat("é", 2<<20) + " farend"
	label := huge
	s.simple("huge-title", "/work/h", fixtureTime, titleEvent(0, huge), descriptorEvent(1, 2, &label))
	ix := s.index()
	e, ok := ix.Snapshot().Locate("huge-title")
	if !ok {
		t.Fatal("not listed")
	}
	for name, v := range map[string]string{"title": e.Title, "display title": e.DisplayTitle()} {
		if len(v) > dshlog.MaxLabelBytes || !strings.HasPrefix(v, "start éé") || !strings.HasSuffix(v, "…") {
			t.Errorf("%s: %d bytes, want at most %d ending in the ellipsis", name, len(v), dshlog.MaxLabelBytes)
		}
	}
	if got, _, err := ix.Snapshot().Candidates(CandidateQuery{Query: "start é", Limit: 5}); err != nil || len(got) != 1 {
		t.Errorf("a query within the cap found %d (%v)", len(got), err)
	}
	if got, _, err := ix.Snapshot().Candidates(CandidateQuery{Query: "farend", Limit: 5}); err != nil || len(got) != 0 {
		t.Errorf("a query beyond the cap found %d (%v)", len(got), err)
	}
}
