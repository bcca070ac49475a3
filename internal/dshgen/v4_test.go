package dshgen

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestMigratedPairLayout: the pair holds the untouched original and the v4
// generation; the zstd v4 body is one frame without a declared content
// size after the header frame, as dsh's migration writes it.
func TestMigratedPairLayout(t *testing.T) {
	root := t.TempDir()
	e, err := MigratedPair(root, "pair", "/w", Zstd, "Release plan")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Dir(e.Path)
	names, err := os.ReadDir(dir)
	if err != nil || len(names) != 2 || names[0].Name() != "session.jsonl.zstd" || names[1].Name() != "session.v4.jsonl.zstd" {
		t.Fatalf("directory holds %v (%v)", names, err)
	}
	data, err := os.ReadFile(e.Path)
	if err != nil {
		t.Fatal(err)
	}
	frames, rest, err := SplitFrames(data)
	if err != nil || len(rest) != 0 || len(frames) != 2 {
		t.Fatalf("%d frames, %d bytes left, %v; want a header frame and one body frame", len(frames), len(rest), err)
	}
	if fhd := frames[1][4]; fhd>>6 != 0 || fhd&0x20 != 0 {
		t.Errorf("body frame descriptor %#x declares a content size", fhd)
	}
	if e.Version != 4 || e.Title != "Release plan" || !strings.HasPrefix(e.Conversation[0].Text, "Plan the release") {
		t.Errorf("expected %+v", e)
	}
}

// TestSeqRanges pins dsh's v4 writer: runs of three or more become pairs.
func TestSeqRanges(t *testing.T) {
	got := seqRanges([]int64{1, 2, 4, 5, 6, 7, 9, 11, 12, 13})
	want := "[1 2 [4 7] 9 [11 13]]"
	if s := fmtAny(got); s != want {
		t.Errorf("seqRanges = %s, want %s", s, want)
	}
}

func fmtAny(v []any) string {
	var b strings.Builder
	b.WriteString("[")
	for i, x := range v {
		if i > 0 {
			b.WriteString(" ")
		}
		switch x := x.(type) {
		case int64:
			b.WriteString(strconvI(x))
		case []int64:
			b.WriteString("[" + strconvI(x[0]) + " " + strconvI(x[1]) + "]")
		}
	}
	b.WriteString("]")
	return b.String()
}

func strconvI(n int64) string { return strconv.FormatInt(n, 10) }

// TestBenchStoreV4: the v4 bench store lists every session once, from its
// v4 generation, with a quarter of the directories holding the original too.
func TestBenchStoreV4(t *testing.T) {
	root := t.TempDir()
	rep, err := BenchStoreWith(context.Background(), root, BenchConfig{Sessions: 8, TargetBytes: 64 << 10, Seed: 3, V4: true})
	if err != nil || rep.Sessions != 8 {
		t.Fatalf("%+v, %v", rep, err)
	}
	logs, _ := filepath.Glob(filepath.Join(root, "*", "*", "session*.jsonl"))
	v4, originals := 0, 0
	for _, l := range logs {
		switch filepath.Base(l) {
		case "session.v4.jsonl":
			v4++
		case "session.jsonl":
			originals++
		}
	}
	if v4 != 8 || originals != 2 {
		t.Errorf("%d v4 logs and %d originals, want 8 and 2", v4, originals)
	}
}
