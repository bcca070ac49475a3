package dshgen

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

func TestDemoStore(t *testing.T) {
	root := t.TempDir()
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	const workspace = "/tmp/demo ws"
	facts, err := DemoStoreFor(root, workspace, now)
	if err != nil {
		t.Fatal(err)
	}
	projects := map[string]int{}
	encodings := map[string]int{}
	var long, compacted, child *Expected
	for i := range facts {
		f := &facts[i]
		checkAgainstExpected(t, f.Path, *f)
		if f.HasCwd {
			projects[f.Cwd]++
		}
		encodings[filepath.Ext(f.Path)]++
		if f.CreatedAt >= now.UnixMilli() {
			t.Errorf("%s created in the future", f.ID)
		}
		if !f.HasTitle {
			t.Errorf("%s has no title", f.ID)
		}
		size := 0
		for _, m := range f.Conversation {
			size += len(m.Text)
		}
		if size > 64<<10 {
			long = f
		}
		if f.Compacted {
			compacted = f
		}
		if f.DescriptorLabel != "" && f.ParentSession != "" {
			child = f
		}
	}
	if len(facts) < 8 || len(projects) != 3 || projects[workspace] < 4 {
		t.Errorf("%d sessions over projects %v", len(facts), projects)
	}
	if encodings[".jsonl"] == 0 || encodings[".zstd"] == 0 {
		t.Errorf("encodings %v, want both", encodings)
	}
	if long == nil || compacted == nil || child == nil {
		t.Fatalf("missing a long (%v), compacted (%v) or child (%v) session", long != nil, compacted != nil, child != nil)
	}
	if child.DisplayTitle == child.Title {
		t.Errorf("child display title %q should be its descriptor label", child.DisplayTitle)
	}
	// Successor generations say their version in the header: a v3 beside
	// a v0 log, a v4 session, and a v4 generation beside its v0 original,
	// as in a store upgraded to dsh 0.2.
	gens, _ := filepath.Glob(filepath.Join(root, "*", "*", "session.v*.jsonl*"))
	versions := map[string]int{}
	for _, g := range gens {
		h := string(decodedLines(t, g)[0])
		for _, v := range []string{"3", "4"} {
			if strings.Contains(h, `"version":`+v+`,`) && strings.Contains(filepath.Base(g), ".v"+v+".") {
				versions[v]++
			}
		}
	}
	if len(gens) != 3 || versions["3"] != 1 || versions["4"] != 2 {
		t.Fatalf("successor generations %v (header versions %v), want one v3 and two v4", gens, versions)
	}
	originals, _ := filepath.Glob(filepath.Join(root, "*", "*", "session.jsonl*"))
	beside := 0
	for _, o := range originals {
		if more, _ := filepath.Glob(filepath.Join(filepath.Dir(o), "session.v*")); len(more) > 0 {
			beside++
		}
	}
	if beside != 2 {
		t.Errorf("%d directories hold an original beside a successor, want 2 (v0+v3, v0+v4)", beside)
	}
}

// treeDigest hashes every file path and content under root.
func treeDigest(t *testing.T, root string) (digest string, files int, total int64) {
	t.Helper()
	var paths []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			paths = append(paths, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(paths)
	h := sha256.New()
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, p)
		fmt.Fprintf(h, "%s %d\n", rel, len(data))
		h.Write(data)
		total += int64(len(data))
	}
	return fmt.Sprintf("%x", h.Sum(nil)), len(paths), total
}

func TestBenchStoreSmall(t *testing.T) {
	const (
		sessions = 50
		target   = 5 << 20
		// tolerance is how far the store may miss its target size.
		tolerance = 0.05
	)
	rootA, rootB, rootC := t.TempDir(), t.TempDir(), t.TempDir()
	rep, err := BenchStoreWith(context.Background(), rootA, BenchConfig{Sessions: sessions, TargetBytes: target, Seed: 7, ZstdEvery: 5})
	if err != nil {
		t.Fatal(err)
	}
	digestA, files, total := treeDigest(t, rootA)
	if files != sessions || rep.Sessions != sessions {
		t.Errorf("%d files, report says %d sessions, want %d", files, rep.Sessions, sessions)
	}
	if total != rep.DiskBytes {
		t.Errorf("files total %d bytes, report says %d", total, rep.DiskBytes)
	}
	if diff := float64(rep.RawBytes-target) / target; diff < -tolerance || diff > tolerance {
		t.Errorf("raw bytes %d, %.1f%% off the %d target", rep.RawBytes, diff*100, target)
	}
	zstdFiles, _ := filepath.Glob(filepath.Join(rootA, "*", "*", "session.jsonl.zstd"))
	if len(zstdFiles) != sessions/5 {
		t.Errorf("%d zstd logs, want %d", len(zstdFiles), sessions/5)
	}
	// Every log parses, has contiguous seqs, and carries the reported title.
	logs, _ := filepath.Glob(filepath.Join(rootA, "*", "*", "session.jsonl*"))
	titles := map[string]string{}
	for _, p := range logs {
		parsed := parseLog(t, p, readLogText(t, p))
		checkSeqAndTime(t, parsed)
		f := foldAndProject(t, parsed)
		if f.title == nil || len(f.conversation) < 2 {
			t.Fatalf("%s: title %v, %d messages", p, f.title, len(f.conversation))
		}
		titles[str(parsed.header["id"])] = *f.title
		if got := filepath.Base(filepath.Dir(p)); got != encodeSegment(str(parsed.header["id"])) {
			t.Errorf("%s: directory does not match id", p)
		}
	}
	for id, title := range rep.Titles {
		if titles[id] != title {
			t.Errorf("report title of %s is %q, log says %q", id, title, titles[id])
		}
	}

	if _, err := BenchStoreWith(context.Background(), rootB, BenchConfig{Sessions: sessions, TargetBytes: target, Seed: 7, ZstdEvery: 5, Workers: 1}); err != nil {
		t.Fatal(err)
	}
	if digestB, _, _ := treeDigest(t, rootB); digestB != digestA {
		t.Error("the same seed wrote a different store")
	}
	if err := BenchStore(rootC, sessions, target, 8); err != nil {
		t.Fatal(err)
	}
	if digestC, _, _ := treeDigest(t, rootC); digestC == digestA {
		t.Error("a different seed wrote the same store")
	}
}

func TestBenchStoreRejectsBadConfig(t *testing.T) {
	for _, cfg := range []BenchConfig{{Sessions: 0, TargetBytes: 1}, {Sessions: 1, TargetBytes: 0}} {
		if _, err := BenchStoreWith(context.Background(), t.TempDir(), cfg); err == nil {
			t.Errorf("%+v accepted", cfg)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := BenchStoreWith(ctx, t.TempDir(), BenchConfig{Sessions: 10, TargetBytes: 1 << 20}); err == nil {
		t.Error("a cancelled context did not stop the store")
	}
}

// BenchmarkBenchStore measures generation speed (go test -bench BenchStore).
func BenchmarkBenchStore(b *testing.B) {
	const target = 64 << 20
	for b.Loop() {
		root := b.TempDir()
		if _, err := BenchStoreWith(context.Background(), root, BenchConfig{Sessions: 200, TargetBytes: target, Seed: 1}); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(target)
}
