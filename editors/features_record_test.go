package editors

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// The user flows every editor end-to-end test drives, as the feature table
// of docs/editors.md names them (scripts/editortable renders and checks it
// from what the tests record).
const (
	featMenu          = "menu at @"
	featNarrow        = "@rate: session and file first"
	featAcceptSession = "accept a session"
	featAcceptFile    = "accept a file with a space"
	featHover         = "hover"
	featDiagnostic    = "diagnostic"
	featQuickFix      = "quick fix"
	featPreview       = "mention's preview"
	featPrepare       = "prepare command"
	featStatus        = "status command"
)

// featureRecordDir is where the records go, relative to the repository
// root; DSH_REFLS_EDITOR_RESULTS names another directory.
const featureRecordDir = "test-results/editors"

// featureRecord is one editor run's record: which flows passed and the
// measured time from keystroke to menu. It is written, one JSON file per
// editor setup, only when the test ends; a flow is recorded only when it
// passed (ok is called after its checks, and only if the test has not
// failed by then).
type featureRecord struct {
	Editor  string   `json:"editor"`  // the setup, e.g. "Neovim (vim.lsp.enable)"
	Version string   `json:"version"` // the editor's version, as it prints it
	Passed  []string `json:"passed"`
	// MenuMs is the keystroke-to-menu times measured, in milliseconds.
	MenuMs []float64 `json:"menuMs,omitempty"`
	// Notes say why a flow was not driven (the editor has no such command).
	Notes map[string]string `json:"notes,omitempty"`
	// At is when the run ended.
	At time.Time `json:"at"`

	t  *testing.T
	mu sync.Mutex
}

// recordFeatures starts the record of one editor setup; it is written when
// the test ends.
func recordFeatures(t *testing.T, editor, version string) *featureRecord {
	t.Helper()
	r := &featureRecord{Editor: editor, Version: version, t: t, Notes: map[string]string{}}
	dir := os.Getenv("DSH_REFLS_EDITOR_RESULTS")
	if dir == "" {
		dir = filepath.Join(repoRoot(t), filepath.FromSlash(featureRecordDir))
	}
	t.Cleanup(func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.At = time.Now().UTC()
		data, err := json.MarshalIndent(r, "", "  ")
		if err == nil {
			err = os.MkdirAll(dir, 0o755)
		}
		if err == nil {
			err = os.WriteFile(filepath.Join(dir, recordFileName(editor)), append(data, '\n'), 0o644)
		}
		if err != nil {
			t.Errorf("writing the feature record of %s: %v", editor, err)
		}
	})
	return r
}

// ok records that flow passed, unless the test has failed already.
func (r *featureRecord) ok(flow string) {
	r.t.Helper()
	if r.t.Failed() {
		r.t.Logf("not recording %q for %s: the test has failed", flow, r.Editor)
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.Passed = append(r.Passed, flow)
}

// menuTime records one keystroke-to-menu time.
func (r *featureRecord) menuTime(d time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.MenuMs = append(r.MenuMs, float64(d.Microseconds())/1000)
}

// note says why flow is not driven in this editor.
func (r *featureRecord) note(flow, why string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.Notes[flow] = why
}

var nonSlug = regexp.MustCompile(`[^a-z0-9]+`)

// recordFileName is the file of one editor setup's record.
func recordFileName(editor string) string {
	return strings.Trim(nonSlug.ReplaceAllString(strings.ToLower(editor), "-"), "-") + ".json"
}
