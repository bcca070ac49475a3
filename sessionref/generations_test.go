package sessionref

import (
	"path/filepath"
	"testing"
)

// TestGenerationFileNames pins SPEC §1.7's canonical generation names:
// session.jsonl, session.vN.jsonl (N ≥ 1, no leading zero), each with an
// optional .zstd; anything else in a session directory is not a log.
func TestGenerationFileNames(t *testing.T) {
	tests := []struct {
		name string
		gen  int
		enc  Encoding
		ok   bool
	}{
		{"session.jsonl", 0, EncodingRaw, true},
		{"session.jsonl.zstd", 0, EncodingZstd, true},
		{"session.v1.jsonl", 1, EncodingRaw, true},
		{"session.v4.jsonl.zstd", 4, EncodingZstd, true},
		{"session.v12.jsonl", 12, EncodingRaw, true},
		{"session.v0.jsonl", 0, "", false},
		{"session.v04.jsonl", 0, "", false},
		{"session.V4.jsonl", 0, "", false},
		{"session.v.jsonl", 0, "", false},
		{"session.v-1.jsonl", 0, "", false},
		{"session.v+4.jsonl", 0, "", false},
		{"session.v4.jsonl.zstd.tmp", 0, "", false},
		{"session.v4.jsonl.0123456789ab.tmp", 0, "", false},
		{"session.migration.0123456789abcdef.jsonl.zstd.tmp", 0, "", false},
		{"session.lock", 0, "", false},
		{"Session.jsonl", 0, "", false},
		{"session.jsonl.gz", 0, "", false},
		{"other.jsonl", 0, "", false},
	}
	for _, tt := range tests {
		gen, enc, ok := ParseLogName(tt.name)
		if ok != tt.ok || (ok && (gen != tt.gen || enc != tt.enc)) {
			t.Errorf("parseLogName(%q) = %d, %q, %v; want %d, %q, %v", tt.name, gen, enc, ok, tt.gen, tt.enc, tt.ok)
		}
	}
}

// TestChooseGeneration: the numerically highest generation wins, zstd on a
// tie; files that are not generations never win.
func TestChooseGeneration(t *testing.T) {
	tests := []struct {
		names []string
		want  string
	}{
		{[]string{"session.jsonl.zstd", "session.v4.jsonl.zstd"}, "session.v4.jsonl.zstd"},
		{[]string{"session.v3.jsonl", "session.v4.jsonl", "session.lock"}, "session.v4.jsonl"},
		{[]string{"session.v9.jsonl.zstd", "session.v10.jsonl"}, "session.v10.jsonl"},
		{[]string{"session.v4.jsonl", "session.v4.jsonl.zstd"}, "session.v4.jsonl.zstd"},
		{[]string{"session.v4.jsonl.zstd", "session.v4.jsonl"}, "session.v4.jsonl.zstd"},
		{[]string{"session.jsonl", "session.v5.jsonl.zstd.tmp", "session.v05.jsonl"}, "session.jsonl"},
	}
	for _, tt := range tests {
		lf, ok := chooseLog("/d", tt.names)
		if !ok || lf.Path != filepath.Join("/d", tt.want) {
			t.Errorf("chooseLog(%q) = %s (%v), want %s", tt.names, lf.Path, ok, tt.want)
		}
	}
	if _, ok := chooseLog("/d", []string{"session.lock", "session.v4.jsonl.zstd.tmp"}); ok {
		t.Error("a directory with only a lock and a temporary file has a log")
	}
}

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
			if enc == EncodingZstd {
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
