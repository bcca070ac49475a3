package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dsh-refls/dsh-refls/internal/lsptest"
)

// dirFactsWorkspace writes a workspace whose src/ holds 5 counted files:
// api/ (6,000 bytes: 1,500 tokens), web/ (2,000: 500), util/ (400:
// 100), main.go (400: 100), and a 10,000-byte out.log the .gitignore
// hides: 8,800 bytes, 2,200 tokens in all.
func dirFactsWorkspace(t *testing.T) string {
	t.Helper()
	ws := t.TempDir()
	for rel, n := range map[string]int{
		"src/api/a.go": 3000, "src/api/b.go": 3000, "src/web/w.ts": 2000, "src/util/u.go": 400, "src/main.go": 400,
		"src/out.log": 10000,
	} {
		p := filepath.Join(ws, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(strings.Repeat("x", n)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(ws, ".gitignore"), []byte("*.log\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return ws
}

// startFactsBinary starts the binary on ws (its own workspace watcher,
// fsnotify) with the capabilities VS Code declares for these features and
// waits until the file sizes are in the directory totals.
func startFactsBinary(t *testing.T, ws string, settings map[string]any) (*lsptest.Editor, context.Context) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), abuseTimeout)
	t.Cleanup(cancel)
	cmd := exec.Command(binary, "--sessions-root", t.TempDir(), "--watch", "fsnotify")
	cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+t.TempDir())
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	caps := featureCaps()
	caps["textDocument"].(map[string]any)["completion"] = map[string]any{"completionItem": map[string]any{
		"labelDetailsSupport": true, "documentationFormat": []string{"markdown"}}}
	caps["textDocument"].(map[string]any)["hover"] = map[string]any{"contentFormat": []string{"markdown"}}
	e, err := lsptest.Start(cmd, lsptest.Config{Capabilities: caps, RootURI: "file://" + ws, InitializationOptions: settings})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = e.Close()
		_ = cmd.Process.Kill()
		<-e.Done()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("stderr:\n%s", stderr.String())
		}
	})
	if err := e.Initialize(ctx, nil); err != nil {
		t.Fatal(err)
	}
	for {
		var st struct {
			FilesIndexed     int `json:"filesIndexed"`
			FileSizesPending int `json:"fileSizesPending"`
		}
		if err := e.Status(ctx, &st); err != nil {
			t.Fatal(err)
		}
		if st.FilesIndexed > 0 && st.FileSizesPending == 0 {
			return e, ctx
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the file sizes were never summed: %+v", st)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

type factsItem struct {
	Label        string `json:"label"`
	LabelDetails *struct {
		Description string `json:"description"`
	} `json:"labelDetails"`
}

// rowOf completes at the end of "see @"+query and returns the
// description of the row labelled label ("" when it has none).
func rowOf(t *testing.T, ctx context.Context, e *lsptest.Editor, query, label string) string {
	t.Helper()
	uri := "file:///rows.md"
	var pos lsptest.Position
	var err error
	if _, _, open := e.Text(uri); open {
		pos, err = e.SetText(ctx, uri, "see @"+query+lsptest.Cursor)
	} else {
		pos, err = e.OpenFile(ctx, uri, "see @"+query+lsptest.Cursor)
	}
	if err != nil {
		t.Fatal(err)
	}
	var list struct {
		Items []factsItem `json:"items"`
	}
	if err := e.Completion(ctx, uri, pos, &list); err != nil {
		t.Fatal(err)
	}
	for _, it := range list.Items {
		if it.Label == label {
			if it.LabelDetails == nil {
				return ""
			}
			return it.LabelDetails.Description
		}
	}
	t.Fatalf("@%s lists no %s: %+v", query, label, list.Items)
	return ""
}

// TestBinaryDirectoryFacts drives directory facts through the binary over
// its pipes: the rows of @ and @src/, the rows again after the server's
// own watcher saw a file added and one removed, the hover of @src/, the
// budget diagnostic and its narrowing quick fix applied.
func TestBinaryDirectoryFacts(t *testing.T) {
	ws := dirFactsWorkspace(t)
	e, ctx := startFactsBinary(t, ws, map[string]any{"directoryTokenBudget": 1000})

	if got, want := rowOf(t, ctx, e, "", "src/"), "5 files · 9 KB · ~2.2k tokens"; got != want {
		t.Errorf("@ row src/: %q, want %q", got, want)
	}
	for label, want := range map[string]string{
		"src/api/": "2 files · 6 KB · ~1.5k tokens", "src/web/": "1 file · 2 KB · ~500 tokens", "src/util/": "1 file · 400 bytes · ~100 tokens",
	} {
		if got := rowOf(t, ctx, e, "src/", label); got != want {
			t.Errorf("@src/ row %s: %q, want %q", label, got, want)
		}
	}

	// The watcher: a file added to util/, web/'s file removed.
	if err := os.WriteFile(filepath.Join(ws, "src", "util", "v.go"), []byte(strings.Repeat("v", 3600)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(ws, "src", "web", "w.ts")); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"src/util/": "2 files · 4 KB · ~1k tokens", "src/web/": "0 files"}
	for label, w := range want {
		for got := ""; got != w; {
			got = rowOf(t, ctx, e, "src/", label)
			if got == w {
				break
			}
			select {
			case <-ctx.Done():
				t.Fatalf("@src/ row %s: %q, want %q after the change", label, got, w)
			case <-time.After(20 * time.Millisecond):
			}
		}
	}

	// Hover: the facts, the rule, what is ignored, the budget, the tree.
	uri := "file://" + ws + "/prompt.md"
	pos, err := e.OpenFile(ctx, uri, "see @s"+lsptest.Cursor+"rc/ now")
	if err != nil {
		t.Fatal(err)
	}
	var hv struct {
		Contents struct{ Value string } `json:"contents"`
	}
	if err := e.Hover(ctx, uri, pos, &hv); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{
		"`src/`: directory · 5 files · 10 KB · ~2.6k tokens in 3 folders below",
		"text bytes ÷ 4", "ignored here: `out.log`", "Over the directoryTokenBudget of 1k tokens",
		"src/\n├── api/  2 files · 6 KB · ~1.5k tokens\n│   ├── a.go  3 KB · ~750 tokens\n│   └── b.go  3 KB · ~750 tokens\n" +
			"├── util/  2 files · 4 KB · ~1k tokens\n│   ├── v.go  4 KB · ~900 tokens\n│   └── u.go  400 bytes · ~100 tokens\n" +
			"├── main.go  400 bytes · ~100 tokens\n└── web/  0 files\n",
	} {
		if !strings.Contains(hv.Contents.Value, w) {
			t.Errorf("hover lacks %q:\n%s", w, hv.Contents.Value)
		}
	}

	// The diagnostic on @src/ (10,400 bytes of text: 2,600 tokens) and its
	// one fix: of the subfolders only util/ (1,000 tokens) fits; api/
	// (1,500) does not, web/ is empty.
	m, err := e.Await(ctx, lsptest.DiagnosticsFor(uri, 1))
	if err != nil {
		t.Fatal(err)
	}
	var diags lsptest.Diagnostics
	if err := json.Unmarshal(m.Params, &diags); err != nil || len(diags.Diagnostics) != 1 {
		t.Fatalf("diagnostics %s (%v), want one", m.Params, err)
	}
	var d struct {
		Code     string `json:"code"`
		Severity int    `json:"severity"`
		Message  string `json:"message"`
	}
	if err := json.Unmarshal(diags.Diagnostics[0], &d); err != nil {
		t.Fatal(err)
	}
	if d.Code != "directoryTokenBudget" || d.Severity != 2 ||
		d.Message != "src/ would bring ~2.6k tokens if read whole (5 files · 10 KB), over the directoryTokenBudget of 1k: narrow it to a subfolder" {
		t.Errorf("diagnostic %+v", d)
	}
	var actions []struct {
		Title       string `json:"title"`
		IsPreferred bool   `json:"isPreferred"`
		Edit        struct {
			Changes map[string][]struct {
				Range   lsptest.Range `json:"range"`
				NewText string        `json:"newText"`
			} `json:"changes"`
		} `json:"edit"`
	}
	if err := e.CodeAction(ctx, uri, lsptest.Range{End: lsptest.Position{Character: 12}}, nil, &actions); err != nil {
		t.Fatal(err)
	}
	if len(actions) != 1 || actions[0].Title != "Narrow to @src/util/ (~1k tokens)" || !actions[0].IsPreferred {
		t.Fatalf("actions %+v, want the one preferred narrowing to @src/util/", actions)
	}
	edits := actions[0].Edit.Changes[uri]
	if len(edits) != 1 {
		t.Fatalf("edit %+v", actions[0].Edit)
	}
	if err := e.EditFile(ctx, uri, lsptest.Edit{Range: edits[0].Range, Text: edits[0].NewText}); err != nil {
		t.Fatal(err)
	}
	if text, _, _ := e.Text(uri); text != "see @src/util/ now" {
		t.Errorf("after the fix: %q", text)
	}
	if m, err = e.Await(ctx, lsptest.DiagnosticsFor(uri, 2)); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(m.Params, &diags); err != nil || len(diags.Diagnostics) != 0 {
		t.Errorf("diagnostics after the fix %s (%v), want none", m.Params, err)
	}
}
