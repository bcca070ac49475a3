package server

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dsh-refls/dsh-refls/internal/dshgen"
	"github.com/dsh-refls/dsh-refls/sessionref"

	"github.com/dsh-refls/dsh-refls/internal/lsptest"
)

// TestV4RefusalsInHoverAndDiagnostics: a v4 log dsh refuses stays listed;
// dsh/prepare fails with READ_FAILED naming the rule, and hover and
// diagnostics say the same (SPEC §1.7).
func TestV4RefusalsInHoverAndDiagnostics(t *testing.T) {
	root := filepath.Join(t.TempDir(), "sessions")
	cases, err := dshgen.V4Cases(root, dshgen.Zstd)
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, Options{SessionsRoot: root})
	h.initialize(initOptions{root: t.TempDir(), settings: map[string]any{"sessionId": "target-session", "cwd": "/work/cases/v4"}})
	st := waitStatus(t, h, func(st statusResult) bool { return !st.Building && st.SessionsIndexed == len(cases) })
	// V4Cases writes two events of types dsh 0.2 does not know:
	// "future/log-only" (skipped) and "future/message" (a refusal, since it
	// carries surfaceOp). dsh/status counts both.
	if st.UnknownEvents != 2 {
		t.Errorf("dsh/status unknownEvents = %d, want 2", st.UnknownEvents)
	}
	refused := 0
	for n, c := range cases {
		if c.Refusal == "" {
			continue
		}
		refused++
		t.Run(c.ID, func(t *testing.T) {
			mention := sessionref.Mention(c.DisplayTitle, c.ID)
			err := h.call(MethodPrepare, map[string]any{"text": "Recall " + mention}, &PrepareResult{})
			var rpc *lsptest.Error
			var data ErrorData
			if !asRPC(err, &rpc) || json.Unmarshal(rpc.Data, &data) != nil || data.Code != sessionref.CodeReadFailed || !strings.Contains(rpc.Message, c.Refusal) {
				t.Errorf("dsh/prepare error %v (data %+v), want READ_FAILED naming %q", err, data, c.Refusal)
			}
			uri := fmt.Sprintf("file:///refused-%d.md", n)
			pos := h.open(uri, "see "+mention[:4]+cursor+mention[4:], EncodingUTF16)
			var hv hoverResult
			h.mustCall("textDocument/hover", map[string]any{"textDocument": map[string]any{"uri": uri}, "position": pos}, &hv)
			if !strings.Contains(hv.Contents.Value, c.Refusal) {
				t.Errorf("hover does not name %q:\n%s", c.Refusal, hv.Contents.Value)
			}
			d := h.diagnosticsFor(uri, 1)
			found := false
			for _, g := range d.Diagnostics {
				found = found || (g.Code == string(sessionref.CodeReadFailed) && strings.Contains(g.Message, c.Refusal))
			}
			if !found {
				t.Errorf("no READ_FAILED diagnostic naming %q: %+v", c.Refusal, d.Diagnostics)
			}
		})
	}
	if refused != 4 {
		t.Fatalf("%d refused cases, want 4", refused)
	}
}
