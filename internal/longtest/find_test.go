package longtest

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"
)

// TestFind: only top-level Test functions that call Require through the
// file's own import name are long; the pattern matches exactly them.
func TestFind(t *testing.T) {
	root := t.TempDir()
	write := func(rel, src string) {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a/a_test.go", `package a
import (
	"testing"
	"github.com/dsh-refls/dsh-refls/internal/longtest"
)
func TestStorm(t *testing.T) { longtest.Require(t) }
func TestSub(t *testing.T) { t.Run("big", func(t *testing.T) { longtest.Require(t) }) }
func TestQuick(t *testing.T) {}
func TestScaled(t *testing.T) { n := 10; if longtest.Enabled() { n = 1000 }; _ = n }
func helper(t *testing.T) { longtest.Require(t) }
`)
	write("b/b_test.go", `package b
import (
	"testing"
	lt "github.com/dsh-refls/dsh-refls/internal/longtest"
	other "example.com/other"
)
func TestRenamed(t *testing.T) { lt.Require(t) }
func TestOther(t *testing.T) { other.Require(t) }
`)
	write("c/c_test.go", `package c
import "testing"
func TestNoImport(t *testing.T) { longtest.Require(t) }
`)
	write("a/node_modules/x/x_test.go", `package x
import "github.com/dsh-refls/dsh-refls/internal/longtest"
func TestHidden(t *testing.T) { longtest.Require(t) }
`)
	tests, err := Find(root)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tt := range tests {
		got = append(got, tt.Dir+"."+tt.Name)
	}
	want := []string{"./a.TestScaled", "./a.TestStorm", "./a.TestSub", "./b.TestRenamed"}
	if !slices.Equal(got, want) {
		t.Fatalf("found %v, want %v", got, want)
	}
	re := regexp.MustCompile(RunPattern(tests))
	for name, match := range map[string]bool{"TestScaled": true, "TestStorm": true, "TestSub": true, "TestRenamed": true, "TestStormy": false, "TestQuick": false, "XTestStorm": false} {
		if re.MatchString(name) != match {
			t.Errorf("pattern %s on %s: %v, want %v", re, name, !match, match)
		}
	}
	if dirs := Packages(tests); len(dirs) != 2 {
		t.Errorf("packages %v, want two", dirs)
	}
}

func TestRequire(t *testing.T) {
	t.Setenv(EnvVar, "")
	ran := false
	t.Run("off", func(t *testing.T) {
		Require(t)
		ran = true
	})
	if ran {
		t.Fatal("a long test ran without " + EnvVar + "=1")
	}
	t.Setenv(EnvVar, "1")
	t.Run("on", func(t *testing.T) {
		Require(t)
		ran = true
	})
	if !ran {
		t.Fatal("a long test did not run with " + EnvVar + "=1")
	}
}
