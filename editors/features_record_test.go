package editors

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
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
	featFrecency      = "picks rank first"
	featScopes        = "@all: shows hidden sessions"
	featDirFacts      = "directory facts and budget"
	featContinue      = "continue from a session"
	featSearchHit     = "search hit opens at its message"
)

// featureRecordDir is where the records go, relative to the repository
// root; DSH_REFLS_EDITOR_RESULTS names another directory.
const featureRecordDir = "test-results/editors"

// featureRecord is one editor setup's record in this run: which flows
// passed and the measured times from keystroke to menu. Every test that
// drives the setup adds to it (recordFeatures), and each writes the whole
// record, one JSON file per setup, when it ends: the last to end writes
// what they all showed. A flow is added only when it passed (ok is called
// after its checks, and only if its test has not failed by then).
type featureRecord struct {
	Editor  string   `json:"editor"`  // the setup, e.g. "Neovim 0.12 (vim.lsp.enable)"
	Version string   `json:"version"` // the editor's version, as it prints it
	Passed  []string `json:"passed"`
	// MenuMs is the keystroke-to-menu times measured, in milliseconds.
	MenuMs []float64 `json:"menuMs,omitempty"`
	// Notes say why a flow was not driven (the editor has no such command).
	Notes map[string]string `json:"notes,omitempty"`
	// At is when the last test of the setup ended.
	At time.Time `json:"at"`
}

// featureRecords holds the records of this test binary's run by setup,
// and guards them and their files.
var featureRecords struct {
	mu      sync.Mutex
	bySetup map[string]*featureRecord
}

// featureRun is one test's hand on its setup's record.
type featureRun struct {
	t   *testing.T
	rec *featureRecord
}

// recordFeatures returns the test's hand on the record of editor setup
// editor (version as the editor prints it); the record is written when
// the test ends.
func recordFeatures(t *testing.T, editor, version string) *featureRun {
	t.Helper()
	dir := os.Getenv("DSH_REFLS_EDITOR_RESULTS")
	if dir == "" {
		dir = filepath.Join(repoRoot(t), filepath.FromSlash(featureRecordDir))
	}
	featureRecords.mu.Lock()
	if featureRecords.bySetup == nil {
		featureRecords.bySetup = map[string]*featureRecord{}
	}
	rec := featureRecords.bySetup[editor]
	if rec == nil {
		rec = &featureRecord{Editor: editor, Version: version, Notes: map[string]string{}}
		featureRecords.bySetup[editor] = rec
	}
	featureRecords.mu.Unlock()
	if rec.Version != version {
		t.Errorf("the setup %q was recorded with version %q and now %q", editor, rec.Version, version)
	}
	t.Cleanup(func() {
		featureRecords.mu.Lock()
		defer featureRecords.mu.Unlock()
		rec.At = time.Now().UTC()
		data, err := json.MarshalIndent(rec, "", "  ")
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
	return &featureRun{t: t, rec: rec}
}

// ok records that flow passed, unless the test has failed already.
func (r *featureRun) ok(flow string) {
	r.t.Helper()
	if r.t.Failed() {
		r.t.Logf("not recording %q for %s: the test has failed", flow, r.rec.Editor)
		return
	}
	featureRecords.mu.Lock()
	defer featureRecords.mu.Unlock()
	if !slices.Contains(r.rec.Passed, flow) {
		r.rec.Passed = append(r.rec.Passed, flow)
	}
}

// menuTime records one keystroke-to-menu time.
func (r *featureRun) menuTime(d time.Duration) {
	featureRecords.mu.Lock()
	defer featureRecords.mu.Unlock()
	r.rec.MenuMs = append(r.rec.MenuMs, float64(d.Microseconds())/1000)
}

// note says why flow is not driven in this editor.
func (r *featureRun) note(flow, why string) {
	featureRecords.mu.Lock()
	defer featureRecords.mu.Unlock()
	r.rec.Notes[flow] = why
}

var nonSlug = regexp.MustCompile(`[^a-z0-9]+`)

// recordFileName is the file of one editor setup's record.
func recordFileName(editor string) string {
	return strings.Trim(nonSlug.ReplaceAllString(strings.ToLower(editor), "-"), "-") + ".json"
}
