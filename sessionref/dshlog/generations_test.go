package dshlog

import (
	"path/filepath"
	"testing"

	"github.com/dsh-refls/dsh-refls/sessionref/dshlog/layout"
)

// TestGenerationFileNames pins SPEC §1.7's canonical generation names:
// session.jsonl, session.vN.jsonl (N ≥ 1, no leading zero), each with an
// optional .zstd; anything else in a session directory is not a log.
func TestGenerationFileNames(t *testing.T) {
	tests := []struct {
		name string
		gen  int
		enc  layout.Encoding
		ok   bool
	}{
		{"session.jsonl", 0, layout.EncodingRaw, true},
		{"session.jsonl.zstd", 0, layout.EncodingZstd, true},
		{"session.v1.jsonl", 1, layout.EncodingRaw, true},
		{"session.v4.jsonl.zstd", 4, layout.EncodingZstd, true},
		{"session.v12.jsonl", 12, layout.EncodingRaw, true},
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
