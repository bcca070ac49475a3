package main

import (
	"encoding/json"
	"errors"
	"io"
	"testing"
)

func cand(id, label, display string) candidate {
	cwd := "/w"
	return candidate{SessionID: id, Label: label, DisplayTitle: display, Cwd: &cwd, CreatedAt: 1, Mention: mentionOf(display, id)}
}

// dshCand is a candidate as dsh 0.1.0-rc.8 answers it: no display title,
// the mention labelled with the title.
func dshCand(id, label string) candidate {
	cwd := "/w"
	return candidate{SessionID: id, Label: label, Cwd: &cwd, CreatedAt: 1, Mention: mentionOf(label, id)}
}

// TestCandidatesOnlyDecidedDifferencesPass: what SPEC decides on purpose is
// named and passes; anything else is a difference.
func TestCandidatesOnlyDecidedDifferencesPass(t *testing.T) {
	dsh := []candidate{dshCand("a", "Alpha notes"), dshCand("b", "Beta"), dshCand("c", "Child title")}
	for _, tc := range []struct {
		name                 string
		query                string
		refls                []candidate
		onPurpose, different int
	}{
		{"same", "", []candidate{cand("a", "Alpha notes", "Alpha notes"), cand("b", "Beta", "Beta"), cand("c", "Child title", "Child title")}, 0, 0},
		{"reordered, a non-empty query", "a", []candidate{cand("b", "Beta", "Beta"), cand("a", "Alpha notes", "Alpha notes"), cand("c", "Child title", "Child title")}, 1, 0},
		{"reordered, the empty query", "", []candidate{cand("b", "Beta", "Beta"), cand("a", "Alpha notes", "Alpha notes"), cand("c", "Child title", "Child title")}, 0, 1},
		{"a subagent child's display title", "", []candidate{cand("a", "Alpha notes", "Alpha notes"), cand("b", "Beta", "Beta"), cand("c", "Child title", "Check child")}, 1, 0},
		{"a mention labelled otherwise", "", []candidate{cand("a", "Alpha notes", "Alpha notes"), cand("b", "Beta", "Beta"), {SessionID: "c", Label: "Child title", DisplayTitle: "Child title", Cwd: dsh[2].Cwd, CreatedAt: 1, Mention: mentionOf("x", "c")}}, 0, 1},
		{"another label", "", []candidate{cand("a", "Alpha", "Alpha"), cand("b", "Beta", "Beta"), cand("c", "Child title", "Child title")}, 0, 2}, // label and mention
		{"a missing id", "a", []candidate{cand("a", "Alpha notes", "Alpha notes"), cand("b", "Beta", "Beta")}, 0, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tl := &tally{out: io.Discard}
			compareCandidates(tl, tc.query, dsh, tc.refls)
			if tl.onPurpose != tc.onPurpose || tl.differ != tc.different {
				t.Errorf("on purpose %d, different %d; want %d, %d", tl.onPurpose, tl.differ, tc.onPurpose, tc.different)
			}
		})
	}
}

// TestPreparedByteForByte: content, context text and reference records must
// be identical; errors must carry the same code.
func TestPreparedByteForByte(t *testing.T) {
	d := prepared{Text: "see @[x](dsh-session:InMi)", Content: json.RawMessage(`[{"type":"text","text":"see @x"}]`)}
	d.AdditionalContext = &struct {
		Source struct {
			References json.RawMessage `json:"references"`
		} `json:"source"`
		Text string `json:"text"`
	}{Text: "## Referenced sessions\n"}
	d.AdditionalContext.Source.References = json.RawMessage(`[{"sessionId":"s","label":"x"}]`)
	same := `{"content":"see @x","references":[],"additionalContext":{"source":{"references":[{"sessionId":"s","label":"x"}]},"content":[{"type":"text","text":"## Referenced sessions\n"}]}}`
	other := `{"content":"see @x","references":[],"additionalContext":{"source":{"references":[{"sessionId":"s","label":"x"}]},"content":[{"type":"text","text":"## Referenced sessions \n"}]}}`
	for _, tc := range []struct {
		name   string
		d      prepared
		stdout string
		stderr string
		err    error
		differ int
	}{
		{"identical", d, same, "", nil, 0},
		{"one byte off in the context", d, other, "", nil, 1},
		{"the same error code", prepared{Error: "SESSION_REFERENCE_TOO_MANY a message may reference at most 3 sessions"}, "", `{"code":"SESSION_REFERENCE_TOO_MANY","message":"4 distinct"}`, errors.New("exit status 2"), 0},
		{"another error code", prepared{Error: "SESSION_REFERENCE_TOO_MANY a message may reference at most 3 sessions"}, "", `{"code":"SESSION_REFERENCE_READ_FAILED"}`, errors.New("exit status 2"), 1},
		{"dsh fails, dsh-refls does not", prepared{Error: "SESSION_REFERENCE_READ_FAILED x"}, same, "", nil, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tl := &tally{out: io.Discard}
			comparePrepared(tl, "prepare", tc.d, []byte(tc.stdout), tc.stderr, tc.err)
			if tl.differ != tc.differ {
				t.Errorf("%d different, want %d", tl.differ, tc.differ)
			}
		})
	}
}
