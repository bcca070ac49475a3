package main

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestCheckNamesWhatIsMissing: with neither dsh's source nor its packages
// the run stops before any store is made, naming what it needs; a packages
// directory is accepted only with every package driver.ts imports.
func TestCheckNamesWhatIsMissing(t *testing.T) {
	if err := check(options{}); err == nil || !strings.Contains(err.Error(), "--dsh-npm") {
		t.Errorf("no dsh at all: %v, want an error naming --dsh-src and --dsh-npm", err)
	}
	dir := t.TempDir()
	for i, p := range dshPackages {
		err := check(options{dshNpm: dir})
		if err == nil || !strings.Contains(err.Error(), p) {
			t.Fatalf("with %d of %d packages: %v, want %s named", i, len(dshPackages), err, p)
		}
		pkg := filepath.Join(dir, "node_modules", p)
		if err := os.MkdirAll(pkg, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(pkg, "package.json"), []byte(`{}`), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := check(options{dshNpm: dir}); err != nil {
		t.Errorf("every package there: %v", err)
	}
	if err := check(options{dshSrc: t.TempDir()}); err == nil || !strings.Contains(err.Error(), "source tree") {
		t.Errorf("an empty source tree: %v", err)
	}
}

// TestDriverCommandPerForm: dsh's source maps the imports through its
// tsconfig; its packages are found from the driver's copy beside their
// node_modules, which is the driver byte for byte.
func TestDriverCommandPerForm(t *testing.T) {
	// The command runs from the repository's root, as scripts/dshdiff.sh
	// starts it.
	t.Chdir(filepath.Join("..", ".."))
	ctx := context.Background()
	src, err := driverCommand(ctx, options{dshSrc: "/dsh", tsx: "tsx"}, "m.json")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"tsx", "--tsconfig", "/dsh/tsconfig.json"}; !slices.Equal(src.Args[:3], want) || src.Args[4] != "m.json" ||
		filepath.Base(src.Args[3]) != "driver.ts" {
		t.Errorf("source form: %q", src.Args)
	}
	dir := t.TempDir()
	npm, err := driverCommand(ctx, options{dshNpm: dir, tsx: "tsx"}, "--bench", "2", "m.json")
	if err != nil {
		t.Fatal(err)
	}
	copied := filepath.Join(dir, "dshdiff-driver.ts")
	if want := []string{"tsx", copied, "--bench", "2", "m.json"}; !slices.Equal(npm.Args, want) {
		t.Errorf("packages form: %q, want %q", npm.Args, want)
	}
	got, err := os.ReadFile(copied)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join("scripts", "dshdiff", "driver.ts"))
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Error("the copy beside the packages is not driver.ts")
	}
}
