// Command editortable renders the per-editor feature table of
// docs/editors.md from what the editors' end-to-end tests recorded
// (editors/features_record_test.go writes one JSON file per editor setup
// under test-results/editors/), and checks the table against a run, so
// that the docs never claim a flow the run did not show.
//
//	go run ./scripts/editortable --write docs/editors.md   # after a run of the editor tests
//	go run ./scripts/editortable --check docs/editors.md   # what CI runs after them
//
// The table stands between the lines <!-- editor-table:begin --> and
// <!-- editor-table:end -->. --check fails when a cell of the table says
// a flow works (✓) and the run's record of that editor setup does not hold
// it, or when the run has no record of a setup the table lists; it prints
// the run's own table first (every editor setup with its version and the
// flows it showed), and what the run showed beyond the docs' table, which
// --write would add.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"
)

// flows are the user flows of the table, in column order; the tests
// record these names (editors/features_record_test.go).
var flows = []string{
	"menu at @",
	"@rate: session and file first",
	"accept a session",
	"accept a file with a space",
	"hover",
	"diagnostic",
	"quick fix",
	"mention's preview",
	"prepare command",
	"status command",
	"picks rank first",
	"@all: shows hidden sessions",
	"directory facts and budget",
	"continue from a session",
	"search hit opens at its message",
}

// setupOrder lists the editor setups in row order; a setup not listed
// follows them, by name.
var setupOrder = []string{
	"VS Code (code-server)",
	"Neovim 0.12 (vim.lsp.enable)",
	"Neovim 0.12 + setup()",
	"Neovim 0.7 + setup()",
	"Helix",
	"Emacs 30 eglot + dsh-refls.el",
	"Emacs 30 plain eglot",
	"Emacs 28 eglot 1.9 + dsh-refls.el",
	"Emacs 28 plain eglot",
}

const (
	beginMarker = "<!-- editor-table:begin -->"
	endMarker   = "<!-- editor-table:end -->"
	yes         = "✓"
)

// record is one editor setup's record, as the tests write it.
type record struct {
	Editor  string            `json:"editor"`
	Version string            `json:"version"`
	Passed  []string          `json:"passed"`
	MenuMs  []float64         `json:"menuMs"`
	Notes   map[string]string `json:"notes"`
	At      time.Time         `json:"at"`
}

func main() {
	write := flag.String("write", "", "replace the table in this Markdown file with the one the records give")
	check := flag.String("check", "", "check the table in this Markdown file against the records")
	dir := flag.String("records", "test-results/editors", "the directory of the records")
	flag.Parse()
	recs, err := readRecords(*dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "editortable:", err)
		os.Exit(2)
	}
	switch {
	case *write != "":
		err = writeTable(*write, recs)
	case *check != "":
		// The run's own table first: which editor, which version, which
		// flows it showed (the test report of the editors).
		fmt.Printf("editortable: what this run's editor tests showed:\n%s\n", render(recs))
		err = checkTable(*check, recs, os.Stdout)
	default:
		_, err = os.Stdout.WriteString(render(recs))
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "editortable:", err)
		os.Exit(1)
	}
}

// readRecords reads every record of dir, in row order.
func readRecords(dir string) ([]record, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("no records in %s: run the editor tests first (go test ./editors/)", dir)
	}
	var recs []record
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		var r record
		if err := json.Unmarshal(data, &r); err != nil {
			return nil, fmt.Errorf("reading %s: %w", p, err)
		}
		for _, f := range append(slices.Clone(r.Passed), mapKeys(r.Notes)...) {
			if !slices.Contains(flows, f) {
				return nil, fmt.Errorf("%s records the flow %q, which the table has no column for", p, f)
			}
		}
		recs = append(recs, r)
	}
	sort.SliceStable(recs, func(i, j int) bool {
		a, b := rowIndex(recs[i].Editor), rowIndex(recs[j].Editor)
		if a != b {
			return a < b
		}
		return recs[i].Editor < recs[j].Editor
	})
	return recs, nil
}

func rowIndex(editor string) int {
	if i := slices.Index(setupOrder, editor); i >= 0 {
		return i
	}
	return len(setupOrder)
}

func mapKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// render is the table of recs with its notes, between the markers.
func render(recs []record) string {
	var b strings.Builder
	b.WriteString(beginMarker + "\n")
	b.WriteString("| editor | version | " + strings.Join(flows, " | ") + " | keystroke to menu (median) |\n")
	b.WriteString("|---|---|" + strings.Repeat("---|", len(flows)) + "---|\n")
	var notes []string
	for _, r := range recs {
		cells := []string{r.Editor, "`" + r.Version + "`"}
		for _, f := range flows {
			switch {
			case slices.Contains(r.Passed, f):
				cells = append(cells, yes)
			case r.Notes[f] != "":
				notes = append(notes, r.Notes[f])
				cells = append(cells, fmt.Sprintf("— [%d]", len(notes)))
			default:
				cells = append(cells, "✗")
			}
		}
		cells = append(cells, medianMs(r.MenuMs))
		b.WriteString("| " + strings.Join(cells, " | ") + " |\n")
	}
	if len(notes) > 0 {
		b.WriteString("\n")
		for i, n := range notes {
			fmt.Fprintf(&b, "[%d] %s\n", i+1, n)
		}
	}
	b.WriteString(endMarker)
	return b.String()
}

// medianMs is the median of ms, or "—" for none.
func medianMs(ms []float64) string {
	if len(ms) == 0 {
		return "—"
	}
	s := slices.Clone(ms)
	slices.Sort(s)
	m := s[len(s)/2]
	if len(s)%2 == 0 {
		m = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return fmt.Sprintf("%.0f ms (%d)", m, len(s))
}

// splitDoc returns the text before the table, the table and the text after.
func splitDoc(doc string) (before, table, after string, err error) {
	i := strings.Index(doc, beginMarker)
	j := strings.Index(doc, endMarker)
	if i < 0 || j < i {
		return "", "", "", fmt.Errorf("no %s … %s block", beginMarker, endMarker)
	}
	return doc[:i], doc[i : j+len(endMarker)], doc[j+len(endMarker):], nil
}

func writeTable(path string, recs []record) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	before, _, after, err := splitDoc(string(data))
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return os.WriteFile(path, []byte(before+render(recs)+after), 0o644)
}

// checkTable reports every ✓ of the table at path that recs do not show,
// and every row recs have no record of.
func checkTable(path string, recs []record, out io.Writer) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	_, table, _, err := splitDoc(string(data))
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	byEditor := map[string]record{}
	for _, r := range recs {
		byEditor[r.Editor] = r
	}
	var problems []string
	rows := 0
	for _, line := range strings.Split(table, "\n") {
		cells := tableCells(line)
		if len(cells) != len(flows)+3 || cells[0] == "editor" || strings.HasPrefix(cells[0], "---") {
			continue
		}
		rows++
		r, ok := byEditor[cells[0]]
		if !ok {
			problems = append(problems, fmt.Sprintf("%q: the table lists it, but this run recorded nothing of it (did its test skip? see the test report)", cells[0]))
			continue
		}
		for i, f := range flows {
			if cells[2+i] == yes && !slices.Contains(r.Passed, f) {
				problems = append(problems, fmt.Sprintf("%q: the table says %q works; this run did not show it", cells[0], f))
			}
			if cells[2+i] != yes && slices.Contains(r.Passed, f) {
				fmt.Fprintf(out, "editortable: %q: this run showed %q, which the table does not claim (--write adds it)\n", cells[0], f)
			}
		}
		delete(byEditor, cells[0])
	}
	for name := range byEditor {
		fmt.Fprintf(out, "editortable: %q: recorded by this run, not in the table (--write adds it)\n", name)
	}
	if len(problems) > 0 {
		return errors.New(path + " claims what this run did not show:\n  " + strings.Join(problems, "\n  "))
	}
	fmt.Fprintf(out, "editortable: %s: every ✓ of its %d rows was shown by this run\n", path, rows)
	return nil
}

// tableCells splits a Markdown table row into its trimmed cells.
func tableCells(line string) []string {
	line = strings.TrimSpace(line)
	if !strings.HasPrefix(line, "|") || !strings.HasSuffix(line, "|") {
		return nil
	}
	parts := strings.Split(line[1:len(line)-1], "|")
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	return parts
}
