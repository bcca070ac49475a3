package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeRecord(t *testing.T, dir string, r record) {
	t.Helper()
	data, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	name := strings.NewReplacer(" ", "-", "(", "", ")", "", ".", "").Replace(strings.ToLower(r.Editor)) + ".json"
	if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestWriteThenCheck: a table written from a run's records passes the
// check against the same run; a ✓ the run did not show, a row the run has
// no record of, and a flow with no column are each refused.
func TestWriteThenCheck(t *testing.T) {
	recs := t.TempDir()
	writeRecord(t, recs, record{Editor: "Helix", Version: "helix 25.07.1", Passed: []string{"menu at @", "hover"},
		MenuMs: []float64{30, 40, 35}, Notes: map[string]string{"prepare command": "Helix has no place for server commands."}})
	writeRecord(t, recs, record{Editor: "Neovim 0.7 + setup()", Version: "NVIM v0.7.2", Passed: flows})
	doc := filepath.Join(t.TempDir(), "editors.md")
	if err := os.WriteFile(doc, []byte("# Editors\n\n"+beginMarker+"\nold\n"+endMarker+"\n\nAfter.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := readRecords(recs)
	if err != nil {
		t.Fatal(err)
	}
	if err := writeTable(doc, got); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(doc)
	text := string(data)
	for _, want := range []string{
		"| Neovim 0.7 + setup() | `NVIM v0.7.2` | ✓ | ✓ | ✓ | ✓ | ✓ | ✓ | ✓ | ✓ | ✓ | ✓ | ✓ | ✓ | ✓ | ✓ | ✓ | — |",
		"| Helix | `helix 25.07.1` | ✓ | ✗ | ✗ | ✗ | ✓ | ✗ | ✗ | ✗ | — [1] | ✗ | ✗ | ✗ | ✗ | ✗ | ✗ | 35 ms (3) |",
		"[1] Helix has no place for server commands.",
		"\n\nAfter.\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the written doc lacks %q:\n%s", want, text)
		}
	}
	var out strings.Builder
	if err := checkTable(doc, got, &out); err != nil {
		t.Errorf("check of the table just written: %v", err)
	}

	// A claim the run did not show.
	claimed := strings.Replace(text, "| Helix | `helix 25.07.1` | ✓ | ✗ |", "| Helix | `helix 25.07.1` | ✓ | ✓ |", 1)
	if err := os.WriteFile(doc, []byte(claimed), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := checkTable(doc, got, &out); err == nil || !strings.Contains(err.Error(), `"Helix": the table says "@rate: session and file first" works`) {
		t.Errorf("a ✓ the run did not show: %v", err)
	}
	// A row the run recorded nothing of.
	if err := os.WriteFile(doc, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := checkTable(doc, got[:1], &out); err == nil || !strings.Contains(err.Error(), "recorded nothing") {
		t.Errorf("a row without a record: %v", err)
	}
	// A flow the table has no column for.
	writeRecord(t, recs, record{Editor: "Zed", Passed: []string{"telepathy"}})
	if _, err := readRecords(recs); err == nil || !strings.Contains(err.Error(), "telepathy") {
		t.Errorf("an unknown flow: %v", err)
	}
}
