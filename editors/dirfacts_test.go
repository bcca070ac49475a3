package editors

import (
	"strings"
	"testing"
)

// The directory facts flows (issue 30 item 3) mention corpus/, a folder
// whose estimate exceeds the default directoryTokenBudget (100,000
// tokens): a/ 60k, b/ 30k, c/ 20k tokens, 110k in all. Its narrowing fix
// keeps a/ and b/ (90k), the largest subfolders that fit together. No
// name in it holds r-a-t-e in order, so "@rate" never lists it.
const (
	corpusDir = "corpus"
	// corpusFix is the title of the preferred quick fix on "@corpus/", and
	// corpusFixed the mentions it writes.
	corpusFix   = "Narrow to @corpus/a/ @corpus/b/ (~90k tokens)"
	corpusFixed = "@corpus/a/ @corpus/b/"
	// corpusSummary is what corpus/'s row and hover say of it.
	corpusSummary = "3 files · 430 KB · ~110k tokens"
)

// corpusFiles are the files of corpus/, by workspace-relative path.
func corpusFiles() map[string]string {
	return map[string]string{
		corpusDir + "/a/0.txt": strings.Repeat("a", 240_000),
		corpusDir + "/b/0.txt": strings.Repeat("b", 120_000),
		corpusDir + "/c/0.txt": strings.Repeat("c", 80_000),
	}
}

// TestCorpusSizes keeps the constants above true to the files.
func TestCorpusSizes(t *testing.T) {
	total := 0
	for _, text := range corpusFiles() {
		total += len(text)
	}
	if total != 440_000 || (total+512)/1024 != 430 || total/4 != 110_000 {
		t.Errorf("corpus/ holds %d bytes; the flows expect 440,000 (430 KB, 110k tokens)", total)
	}
}

// diagnosedLine reports whether the screen shows the line holding text
// with a diagnostic's sign (W) or virtual text (■).
func diagnosedLine(screen, text string) bool {
	for _, l := range strings.Split(screen, "\n") {
		if strings.Contains(l, text) && (strings.HasPrefix(l, "W ") || strings.Contains(l, "■")) {
			return true
		}
	}
	return false
}

// directoryFactsFlow drives the directory facts in a fresh account's
// Neovim (a step of driveNeovimFlows): corpus/ is written into the
// workspace, which the server watches itself; a line mentioning it gets
// the budget diagnostic once the server has measured it; K on the mention
// shows its facts and tree; the first code action narrows it to the
// subfolders that fit, and no diagnostic is left.
func directoryFactsFlow(t *testing.T, f *freshNvim) {
	writeFiles(t, f.demo.hostWorkspace, corpusFiles())
	const line = "Corpus: @" + corpusDir + "/ is big."
	f.keys("Escape", "G", "o")
	f.text(line)
	f.keys("Escape")
	f.wait(t, "the budget diagnostic on @corpus/", func(s string) bool { return diagnosedLine(s, line) })
	f.keys("0", "f@")
	f.text(":lua vim.diagnostic.open_float()")
	f.keys("Enter")
	diag := f.wait(t, "the budget diagnostic's message", func(s string) bool {
		return strings.Contains(s, "would bring ~110k tokens") && strings.Contains(s, "directoryTokenBudget")
	})
	t.Logf("the directory's diagnostic:\n%s", diag)

	f.keys("Escape", "0", "f@", "K")
	hover := f.wait(t, "the directory's hover", func(s string) bool {
		return strings.Contains(s, corpusSummary) && strings.Contains(s, "├── a/")
	})
	t.Logf("K on @corpus/:\n%s", hover)
	f.keys("Escape", "0")
	f.wait(t, "the hover closed", func(s string) bool { return !strings.Contains(s, "├── a/") })

	f.keys("0", "f@")
	f.text(":lua vim.lsp.buf.code_action()")
	f.keys("Enter")
	actions := f.wait(t, "the narrowing code actions", func(s string) bool { return strings.Contains(s, corpusFix) })
	t.Logf("vim.lsp.buf.code_action() on @corpus/:\n%s", actions)
	f.keys("1", "Enter")
	fixed := "Corpus: " + corpusFixed + " is big."
	f.wait(t, "the narrowed line, undiagnosed", func(s string) bool {
		return strings.Contains(s, fixed) && !strings.Contains(s, "Narrow to") && !diagnosedLine(s, fixed)
	})
	if got := f.echo(t, "DIRDIAGS", "#vim.diagnostic.get(0)"); got != "0" {
		t.Errorf("after narrowing @corpus/ the buffer has %s diagnostics, want 0", got)
	}
}

// directoryFacts drives the directory facts in Emacs with eglot (a step
// of TestEmacsFeatures, whose workspace holds corpus/): a line mentioning
// corpus/ gets the budget diagnostic; eldoc's hover on the mention, in
// its *eldoc* buffer, gives its facts and its tree; eglot-code-actions offers
// the narrowing fix as its default, which leaves no diagnostic.
func (e *emacsScreen) directoryFacts(t *testing.T) {
	t.Helper()
	const line = "Corpus: @" + corpusDir + "/ is big."
	e.keys("C-e", "Enter")
	e.text(line)
	e.keys("C-a")
	warned := e.wait(t, "the budget diagnostic", func(s string) bool {
		return strings.Contains(s, line) && strings.Contains(s, "Flymake[0 1]")
	})
	t.Logf("the directory's diagnostic:\n%s", warned)
	e.keys("C-s")
	e.text("@" + corpusDir) // isearch ignores case: "Corpus:" holds corpus too
	// A motion after the search: eldoc answers motions, not isearch's exit.
	e.keys("Enter", "C-b")
	// The echo area shows as much of the hover as fits, its end.
	e.wait(t, "eldoc's hover in the echo area", func(s string) bool { return strings.Contains(s, "Use `M-x eldoc-doc-buffer'") })
	e.keys("M-x")
	e.text("eldoc-doc-buffer")
	e.keys("Enter")
	tree := e.wait(t, "the *eldoc* buffer with the facts and the tree", func(s string) bool {
		return strings.Contains(s, "directory · "+corpusSummary) && strings.Contains(s, "├── a/") && strings.Contains(s, "*eldoc")
	})
	t.Logf("eldoc on @corpus/ (M-x eldoc-doc-buffer):\n%s", tree)
	e.keys("C-x", "1", "M-x")
	e.text("eglot-code-actions")
	e.keys("Enter")
	actions := e.wait(t, "the narrowing action as the default", func(s string) bool { return strings.Contains(s, "(default "+corpusFix) })
	t.Logf("M-x eglot-code-actions on @corpus/:\n%s", actions)
	e.keys("Enter")
	fixed := e.wait(t, "the narrowed line", func(s string) bool {
		return strings.Contains(s, "Corpus: "+corpusFixed+" is big.") && strings.Contains(s, "Flymake[0 0]")
	})
	t.Logf("after the default action:\n%s", fixed)
}
