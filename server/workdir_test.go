package server

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dsh-refls/dsh-refls/internal/dshgen"
	"github.com/dsh-refls/dsh-refls/sessionref"
)

// TestWorkingDirectoryInHoverAndCandidates: a session whose log moved it
// with dsh 0.2.1's working-directory/change (dsh 0.2.1-alpha.2,
// zq0929/deepseek-harness@5593cc250aae228449197efd2413192165e3377f,
// packages/session/working-directory/src/index.ts) is this workspace's
// when it moved here: dsh/candidates lists it with the header's cwd (as
// dsh's listing, built from header-only snapshots, has it), its
// workingDirectory and sameWorkspace, ahead of a newer session of another
// directory; hover says where it started and where it is now.
func TestWorkingDirectoryInHoverAndCandidates(t *testing.T) {
	root := filepath.Join(t.TempDir(), "sessions")
	ws, elsewhere := "/work/wd/project", "/work/wd/elsewhere"
	moved := dshgen.NewV4Session("moved").Cwd(elsewhere).Turn(func(tr *dshgen.Turn) {
		tr.UserText("Review the rate limiter.")
		tr.ChangeDirectory(ws)
		tr.AssistantText("Looks fine.")
		tr.Title("Rate limiter review", "fallback")
	})
	other := dshgen.NewV4Session("other").Cwd(elsewhere).CreatedAt(dshgen.DefaultCreatedAt + 1000).Turn(func(tr *dshgen.Turn) {
		tr.UserText("Rate the docs.")
		tr.AssistantText("Good.")
		tr.Title("Rate the docs", "fallback")
	})
	for _, s := range []*dshgen.Session{moved, other} {
		if _, err := s.Save(root, dshgen.Zstd); err != nil {
			t.Fatal(err)
		}
	}
	h := newHarness(t, Options{SessionsRoot: root})
	h.initialize(initOptions{root: t.TempDir(), settings: map[string]any{"sessionId": "target-session", "cwd": ws}})
	waitStatus(t, h, func(st statusResult) bool { return !st.Building && st.SessionsIndexed == 2 })

	var raw json.RawMessage
	h.mustCall(MethodCandidates, map[string]any{"query": "rate"}, &raw)
	var cands []map[string]any
	if err := json.Unmarshal(raw, &cands); err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	if len(cands) != 2 || cands[0]["sessionId"] != "moved" || cands[0]["cwd"] != elsewhere ||
		cands[0]["workingDirectory"] != ws || cands[0]["sameWorkspace"] != true {
		t.Fatalf("dsh/candidates: %s", raw)
	}
	if _, has := cands[1]["workingDirectory"]; has || cands[1]["sameWorkspace"] != false {
		t.Errorf("a session that never moved: %v", cands[1])
	}

	mention := sessionref.Mention("Rate limiter review", "moved")
	uri := "file:///moved.md"
	pos := h.open(uri, "see "+mention[:4]+cursor+mention[4:], EncodingUTF16)
	var hv hoverResult
	h.mustCall("textDocument/hover", map[string]any{"textDocument": map[string]any{"uri": uri}, "position": pos}, &hv)
	if want := "started in " + elsewhere + ", now in " + ws; !strings.Contains(strings.ReplaceAll(hv.Contents.Value, "`", ""), want) {
		t.Errorf("hover does not say %q:\n%s", want, hv.Contents.Value)
	}
}
