package main

import (
	"strings"
	"testing"
)

func ptr[T any](v T) *T { return &v }

const testPrompt = "## Referenced sessions\n\n<referenced-sessions>\n" +
	`[{"sessionId":"a","label":"A","cwd":null,"capturedThroughSeq":3,"conversation":[{"role":"user","text":"hi"}]}]` +
	"\n</referenced-sessions>"

func preparedResult(prompt string, seq int64) result {
	return result{Content: ptr("see @A"), Prompt: ptr(prompt), Source: &source{Kind: "session-reference", Form: "recall", Version: 1,
		References: []reference{{SessionID: "a", Label: "A", CapturedThroughSeq: ptr(seq), OriginalMessages: 1, RetainedMessages: 1}}}}
}

func categories(fs []finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.category)
	}
	return out
}

func TestComparePrepareAgreesOnEqualResults(t *testing.T) {
	if fs := comparePrepare(preparedResult(testPrompt, 3), preparedResult(testPrompt, 3)); len(fs) != 0 {
		t.Fatalf("equal results must agree, got %q", categories(fs))
	}
}

func TestComparePrepareFindsSeqAndPromptDifferences(t *testing.T) {
	other := strings.Replace(testPrompt, `"capturedThroughSeq":3`, `"capturedThroughSeq":4`, 1)
	got := categories(comparePrepare(preparedResult(testPrompt, 3), preparedResult(other, 4)))
	want := []string{"stats: capturedThroughSeq", "snapshot: capturedThroughSeq"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("got %q, want %q", got, want)
	}
	prefix := strings.Replace(testPrompt, "Referenced", "Recalled", 1)
	if got := categories(comparePrepare(preparedResult(testPrompt, 3), preparedResult(prefix, 3))); len(got) != 1 || got[0] != "prompt bytes" {
		t.Fatalf("a prefix difference must be found as prompt bytes, got %q", got)
	}
}

func TestComparePrepareOmissionNoticesAreExpected(t *testing.T) {
	withNotes := preparedResult(testPrompt+omissionsHeading+"The previews above …", 3)
	fs := comparePrepare(preparedResult(testPrompt, 3), withNotes)
	if len(fs) != 1 || !strings.HasPrefix(fs[0].category, expectedPrefix) {
		t.Fatalf("dsh 0.2's omission notices must count as expected, got %q", categories(fs))
	}
}

func TestCompareErrorsClassifiesCodesAndTolerances(t *testing.T) {
	readFailed := result{Error: &failure{Code: "SESSION_REFERENCE_READ_FAILED", Message: `session "" not found`}}
	invalid := result{Error: &failure{Code: "SESSION_REFERENCE_INVALID_REFERENCE", Message: "reference 0 has no sessionId"}}
	got := categories(comparePrepare(readFailed, invalid))
	if len(got) != 1 || got[0] != "error code: dsh READ_FAILED, dsh-refls INVALID_REFERENCE [session not found]" {
		t.Fatalf("got %q", got)
	}
	if fs := comparePrepare(readFailed, readFailed); len(fs) != 0 {
		t.Fatalf("equal codes agree whatever the messages, got %q", categories(fs))
	}
	refused := result{Error: &failure{Code: "SESSION_REFERENCE_READ_FAILED", Message: `session event "user/message" is surface-eligible and requires a surfaceOp marker`}}
	fs := comparePrepare(refused, preparedResult(testPrompt, 3))
	if len(fs) != 1 || !strings.HasPrefix(fs[0].category, expectedPrefix+"tolerance: ") {
		t.Fatalf("a documented tolerance must count as expected, got %q", categories(fs))
	}
}

