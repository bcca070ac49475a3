package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dsh-refls/dsh-refls/internal/testfixtures"
	"github.com/dsh-refls/dsh-refls/sessionref/prepare"
)

// TestCLIMatchesRecordedV4Fixtures runs `candidates` and `prepare` on the
// format-v4 stores dsh 0.2 recorded (../shared/fixtures-v4, raw and zstd)
// and compares every field of expected.json: candidates (title, display
// title, mention, cwd, createdAt), the snapshot and stats at the default
// budget and at the small budget listed there, capturedThroughSeq and
// capturedFormatVersion.
func TestCLIMatchesRecordedV4Fixtures(t *testing.T) {
	dir := testfixtures.DirV4(t)
	want := testfixtures.LoadExpected(t, dir)
	for _, store := range []string{"raw", "zstd"} {
		t.Run(store, func(t *testing.T) {
			root := filepath.Join(dir, store, "sessions")
			checkCandidates(t, root, want)
			for _, w := range want {
				t.Run(w.Name, func(t *testing.T) {
					checkPrepared(t, root, w)
					checkPreparedV4(t, root, w)
				})
			}
		})
	}
}

// checkPreparedV4 checks the reference facts and the truncated snapshot.
func checkPreparedV4(t *testing.T, root string, w testfixtures.Expected) {
	for _, budget := range []int{0, w.SnapshotTruncated.MaxBytes} {
		args := []string{"prepare", "--sessions-root", root, "--session", "target-session", "--spill-dir", "", "--text", "Recall " + w.URI}
		if budget > 0 {
			args = append(args, "--max-reference-bytes", fmt.Sprint(budget))
		}
		out, errOut, code := runCLI(t, nil, args...)
		if code != 0 {
			t.Fatalf("prepare at budget %d exited %d: %s", budget, code, errOut)
		}
		var res struct {
			AdditionalContext *prepare.ContextMessage
		}
		if err := json.Unmarshal([]byte(out), &res); err != nil || res.AdditionalContext == nil {
			t.Fatalf("prepare output (%v): %s", err, out)
		}
		facts := res.AdditionalContext.Source.References
		if len(facts) != 1 || facts[0].CapturedFormatVersion == nil || *facts[0].CapturedFormatVersion != *w.CapturedFormatVersion ||
			facts[0].CapturedThroughSeq == nil || *facts[0].CapturedThroughSeq != *w.CapturedThroughSeq {
			t.Errorf("budget %d: facts %+v, want capturedFormatVersion %d capturedThroughSeq %d", budget, facts, *w.CapturedFormatVersion, *w.CapturedThroughSeq)
		}
		if budget == 0 {
			continue
		}
		prompt := res.AdditionalContext.Content[0].Text
		open, closeTag := "<referenced-sessions>\n", "\n</referenced-sessions>"
		i, j := strings.Index(prompt, open), strings.Index(prompt, closeTag)
		var got []json.RawMessage
		if i < 0 || j < i || json.Unmarshal([]byte(prompt[i+len(open):j]), &got) != nil || len(got) != 1 {
			t.Fatalf("budget %d: no one-element snapshot in the prompt:\n%s", budget, prompt)
		}
		if !testfixtures.SameJSON(t, got[0], w.SnapshotTruncated.Data) {
			t.Errorf("budget %d: data\n got %s\nwant %s", budget, got[0], w.SnapshotTruncated.Data)
		}
		stats, err := json.Marshal(facts[0].Stats)
		if err != nil {
			t.Fatal(err)
		}
		if !testfixtures.SameJSON(t, stats, w.SnapshotTruncated.Stats) {
			t.Errorf("budget %d: stats %s, want %s", budget, stats, w.SnapshotTruncated.Stats)
		}
	}
}
