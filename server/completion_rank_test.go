package server

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dsh-refls/dsh-refls/internal/dshgen"
)

// TestCompletionRanksWhatAPersonMeans types @rate over the demo store, 40
// sessions whose text says "generated code", "separate code" or
// "Moderate" (dshgen.DemoNoise: "rate" only inside words, and newer than
// every demo session), and a workspace holding "design notes/rate plan.md"
// beside "src/generated/api.ts", with body search on (the default). The
// titled session and the file come first, then the session whose text
// says "rate limiting", then the matches inside a word; neither the noise nor
// "Migration plan for the billing database" (whose text says
// "half-migrated") is listed. Before word-start body matching, the file was
// row 44 of this list.
func TestCompletionRanksWhatAPersonMeans(t *testing.T) {
	ws, root := t.TempDir(), t.TempDir()
	for _, f := range []string{"README.md", "design notes/rate plan.md", "src/generated/api.ts", "docs/migration.md"} {
		p := filepath.Join(ws, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("# "+f+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Now()
	if _, err := dshgen.DemoStoreFor(root, ws, now); err != nil {
		t.Fatal(err)
	}
	if err := dshgen.DemoNoise(root, ws, now, 40); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, Options{SessionsRoot: root})
	h.initialize(initOptions{root: ws, labelDetails: true, settings: map[string]any{"watch": "off"}})
	var res []searchResult
	h.mustCall(MethodSearch, map[string]any{"query": "rate", "limit": 100}, &res) // waits for the body index
	if len(res) < 40 {
		t.Fatalf("dsh/search rate (substring) found %d sessions, want the noise among them", len(res))
	}

	pos := h.open("file:///p.md", "See @rate"+cursor, EncodingUTF16)
	var list completionList
	h.mustCall("textDocument/completion", map[string]any{"textDocument": map[string]any{"uri": "file:///p.md"}, "position": pos}, &list)
	var rows []string
	for _, it := range list.Items {
		row := it.Label
		if it.LabelDetails != nil && strings.HasPrefix(it.LabelDetails.Detail, " in ") {
			row += it.LabelDetails.Detail
		}
		rows = append(rows, row)
	}
	t.Logf("@rate lists:\n%s", strings.Join(rows, "\n"))
	// The titled session and the file whose name starts with the word,
	// then the session whose text says "rate limiting" (labelled by the
	// text that matched, the title after it), then what holds "rate" only
	// inside a word.
	want := []string{"Add rate limiting to the API", "design notes/rate plan.md", "", "src/generated/", "src/generated/api.ts"}
	if len(rows) != len(want) {
		t.Fatalf("@rate lists %d rows, want %d", len(rows), len(want))
	}
	for i, w := range want {
		if w == "" {
			if r := rows[i]; !strings.HasPrefix(r, "“") || !strings.Contains(strings.ToLower(r), "rate limiting") || !strings.Contains(r, "” in ") {
				t.Errorf("row %d is %q, want the body match of \"rate limiting\"", i+1, r)
			}
			continue
		}
		if rows[i] != w {
			t.Errorf("row %d is %q, want %q", i+1, rows[i], w)
		}
	}
	for _, r := range rows {
		if strings.Contains(r, "Code review") || strings.Contains(r, "Migration plan") {
			t.Errorf("@rate lists %q, which holds rate only inside a word", r)
		}
	}
	for i, it := range list.Items {
		if want := sortText(i + 1); it.SortText != want {
			t.Errorf("row %d sortText %q, want %q", i+1, it.SortText, want)
		}
	}
}