func TestCompareCandidates(t *testing.T) {
	a := candidate{SessionID: "a", Label: "A", CreatedAt: 2}
	b := candidate{SessionID: "b", Label: "B", CreatedAt: 1}
	empty := candidateCase{Query: "", Limit: 50}
	if fs := compareCandidates(empty, result{Candidates: []candidate{a, b}}, result{Candidates: []candidate{a, b}}, nil, twinDiffers); len(fs) != 0 {
		t.Fatalf("equal lists must agree, got %q", categories(fs))
	}
	got := categories(compareCandidates(empty, result{Candidates: []candidate{a, b}}, result{Candidates: []candidate{b, a}}, nil, twinDiffers))
	if len(got) != 1 || got[0] != "candidates: order (empty query)" {
		t.Fatalf("got %q", got)
	}
	ranked := categories(compareCandidates(candidateCase{Query: "x", Limit: 50}, result{Candidates: []candidate{a, b}}, result{Candidates: []candidate{b, a}}, nil, twinDiffers))
	if len(ranked) != 1 || !strings.HasPrefix(ranked[0], expectedPrefix) {
		t.Fatalf("a reordered non-empty query is dsh-refls' ranking, got %q", ranked)
	}
	relabelled := b
	relabelled.Label = "title"
	got = categories(compareCandidates(empty, result{Candidates: []candidate{a, b}}, result{Candidates: []candidate{a, relabelled}},
		map[string]string{"a": "ok", "b": "corrupt session log: seq gap in committed region at line 3"}, twinDiffers))
	if len(got) != 1 || got[0] != expectedPrefix+refusedLogListed+", label [seq gap or duplicate]" {
		t.Fatalf("got %q", got)
	}
}

func TestCompareCandidatesUnderTheLimit(t *testing.T) {
	a := candidate{SessionID: "a", Label: "A"}
	b := candidate{SessionID: "b", Label: "B"}
	capped := candidateCase{Query: "x", Limit: 1}
	dsh, refls := result{Candidates: []candidate{a}}, result{Candidates: []candidate{b}}
	if got := categories(compareCandidates(capped, dsh, refls, nil, twinSame)); len(got) != 1 || !strings.HasPrefix(got[0], expectedPrefix) {
		t.Fatalf("with equal uncapped lists the choice under the limit is ranking, got %q", got)
	}
	if got := categories(compareCandidates(capped, dsh, refls, nil, twinDiffers)); len(got) != 1 || strings.HasPrefix(got[0], expectedPrefix) {
		t.Fatalf("with different uncapped lists the difference is real, got %q", got)
	}
}

func TestCompareCandidatesOfLogsDshRefuses(t *testing.T) {
	a := candidate{SessionID: "a", Label: "A"}
	b := candidate{SessionID: "b", Label: "title"}
	reads := map[string]string{"a": "ok", "b": "corrupt session log: unparsable committed event at line 4"}
	got := categories(compareCandidates(candidateCase{Query: "tit", Limit: 50}, result{Candidates: []candidate{a}}, result{Candidates: []candidate{a, b}}, reads, twinDiffers))
	if len(got) != 1 || got[0] != expectedPrefix+refusedLogListed+", candidate match [unparsable line before a later turn/end]" {
		t.Fatalf("got %q", got)
	}
	reads["b"] = "ok"
	got = categories(compareCandidates(candidateCase{Query: "tit", Limit: 50}, result{Candidates: []candidate{a}}, result{Candidates: []candidate{a, b}}, reads, twinDiffers))
	if len(got) != 1 || got[0] != "candidates: different sessions" {
		t.Fatalf("a readable log that matches differently is a plain difference, got %q", got)
	}
}

func TestCompareCandidatesDisplayTitleMatch(t *testing.T) {
	a := candidate{SessionID: "a", Label: "A"}
	child := candidate{SessionID: "c", Label: "Reply with exactly", DisplayTitle: "Reply with CHILD_OK"}
	got := categories(compareCandidates(candidateCase{Query: "hi", Limit: 50}, result{Candidates: []candidate{}}, result{Candidates: []candidate{child}}, nil, twinDiffers))
	if len(got) != 1 || !strings.HasPrefix(got[0], expectedPrefix) {
		t.Fatalf("a display-title-only match is dsh-refls' extension, got %q", got)
	}
	got = categories(compareCandidates(candidateCase{Query: "a", Limit: 50}, result{Candidates: []candidate{}}, result{Candidates: []candidate{a}}, nil, twinDiffers))
	if len(got) != 1 || got[0] != "candidates: different sessions" {
		t.Fatalf("an id match dsh lacks is a real difference, got %q", got)
	}
}
