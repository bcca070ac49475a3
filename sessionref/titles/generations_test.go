package titles

import (
	"testing"

	"github.com/dsh-refls/dsh-refls/sessionref/dshlog/layout"
)

// TestIndexIncrementalV4 reads only what a v4 log appended, raw and zstd,
// as for v0 (SPEC §5 freshness; issue 10 item 8).
func TestIndexIncrementalV4(t *testing.T) {
	for _, enc := range bothEncodings {
		t.Run(string(enc), func(t *testing.T) {
			s := newTestStore(t)
			h := headerSpec{ID: "inc4", Cwd: "/p", HasCwd: true, CreatedAt: fixtureTime, Version: 4}
			path := s.write(sessionSpec{Header: h, Encoding: enc, Generation: 4,
				Batches: [][]string{{userMsg(0, "q"+incompressible(20000)), titleEvent(1, "First title")}}})
			ix := s.index()
			if e := mustLocate(t, ix.Snapshot(), "inc4"); e.Title != "First title" || e.FormatVersion != 4 {
				t.Fatalf("entry %+v", e)
			}
			add := []byte(titleEvent(2, "Second title") + "\n")
			if enc == layout.EncodingZstd {
				add = zstdFrame([]string{titleEvent(2, "Second title")})
			}
			before := ix.BytesRead()
			appendFile(t, path, add)
			if e := mustLocate(t, refresh(t, ix, path), "inc4"); e.Title != "Second title" || e.LastSeq != 2 {
				t.Errorf("after the append: %+v", e)
			}
			if d := ix.BytesRead() - before; d > int64(len(add)) {
				t.Errorf("read %d bytes for a %d-byte append to a log of more than 20,000", d, len(add))
			}
		})
	}
}
