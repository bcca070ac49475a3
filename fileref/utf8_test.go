package fileref

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

// TestInvalidUTF8NamesAreNeverOffered (issue 12 item 18): a name that is
// not valid UTF-8 cannot be written in a mention and read back as the
// same bytes (it was offered as "bad\uFFFD\uFFFD.txt", a path that does
// not exist). Such names, and everything below such a directory, are
// skipped with a logged reason in the build, in listings and in Apply; a
// name that holds U+FFFD itself is valid and offered.
func TestInvalidUTF8NamesAreNeverOffered(t *testing.T) {
	root := t.TempDir()
	mkTree(t, root, map[string]string{
		"bad\xff\xfe.txt":      "",
		"dir\xff/inner.txt":    "",
		"bad\uFFFD.txt":        "", // U+FFFD spelled out: a real, writable name
		"good/bad-but-ok.txt":  "",
		"good/bad\x80name.txt": "",
	})
	core, logs := observer.New(zapcore.DebugLevel)
	ix, err := Build(context.Background(), Options{Root: root, Logger: zap.New(core), GitEnv: isolatedEnv(t)})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"bad\uFFFD.txt", "good/", "good/bad-but-ok.txt"}
	if got := sortedPaths(ix); !slices.Equal(got, want) {
		t.Errorf("indexed %q, want %q", got, want)
	}
	if n := logs.FilterMessage(skipInvalidUTF8).Len(); n != 3 {
		t.Errorf("%d build log entries say %q, want 3 (two files, one directory)", n, skipInvalidUTF8)
	}
	for _, q := range []string{"bad", "", "good/", "inner"} {
		for _, c := range search(t, ix, q, 50) {
			if !strings.Contains(strings.Join(want, "|"), c.Path) {
				t.Errorf("Search(%q) offers %q", q, c.Path)
			}
		}
	}
	// Created after the build and reported.
	created := filepath.Join(root, "good", "new\xc3.txt")
	if err := os.WriteFile(created, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	ix.Apply([]Change{{Path: created}})
	if got := sortedPaths(ix); !slices.Equal(got, want) {
		t.Errorf("after Apply: indexed %q, want %q", got, want)
	}
}
