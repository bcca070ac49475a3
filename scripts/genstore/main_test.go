package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseSize(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"3G", 3 << 30, true},
		{"5M", 5 << 20, true},
		{"64k", 64 << 10, true},
		{"2GB", 2 << 30, true},
		{"1000", 1000, true},
		{"", 0, false},
		{"-1M", 0, false},
		{"3T", 0, false},
		{"G", 0, false},
	}
	for _, tc := range tests {
		got, err := parseSize(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("parseSize(%q) = %d, %v; want %d, ok %v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

func TestRunWritesStores(t *testing.T) {
	if err := run([]string{"--sessions", "3"}); err == nil || !strings.Contains(err.Error(), "--root") {
		t.Errorf("missing --root: %v", err)
	}
	if err := run([]string{"--root", t.TempDir(), "--bytes", "lots"}); err == nil {
		t.Error("bad --bytes accepted")
	}
	// run prints its report; keep the test output readable.
	stdout := os.Stdout
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	os.Stdout = devnull
	defer func() { os.Stdout = stdout; devnull.Close() }()

	bench := t.TempDir()
	if err := run([]string{"--root", bench, "--sessions", "12", "--bytes", "256K", "--seed", "3"}); err != nil {
		t.Fatal(err)
	}
	logs, _ := filepath.Glob(filepath.Join(bench, "*", "*", "session.jsonl"))
	if len(logs) != 12 {
		t.Errorf("bench store has %d logs, want 12", len(logs))
	}
	demo := t.TempDir()
	if err := run([]string{"--root", demo, "--demo", "--workspace", "/srv/ws"}); err != nil {
		t.Fatal(err)
	}
	if entries, _ := filepath.Glob(filepath.Join(demo, "--srv-ws--", "*")); len(entries) < 4 {
		t.Errorf("demo workspace project has %d sessions", len(entries))
	}
}
