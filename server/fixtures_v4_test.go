package server

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/dsh-refls/dsh-refls/internal/testfixtures"
)

// TestFixturesV4PrepareAndHover serves the format-v4 stores dsh 0.2
// recorded (../shared/fixtures-v4, raw and zstd) and checks, for every
// session of expected.json, dsh/prepare at the default budget and at the
// small budget listed there (snapshot data, stats, capturedThroughSeq,
// capturedFormatVersion) and the hover facts of its mention.
func TestFixturesV4PrepareAndHover(t *testing.T) {
	dir := testfixtures.DirV4(t)
	want := testfixtures.LoadExpected(t, dir)
	for _, store := range []string{"raw", "zstd"} {
		t.Run(store, func(t *testing.T) {
			root := filepath.Join(dir, store, "sessions")
			if _, err := os.Stat(root); err != nil {
				t.Fatal(err)
			}
			h := newHarness(t, Options{SessionsRoot: root})
			h.initialize(initOptions{root: t.TempDir(), settings: map[string]any{"sessionId": "target-session", "cwd": "/home/dev/v4-alpha"}})
			waitStatus(t, h, func(st statusResult) bool { return !st.Building && st.SessionsIndexed == len(want) })
			for n, w := range want {
				t.Run(w.Name, func(t *testing.T) {
					var full struct {
						Data  json.RawMessage `json:"data"`
						Stats json.RawMessage `json:"stats"`
					}
					if err := json.Unmarshal(w.Snapshot, &full); err != nil {
						t.Fatal(err)
					}
					for _, c := range []struct {
						budget      int
						data, stats json.RawMessage
					}{{0, full.Data, full.Stats}, {w.SnapshotTruncated.MaxBytes, w.SnapshotTruncated.Data, w.SnapshotTruncated.Stats}} {
						params := map[string]any{"text": "Recall " + w.URI}
						if c.budget > 0 {
							params["maxReferenceBytes"] = c.budget
						}
						var got PrepareResult
						h.mustCall(MethodPrepare, params, &got)
						if got.AdditionalContext == nil || len(got.AdditionalContext.Source.References) != 1 {
							t.Fatalf("budget %d: no context message", c.budget)
						}
						f := got.AdditionalContext.Source.References[0]
						if f.CapturedFormatVersion == nil || *f.CapturedFormatVersion != *w.CapturedFormatVersion ||
							f.CapturedThroughSeq == nil || *f.CapturedThroughSeq != *w.CapturedThroughSeq {
							t.Errorf("budget %d: facts %+v", c.budget, f)
						}
						stats, err := json.Marshal(f.Stats)
						if err != nil {
							t.Fatal(err)
						}
						if !testfixtures.SameJSON(t, stats, c.stats) {
							t.Errorf("budget %d: stats %s, want %s", c.budget, stats, c.stats)
						}
						prompt := got.AdditionalContext.Content[0].Text
						open, closeTag := "<referenced-sessions>\n", "\n</referenced-sessions>"
						i, j := strings.Index(prompt, open), strings.Index(prompt, closeTag)
						var snaps []json.RawMessage
						if i < 0 || j < i || json.Unmarshal([]byte(prompt[i+len(open):j]), &snaps) != nil || len(snaps) != 1 {
							t.Fatalf("budget %d: no one-element snapshot:\n%s", c.budget, prompt)
						}
						if !testfixtures.SameJSON(t, snaps[0], c.data) {
							t.Errorf("budget %d: data\n got %s\nwant %s", c.budget, snaps[0], c.data)
						}
					}

					uri := fmt.Sprintf("file:///v4-%s-%d.md", store, n)
					pos := h.open(uri, "see "+w.Mention[:4]+cursor+w.Mention[4:], EncodingUTF16)
					var hv hoverResult
					h.mustCall("textDocument/hover", map[string]any{"textDocument": map[string]any{"uri": uri}, "position": pos}, &hv)
					var st struct {
						RetainedMessages, OriginalMessages int
					}
					if err := json.Unmarshal(full.Stats, &st); err != nil {
						t.Fatal(err)
					}
					for _, s := range []string{w.DisplayTitle, w.SessionID, "log format v4", recallOf(st.RetainedMessages, st.OriginalMessages),
						"up to event " + strconv.Itoa(int(*w.CapturedThroughSeq))} {
						if !strings.Contains(hv.Contents.Value, s) {
							t.Errorf("hover lacks %q:\n%s", s, hv.Contents.Value)
						}
					}
				})
			}
		})
	}
}
