package dshlog_test

import (
	"context"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dsh-refls/dsh-refls/internal/dshgen"
	"github.com/dsh-refls/dsh-refls/internal/testfixtures"
	"github.com/dsh-refls/dsh-refls/sessionref/dshlog"
	"github.com/dsh-refls/dsh-refls/sessionref/internal/storetest"
)

// sameLogsBothWays reads every log under root the fast way, into an
// arena, and the reference way (dshlog.ReadLogFastAndReference) and
// requires the same result.
// It returns how many logs it compared.
func sameLogsBothWays(t *testing.T, root string) int {
	t.Helper()
	n := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasPrefix(d.Name(), "session") {
			return nil // unreadable directories are adversarial cases of their own
		}
		zstd := strings.HasSuffix(d.Name(), ".zstd")
		if !zstd && !strings.HasSuffix(d.Name(), ".jsonl") {
			return nil
		}
		n++
		fast, arena, ref := dshlog.ReadLogFastAndReference(path, zstd)
		if fast != ref {
			t.Errorf("%s: fast read\n%.2000s\nreference read\n%.2000s", path, fast, ref)
		}
		if arena != ref {
			t.Errorf("%s: read into an arena\n%.2000s\nreference read\n%.2000s", path, arena, ref)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestProjectionFastPathOnGeneratedStores: dshgen's bench stores (v0, and
// v4 with migrated v0 originals; raw and zstd) and every adversarial case
// read the same the fast and the reference way.
func TestProjectionFastPathOnGeneratedStores(t *testing.T) {
	overSmallBenchStores(t, 3, "compared the logs of", sameLogsBothWays)
	root := t.TempDir()
	cases := storetest.WriteAllCases(t, root)
	if n := sameLogsBothWays(t, root); n < len(cases)/2 {
		t.Errorf("compared %d logs of %d adversarial cases", n, len(cases))
	}
}

// TestProjectionFastPathOnRecordedFixtures: the logs dsh 0.1.1 and 0.2
// recorded read the same the fast and the reference way.
func TestProjectionFastPathOnRecordedFixtures(t *testing.T) {
	for _, dir := range []string{testfixtures.Dir(t), testfixtures.DirV4(t)} {
		if n := sameLogsBothWays(t, dir); n == 0 {
			t.Errorf("no logs under %s", dir)
		}
	}
}

// overSmallBenchStores writes dshgen's bench store small, in v0 and then in
// v4 with migrated v0 originals (raw and zstd logs), and checks that
// compare, which returns how many sessions it read, read all of each.
func overSmallBenchStores(t *testing.T, seed int64, what string, compare func(t *testing.T, root string) int) {
	t.Helper()
	for _, v4 := range []bool{false, true} {
		root := filepath.Join(t.TempDir(), "sessions")
		cfg := dshgen.BenchConfig{Sessions: 24, TargetBytes: 3 << 20, Seed: seed, V4: v4, ZstdEvery: 3, Workers: 2}
		if _, err := dshgen.BenchStoreWith(context.Background(), root, cfg); err != nil {
			t.Fatal(err)
		}
		if n := compare(t, root); n < cfg.Sessions {
			t.Errorf("v4 %v: %s %d of %d sessions", v4, what, n, cfg.Sessions)
		}
	}
}
