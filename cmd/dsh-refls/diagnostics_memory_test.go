//go:build linux

package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dsh-refls/dsh-refls/internal/dshgen"
	"github.com/dsh-refls/dsh-refls/internal/longtest"
	"github.com/dsh-refls/dsh-refls/sessionref"
)

// TestBinaryDiagnosticsOfManyDocumentsAreBounded opens many documents at
// once, each mentioning one large session they all share and one of 11
// others, and waits for the diagnostics of every one of them: 60 documents
// over 4 MiB sessions, and 100 over 16 MiB sessions (issue 12 item 6's two
// cases). Diagnostics used to read a log per document, all at once (near
// 1 GB and 3.7 GB); reads are now bounded and shared, and the process must
// stay below filesPeakLimit.
func TestBinaryDiagnosticsOfManyDocumentsAreBounded(t *testing.T) {
	longtest.Require(t)
	if testing.Short() {
		t.Skip("writes 48 and 192 MiB of session logs")
	}
	t.Run("60x4MiB", func(t *testing.T) { checkDiagnosticsMemory(t, 60, 4<<20) })
	t.Run("100x16MiB", func(t *testing.T) { checkDiagnosticsMemory(t, 100, 16<<20) })
}

// checkDiagnosticsMemory runs one case: docs documents over 12 sessions of
// size bytes each.
func checkDiagnosticsMemory(t *testing.T, docs, size int) {
	const (
		sessions = 12
		turns    = 16
	)
	store, ws := t.TempDir(), t.TempDir()
	expected, err := dshgen.DemoStoreFor(store, ws, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]string, sessions)
	for i := range ids {
		ids[i] = fmt.Sprintf("big-%02d", i)
		s := dshgen.NewSession(ids[i]).Cwd(ws)
		for k := 0; k < turns; k++ {
			s.Turn(func(tr *dshgen.Turn) {
				tr.UserText(strings.Repeat(fmt.Sprintf("question %d of %s ", k, ids[i]), size/turns/24))
				if k == 0 {
					tr.Title("Big session "+ids[i], "user")
				}
			})
		}
		if _, err := s.Save(store, dshgen.Raw); err != nil {
			t.Fatal(err)
		}
	}
	p := startWire(t, "--sessions-root", store, "--watch", "off")
	p.initialize(ws, expected[0].ID)

	uris := map[string]bool{}
	for i := 0; i < docs; i++ {
		uri := "file://" + filepath.Join(ws, fmt.Sprintf("doc-%02d.md", i))
		uris[uri] = true
		text := "See " + sessionref.Mention("shared", ids[0]) + " and " + sessionref.Mention("own", ids[1+i%(sessions-1)]) + "\n"
		p.send(map[string]any{"method": "textDocument/didOpen", "params": map[string]any{"textDocument": map[string]any{
			"uri": uri, "languageId": "markdown", "version": 1, "text": text}}})
	}
	for len(uris) > 0 {
		var d struct {
			URI     string `json:"uri"`
			Version *int32 `json:"version"`
		}
		if err := json.Unmarshal(p.notification("textDocument/publishDiagnostics"), &d); err != nil {
			t.Fatal(err)
		}
		if d.Version == nil || *d.Version != 1 {
			t.Fatalf("diagnostics of %s for version %v, want 1", d.URI, d.Version)
		}
		delete(uris, d.URI)
	}
	p.checkPeak(fmt.Sprintf("%d documents mentioning %d sessions of %d MiB", docs, sessions, size>>20))
	p.shutdown()
}
