package server

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/dsh-refls/dsh-refls/fileref"
)

// factsWorkspace writes the workspace of the directory facts tests. src/
// holds 6 counted files (12,600 bytes; 11,600 of text: 2,900 tokens):
// big/ (8,000 bytes, 2,000 tokens), mid/ (2,400, 600), small/ (400, 100),
// main.go (800, 200) and logo.png (1,000, binary); run.log and build/ are
// ignored.
func factsWorkspace(t *testing.T) string {
	t.Helper()
	ws := t.TempDir()
	for rel, n := range map[string]int{
		"src/big/a.txt": 4000, "src/big/b.txt": 4000, "src/mid/c.txt": 2400, "src/small/d.txt": 400,
		"src/main.go": 800, "src/logo.png": 1000, "src/run.log": 5000, "src/build/x.o": 5000,
	} {
		writeSized(t, ws, rel, n)
	}
	if err := os.WriteFile(filepath.Join(ws, ".gitignore"), []byte("build/\n*.log\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return ws
}

// writeSized writes n bytes to rel under ws.
func writeSized(t *testing.T, ws, rel string, n int) {
	t.Helper()
	p := filepath.Join(ws, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(strings.Repeat("x", n)), 0o644); err != nil {
		t.Fatal(err)
	}
}

// factsHarness serves ws with the real workspace index (the client
// reports changes) and waits until its sizes are summed.
func factsHarness(t *testing.T, ws string, o initOptions) *harness {
	t.Helper()
	opts, _, _ := testOptions(t)
	opts.OpenFiles = NewFilerefFactory(zap.NewNop())
	h := newHarness(t, opts)
	o.root = ws
	o.watchedFiles = true
	featureInit(t, h, o)
	waitStatus(t, h, func(st statusResult) bool { return st.FilesIndexed > 0 && st.FileSizesPending == 0 })
	return h
}

// rowsOf maps the labels of a completion list to their items.
func rowsOf(list wireList) map[string]wireItem {
	out := map[string]wireItem{}
	for _, it := range list.Items {
		out[it.Label] = it
	}
	return out
}

func TestDirectoryRows(t *testing.T) {
	ws := factsWorkspace(t)
	for _, withDetails := range []bool{true, false} {
		t.Run(map[bool]string{true: "labelDetails", false: "detail"}[withDetails], func(t *testing.T) {
			h := factsHarness(t, ws, initOptions{labelDetails: withDetails})
			summary := func(it wireItem) string {
				if withDetails {
					if it.LabelDetails == nil {
						return ""
					}
					if it.Detail != "" {
						t.Errorf("%s: detail %q beside labelDetails", it.Label, it.Detail)
					}
					return it.LabelDetails.Description
				}
				return it.Detail
			}
			rows := rowsOf(completeAt(t, h, "file:///rows.md", "see @"+cursor))
			if got, want := summary(rows["src/"]), "6 files · 12 KB · ~2.9k tokens"; got != want {
				t.Errorf("@ row src/: %q, want %q", got, want)
			}
			rows = rowsOf(completeAt(t, h, "file:///rows.md", "see @src/"+cursor))
			for label, want := range map[string]string{
				"src/big/": "2 files · 8 KB · ~2k tokens", "src/mid/": "1 file · 2 KB · ~600 tokens",
				"src/small/": "1 file · 400 bytes · ~100 tokens", "src/main.go": "",
			} {
				if got := summary(rows[label]); got != want {
					t.Errorf("@src/ row %s: %q, want %q", label, got, want)
				}
			}
			// A directory named explicitly though ignored keeps its mark.
			rows = rowsOf(completeAt(t, h, "file:///rows.md", "see @src/build/"+cursor))
			if it, ok := rows["src/build/x.o"]; !ok || it.Detail != "ignored" || it.LabelDetails != nil {
				t.Errorf("@src/build/ rows %+v, want x.o marked ignored", rows)
			}
		})
	}
}

// TestDirectoryRowsFollowChanges: a file the client reports is in the
// totals of the next completion.
func TestDirectoryRowsFollowChanges(t *testing.T) {
	ws := factsWorkspace(t)
	h := factsHarness(t, ws, initOptions{labelDetails: true})
	writeSized(t, ws, "src/small/e.txt", 4000)
	h.notify("workspace/didChangeWatchedFiles", fileEvents(fileEvent{URI: pathToURI(filepath.Join(ws, "src/small/e.txt")), Type: 1}))
	want := "2 files · 4 KB · ~1.1k tokens"
	deadline := time.Now().Add(testTimeout)
	for {
		rows := rowsOf(completeAt(t, h, "file:///rows.md", "see @src/"+cursor))
		got := ""
		if d := rows["src/small/"].LabelDetails; d != nil {
			got = d.Description
		}
		if got == want {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("src/small/ row %q, want %q after the change", got, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
	// A removed directory leaves the totals above it.
	if err := os.RemoveAll(filepath.Join(ws, "src/big")); err != nil {
		t.Fatal(err)
	}
	h.notify("workspace/didChangeWatchedFiles", fileEvents(fileEvent{URI: pathToURI(filepath.Join(ws, "src/big")), Type: 3}))
	want = "5 files · 8 KB · ~1.9k tokens"
	for {
		rows := rowsOf(completeAt(t, h, "file:///rows.md", "see @"+cursor))
		got := ""
		if d := rows["src/"].LabelDetails; d != nil {
			got = d.Description
		}
		if got == want {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("src/ row %q, want %q after the removal", got, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestDirectoryHover(t *testing.T) {
	ws := factsWorkspace(t)
	h := factsHarness(t, ws, initOptions{markdown: true, settings: map[string]any{"directoryTokenBudget": 1000}})
	hover := func(marked string) string {
		t.Helper()
		pos := h.open("file:///hv.md", marked, EncodingUTF16)
		var hv hoverResult
		h.mustCall("textDocument/hover", map[string]any{"textDocument": map[string]any{"uri": "file:///hv.md"}, "position": pos}, &hv)
		return hv.Contents.Value
	}
	got := hover("see @sr" + cursor + "c/ now")
	tree := "```text\nsrc/\n" +
		"├── big/  2 files · 8 KB · ~2k tokens\n" +
		"│   ├── a.txt  4 KB · ~1k tokens\n" +
		"│   └── b.txt  4 KB · ~1k tokens\n" +
		"├── mid/  1 file · 2 KB · ~600 tokens\n" +
		"│   └── c.txt  2 KB · ~600 tokens\n" +
		"├── main.go  800 bytes · ~200 tokens\n" +
		"├── small/  1 file · 400 bytes · ~100 tokens\n" +
		"│   └── d.txt  400 bytes · ~100 tokens\n" +
		"└── logo.png  1000 bytes\n```\n"
	for _, want := range []string{
		"`src/`: directory · 6 files · 12 KB · ~2.9k tokens in 3 folders below\n\n",
		"Tokens: text bytes ÷ 4, dsh's own budget rule; dsh sends only the path",
		"Not in it: 1 file (1000 bytes), binary by extension.",
		"ignored here: `build/`, `run.log`.",
		"Over the directoryTokenBudget of 1k tokens",
		tree,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("hover lacks %q:\n%s", want, got)
		}
	}
	if got := hover("see @src/sm" + cursor + "all/ now"); strings.Contains(got, "Over the") || !strings.Contains(got, "└── d.txt  400 bytes · ~100 tokens\n") {
		t.Errorf("hover of a directory within the budget:\n%s", got)
	}
	if got := hover("see @src/bu" + cursor + "ild/ now"); !strings.Contains(got, "`src/build/`: directory, ignored by the workspace's ignore rules") {
		t.Errorf("hover of an ignored directory:\n%s", got)
	}
	if err := os.Symlink(filepath.Join(ws, "src", "big"), filepath.Join(ws, "biglink")); err != nil {
		t.Fatal(err)
	}
	if got := hover("see @bigl" + cursor + "ink/ now"); !strings.Contains(got, "`biglink/`: directory (a symlink or not indexed") {
		t.Errorf("hover of a directory symlink:\n%s", got)
	}

	// Resolve gives a directory row the same facts.
	var item wireItem
	h.mustCall("completionItem/resolve", map[string]any{"label": "src/", "data": map[string]any{"kind": "file", "path": "src"}}, &item)
	if item.Doc == nil || !strings.Contains(item.Doc.Value, tree) {
		t.Errorf("resolved documentation %+v, want the tree", item.Doc)
	}
}

// TestDirectoryHoverBeforeTheBuild: with no built index, a hover counts
// the directory live with the same rules.
func TestDirectoryHoverBeforeTheBuild(t *testing.T) {
	ws := factsWorkspace(t)
	opts, _, _ := testOptions(t) // no OpenFiles: the index stays unbuilt
	h := newHarness(t, opts)
	h.initialize(initOptions{root: ws, labelDetails: true})
	pos := h.open("file:///hv.md", "see @sr"+cursor+"c/ now", EncodingUTF16)
	var hv hoverResult
	h.mustCall("textDocument/hover", map[string]any{"textDocument": map[string]any{"uri": "file:///hv.md"}, "position": pos}, &hv)
	if want := "src/: directory · 6 files · 12 KB · ~2.9k tokens in 3 folders below\n"; !strings.HasPrefix(hv.Contents.Value, want) {
		t.Errorf("hover %q, want it to start with %q", hv.Contents.Value, want)
	}
	// Rows show nothing: no sums before the build.
	rows := rowsOf(completeAt(t, h, "file:///rows.md", "see @"+cursor))
	if it, ok := rows["src/"]; !ok || it.LabelDetails != nil || it.Detail != "" {
		t.Errorf("src/ row before the build %+v, want no facts", it)
	}
}

func TestDirectoryBudgetDiagnosticAndFixes(t *testing.T) {
	cases := []struct {
		budget    int
		titles    []string // every fix, in order
		preferred string   // its text after the preferred fix ("" when none is)
	}{
		{1000, []string{"Narrow to @src/mid/ @src/small/ (~700 tokens)", "Narrow to @src/mid/ (~600 tokens)", "Narrow to @src/small/ (~100 tokens)"},
			"see @src/mid/ @src/small/ now"},
		{500, []string{"Narrow to @src/small/ (~100 tokens)"}, "see @src/small/ now"},
		{50, []string{"Narrow to @src/big/ (~2k tokens)", "Narrow to @src/mid/ (~600 tokens)", "Narrow to @src/small/ (~100 tokens)"}, ""},
	}
	ws := factsWorkspace(t)
	for _, c := range cases {
		t.Run(strings.ReplaceAll(humanTokens(int64(c.budget)), ".", "_"), func(t *testing.T) {
			h := factsHarness(t, ws, initOptions{settings: map[string]any{"directoryTokenBudget": c.budget}})
			uri := "file:///budget.md"
			text := "see @src/ now"
			h.open(uri, text, EncodingUTF16)
			d := h.diagnosticsFor(uri, 1)
			if len(d.Diagnostics) != 1 {
				t.Fatalf("diagnostics %+v, want one on @src/", d.Diagnostics)
			}
			g := d.Diagnostics[0]
			want := "src/ would bring ~2.9k tokens if read whole (6 files · 12 KB), over the directoryTokenBudget of " + humanTokens(int64(c.budget)) + ": narrow it to a subfolder"
			if g.Code != codeDirectoryBudget || g.Severity != severityWarning || g.Message != want ||
				g.Range.Start.Character != 4 || g.Range.End.Character != 9 {
				t.Errorf("diagnostic %+v, want a warning on @src/ saying %q", g, want)
			}
			actions := actionsAt(t, h, uri, 0)
			var titles []string
			var preferred *wireAction
			for i, a := range actions {
				titles = append(titles, a.Title)
				if a.IsPreferred {
					if preferred != nil {
						t.Errorf("two preferred fixes: %+v", actions)
					}
					preferred = &actions[i]
				}
				if len(a.Diagnostics) != 1 || a.Diagnostics[0].Code != codeDirectoryBudget || a.Kind != "quickfix" {
					t.Errorf("fix %q of kind %q for %+v", a.Title, a.Kind, a.Diagnostics)
				}
			}
			if !slices.Equal(titles, c.titles) {
				t.Errorf("fixes %q, want %q", titles, c.titles)
			}
			if c.preferred == "" {
				if preferred != nil {
					t.Errorf("preferred fix %q, want none when no subfolder fits", preferred.Title)
				}
				return
			}
			if preferred == nil {
				t.Fatalf("no preferred fix among %q", titles)
			}
			fixed := applyEdit(t, text, uri, preferred.Edit)
			if fixed != c.preferred {
				t.Fatalf("after %q: %q, want %q", preferred.Title, fixed, c.preferred)
			}
			h.notify("textDocument/didChange", map[string]any{"textDocument": map[string]any{"uri": uri, "version": 2},
				"contentChanges": []map[string]any{{"text": fixed + "\n"}}})
			if d := h.diagnosticsFor(uri, 2); len(d.Diagnostics) != 0 {
				t.Errorf("diagnostics after the fix: %+v", d.Diagnostics)
			}
		})
	}
}

func TestDirectoryBudgetOff(t *testing.T) {
	ws := factsWorkspace(t)
	h := factsHarness(t, ws, initOptions{settings: map[string]any{"directoryTokenBudget": 0}})
	h.open("file:///off.md", "see @src/ and @src/big/ now", EncodingUTF16)
	if d := h.diagnosticsFor("file:///off.md", 1); len(d.Diagnostics) != 0 {
		t.Errorf("diagnostics with the budget off: %+v", d.Diagnostics)
	}
	// The default budget (100k tokens) holds this workspace too.
	h2 := factsHarness(t, ws, initOptions{})
	h2.open("file:///def.md", "see @src/ now", EncodingUTF16)
	if d := h2.diagnosticsFor("file:///def.md", 1); len(d.Diagnostics) != 0 {
		t.Errorf("diagnostics with the default budget: %+v", d.Diagnostics)
	}
}

func TestDirectoryTokenBudgetSetting(t *testing.T) {
	if got := DefaultConfig().DirectoryTokenBudget; got != 100_000 {
		t.Errorf("default directoryTokenBudget %d", got)
	}
	for _, good := range []string{`0`, `1`, `250000`} {
		c, _, err := applyConfig(DefaultConfig(), json.RawMessage(`{"directoryTokenBudget": `+good+`}`))
		if n, _ := strconv.Atoi(good); err != nil || c.DirectoryTokenBudget != n {
			t.Errorf("directoryTokenBudget %s: %+v, %v", good, c.DirectoryTokenBudget, err)
		}
	}
	for _, bad := range []string{`-1`, `1.5`, `"100"`, `true`} {
		_, _, err := applyConfig(DefaultConfig(), json.RawMessage(`{"directoryTokenBudget": `+bad+`}`))
		var ce *configError
		if !errors.As(err, &ce) || ce.Field != "directoryTokenBudget" {
			t.Errorf("directoryTokenBudget %s: %v, want a configuration error naming the field", bad, err)
		}
	}
	c, _, err := applyConfig(DefaultConfig(), json.RawMessage(`{"directoryTokenBudget": null}`))
	if err != nil || c.DirectoryTokenBudget != defaultDirectoryTokenBudget {
		t.Errorf("null: %d, %v", c.DirectoryTokenBudget, err)
	}
}

func TestDirSummaryAndNumbers(t *testing.T) {
	for _, c := range []struct {
		t    fileref.Totals
		want string
	}{
		{fileref.Totals{}, "0 files"},
		{fileref.Totals{Files: 1, Bytes: 1}, "1 file · 1 byte · ~1 token"},
		{fileref.Totals{Files: 2, Bytes: 2048, BinaryFiles: 2, BinaryBytes: 2048}, "2 files · 2 KB"},
		{fileref.Totals{Files: 12345, Bytes: 3 << 20}, "12,345 files · 3.0 MB · ~786k tokens"},
		{fileref.Totals{Files: 3, Bytes: 4000, Unmeasured: 1}, "3 files · ≥ 4 KB · ≥ ~1k tokens"},
		{fileref.Totals{Files: 1, Bytes: 5200, Huge: 1}, "1 file · ≥ 5 KB · ≥ ~1.3k tokens"},
	} {
		if got := dirSummary(c.t); got != c.want {
			t.Errorf("dirSummary(%+v) = %q, want %q", c.t, got, c.want)
		}
	}
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1k", 1049: "1k", 1050: "1.1k", 9999: "10k", 10_000: "10k",
		820_400: "820k", 999_499: "999k", 1_000_000: "1M", 3_450_000: "3.5M"} {
		if got := humanTokens(n); got != want {
			t.Errorf("humanTokens(%d) = %q, want %q", n, got, want)
		}
	}
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 12345: "12,345", 123456: "123,456", 1234567: "1,234,567", 1_000_000: "1,000,000", -1234: "-1,234"} {
		if got := groupThousands(n); got != want {
			t.Errorf("groupThousands(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestNarrowingLooksPastTheBiggestEntries: subfolders smaller than every
// file beside them are still offered, and one fix writes at most
// maxNarrowMentions mentions.
func TestNarrowingLooksPastTheBiggestEntries(t *testing.T) {
	ws := t.TempDir()
	for i := 1; i <= 9; i++ {
		writeSized(t, ws, "wide/f"+strconv.Itoa(i)+".txt", 4000)
	}
	for i := 1; i <= 6; i++ {
		writeSized(t, ws, "wide/s"+strconv.Itoa(i)+"/x.txt", 400)
	}
	h := factsHarness(t, ws, initOptions{settings: map[string]any{"directoryTokenBudget": 5000}})
	uri := "file:///wide.md"
	h.open(uri, "see @wide/ now", EncodingUTF16)
	if d := h.diagnosticsFor(uri, 1); len(d.Diagnostics) != 1 {
		t.Fatalf("diagnostics %+v, want one on @wide/", d.Diagnostics)
	}
	var titles []string
	for _, a := range actionsAt(t, h, uri, 0) {
		titles = append(titles, a.Title)
	}
	want := []string{"Narrow to @wide/s1/ @wide/s2/ @wide/s3/ @wide/s4/ (~400 tokens)", "Narrow to @wide/s1/ (~100 tokens)", "Narrow to @wide/s2/ (~100 tokens)"}
	if !slices.Equal(titles, want) {
		t.Errorf("fixes %q, want %q", titles, want)
	}
}

// BenchmarkDirSummary: what one directory row of a completion list adds.
func BenchmarkDirSummary(b *testing.B) {
	t := fileref.Totals{Files: 6000, Dirs: 310, Bytes: 3 << 20, BinaryFiles: 20, BinaryBytes: 1 << 20}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		_ = dirSummary(t)
	}
}
