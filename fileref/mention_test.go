package fileref

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestStatMention(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "ws")
	mkTree(t, base, map[string]string{
		"outside.txt":     "secret",
		"ws/src/main.go":  "package main\n",
		"ws/empty/":       "",
		"ws/link-in.go":   "->src/main.go",
		"ws/link-out.txt": "->../outside.txt",
		"ws/link-etc":     "->/etc",
		"ws/dangling":     "->missing",
		"ws/dirlink":      "->src",
	})
	mtime := time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)
	if err := os.Chtimes(filepath.Join(root, "src", "main.go"), mtime, mtime); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		rel     string
		kind    Kind
		size    int64
		missing bool
		outside bool
	}{
		{rel: "src/main.go", kind: KindFile, size: 13},
		{rel: "src", kind: KindDirectory},
		{rel: "src/", kind: KindDirectory},
		{rel: "empty/", kind: KindDirectory},
		{rel: "link-in.go", kind: KindFile, size: 13},
		{rel: "dirlink/main.go", kind: KindFile, size: 13},
		{rel: "nope.txt", missing: true},
		{rel: "src/main.go/", missing: true},
		{rel: "dangling", missing: true},
		{rel: "link-out.txt", outside: true},
		{rel: "link-etc/passwd", outside: true},
		{rel: "../outside.txt", outside: true},
		{rel: "src/../../outside.txt", outside: true},
		{rel: "/etc/passwd", outside: true},
		{rel: "", outside: true},
	}
	for _, tc := range tests {
		got := StatMention(root, tc.rel)
		if got.Kind != tc.kind || got.Missing != tc.missing || got.OutsideWorkspace != tc.outside {
			t.Errorf("StatMention(%q) = %+v, want kind %q missing %v outside %v", tc.rel, got, tc.kind, tc.missing, tc.outside)
			continue
		}
		if tc.kind == KindFile && got.Size != tc.size {
			t.Errorf("StatMention(%q).Size = %d, want %d", tc.rel, got.Size, tc.size)
		}
	}
	if got := StatMention(root, "src/main.go"); !got.ModTime.Equal(mtime) {
		t.Errorf("ModTime = %v, want %v", got.ModTime, mtime)
	}
}
