package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// expectedPrefix marks a difference that is not a disagreement: dsh-refls
// follows dsh 0.2's wording or its own documented ranking there.
const expectedPrefix = "expected: "

// omissionsHeading starts the omission notices dsh 0.2 appends (SPEC
// §2.3.8); dsh 0.1.1 does not write them.
const omissionsHeading = "\n\n## Reference omissions\n\n"

// tolerances are the refusals of dsh that dsh-refls does not copy on
// purpose (issue 16 item 6, docs/reliability.md): a difference that comes
// only from one of them is expected. Each is matched on dsh's message.
var tolerances = []struct{ pattern, name string }{
	{"requires a surfaceOp marker", "surface event without surfaceOp (legacy steering/message)"},
	{"provider", "assistant message without provider"},
	{"unknown session event type", "unknown event type in v0"},
}

// refusedLogListed is the documented tolerance (docs/reliability.md) for a
// log dsh refuses as corrupt: dsh-refls lists it under its latest title and
// finds it by that title, where dsh shows and matches its id only. Prepare
// fails on both sides, so prepare cases are compared as usual.
const refusedLogListed = "tolerance: a log dsh refuses keeps its title in candidates (docs/reliability.md)"

// tolerance names the deliberate tolerance behind a dsh failure message.
func tolerance(message string) (string, bool) {
	for _, t := range tolerances {
		if strings.Contains(message, t.pattern) {
			return t.name, true
		}
	}
	return "", false
}

// dshReasons classify why dsh refused a read, from its message.
var dshReasons = []struct{ pattern, name string }{
	{"seq gap in committed region", "seq gap or duplicate"},
	{"unparsable committed event", "unparsable line before a later turn/end"},
	{"complete frame contains a torn JSONL record", "zstd: bad line or seq gap inside a complete frame"},
	{"not found", "session not found"},
}

// reason names the class of a dsh failure message, or "" when unknown.
func reason(message string) string {
	for _, r := range dshReasons {
		if strings.Contains(message, r.pattern) {
			return " [" + r.name + "]"
		}
	}
	return ""
}

// twin is how the uncapped twin of a capped candidate case compared.
type twin int

// The outcomes of an uncapped twin.
const (
	twinDiffers twin = iota
	twinSame
	twinUnreadable
)

// finding is one difference in one case.
type finding struct {
	category string
	detail   string
}

// compareCandidates compares the results of one candidate case.
//
// tw says how the same query without a binding limit compared; only when
// it found the same sessions on both sides is a difference under the limit
// put down to dsh-refls' match-tier ranking.
func compareCandidates(c candidateCase, dsh, refls result, reads map[string]string, tw twin) []finding {
	if f, done := compareErrors(dsh, refls); done {
		return f
	}
	ids := func(cs []candidate) []string {
		out := make([]string, len(cs))
		for i, k := range cs {
			out[i] = k.SessionID
		}
		return out
	}
	di, ri := ids(dsh.Candidates), ids(refls.Candidates)
	var out []finding
	capped := len(di) == c.Limit || len(ri) == c.Limit
	if !sameSet(di, ri) {
		cat := "candidates: different sessions"
		if onlyDisplayTitleMatches(c.Query, dsh.Candidates, refls.Candidates) {
			cat = expectedPrefix + "candidates: dsh-refls also matches the display title (SPEC §2.2; dsh 0.1.1 has none)"
		} else if why, ok := allUnreadable(di, ri, reads); ok {
			cat = expectedPrefix + refusedLogListed + ", candidate match" + reason(why)
			if name, ok := tolerance(why); ok {
				cat = expectedPrefix + "tolerance: " + name + " (candidate match)"
			}
		}
		if c.Query != "" && capped && !strings.HasPrefix(cat, expectedPrefix) {
			switch tw {
			case twinSame:
				cat = expectedPrefix + "candidates: match-tier ranking chose other sessions under the limit"
			case twinUnreadable:
				cat = expectedPrefix + refusedLogListed + ", under the limit"
			default:
				cat = "candidates: different sessions under the limit (the uncapped lists differ too)"
			}
		}
		out = append(out, finding{cat, fmt.Sprintf("query %q limit %d: dsh %q, dsh-refls %q", c.Query, c.Limit, di, ri)})
	} else if !slices.Equal(di, ri) {
		cat := "candidates: order (empty query)"
		if c.Query != "" {
			cat = expectedPrefix + "candidates: match-tier ranking reorders"
		}
		out = append(out, finding{cat, fmt.Sprintf("query %q: dsh %q, dsh-refls %q", c.Query, di, ri)})
	}
	byID := map[string]candidate{}
	for _, k := range refls.Candidates {
		byID[k.SessionID] = k
	}
	for _, d := range dsh.Candidates {
		r, ok := byID[d.SessionID]
		if !ok {
			continue
		}
		if d.Label != r.Label {
			cat := "candidates: label"
			if why := reads[d.SessionID]; why != "ok" {
				cat = expectedPrefix + refusedLogListed + ", label" + reason(why)
				if name, ok := tolerance(why); ok {
					cat = expectedPrefix + "tolerance: " + name + " (candidate label)"
				}
			}
			out = append(out, finding{cat, fmt.Sprintf("%q: dsh %q, dsh-refls %q; dsh read: %s", d.SessionID, d.Label, r.Label, reads[d.SessionID])})
		}
		if !equalPtr(d.Cwd, r.Cwd) || d.CreatedAt != r.CreatedAt {
			out = append(out, finding{"candidates: cwd or createdAt", fmt.Sprintf("%q", d.SessionID)})
		}
	}
	return out
}

// onlyDisplayTitleMatches reports whether dsh-refls' list is dsh's plus
// sessions whose display title matches the query where their id, cwd and
// label do not.
func onlyDisplayTitleMatches(query string, dsh, refls []candidate) bool {
	if query == "" || len(refls) <= len(dsh) {
		return false
	}
	in := map[string]bool{}
	for _, d := range dsh {
		in[d.SessionID] = true
	}
	q := strings.ToLower(query)
	seen := 0
	for _, r := range refls {
		if in[r.SessionID] {
			seen++
			continue
		}
		cwd := ""
		if r.Cwd != nil {
			cwd = *r.Cwd
		}
		plain := strings.Contains(strings.ToLower(r.SessionID), q) || strings.Contains(strings.ToLower(cwd), q) || strings.Contains(strings.ToLower(r.Label), q)
		if plain || !strings.Contains(strings.ToLower(r.DisplayTitle), q) {
			return false
		}
	}
	return seen == len(dsh)
}

// allUnreadable reports whether every session in exactly one of the lists
// is one whose log dsh refuses, with the reason of the first.
func allUnreadable(a, b []string, reads map[string]string) (string, bool) {
	in := func(xs []string, x string) bool { return slices.Contains(xs, x) }
	why := ""
	for _, pair := range [][2][]string{{a, b}, {b, a}} {
		for _, id := range pair[0] {
			if in(pair[1], id) {
				continue
			}
			r, ok := reads[id]
			if !ok || r == "ok" {
				return "", false
			}
			if why == "" {
				why = r
			}
		}
	}
	return why, why != ""
}

// compareErrors compares the failure sides of two results; done says the
// comparison is complete (at least one side failed).
func compareErrors(dsh, refls result) ([]finding, bool) {
	switch {
	case dsh.Error != nil && refls.Error != nil:
		if dsh.Error.Code == refls.Error.Code {
			return nil, true
		}
		if name, ok := tolerance(dsh.Error.Message); ok {
			return []finding{{expectedPrefix + "tolerance: " + name + " (dsh refuses the log, dsh-refls reads it and fails later)", dsh.Error.Message}}, true
		}
		return []finding{{fmt.Sprintf("error code: dsh %s, dsh-refls %s", short(dsh.Error.Code), short(refls.Error.Code)) + reason(dsh.Error.Message),
			fmt.Sprintf("dsh: %s | dsh-refls: %s", dsh.Error.Message, refls.Error.Message)}}, true
	case dsh.Error != nil:
		if name, ok := tolerance(dsh.Error.Message); ok {
			return []finding{{expectedPrefix + "tolerance: " + name, dsh.Error.Message}}, true
		}
		return []finding{{fmt.Sprintf("dsh fails %s, dsh-refls succeeds", short(dsh.Error.Code)) + reason(dsh.Error.Message), dsh.Error.Message}}, true
	case refls.Error != nil:
		return []finding{{fmt.Sprintf("dsh succeeds, dsh-refls fails %s", short(refls.Error.Code)), refls.Error.Message}}, true
	}
	return nil, false
}

// short drops the common prefix of the error codes.
func short(code string) string { return strings.TrimPrefix(code, "SESSION_REFERENCE_") }

// dataObject is one element of the prompt's JSON array.
type dataObject struct {
	SessionID          string  `json:"sessionId"`
	Label              string  `json:"label"`
	Cwd                *string `json:"cwd"`
	CapturedThroughSeq *int64  `json:"capturedThroughSeq"`
	Conversation       []struct {
		Role string `json:"role"`
		Text string `json:"text"`
	} `json:"conversation"`
}

// promptData parses the data objects out of a prompt.
func promptData(prompt string) ([]dataObject, error) {
	const open, closing = "<referenced-sessions>\n", "\n</referenced-sessions>"
	a := strings.Index(prompt, open)
	b := strings.LastIndex(prompt, closing)
	if a < 0 || b < a {
		return nil, fmt.Errorf("no referenced-sessions element")
	}
	var out []dataObject
	err := json.Unmarshal([]byte(prompt[a+len(open):b]), &out)
	return out, err
}

// comparePrepare compares the results of one prepare case.
func comparePrepare(dsh, refls result) []finding {
	if f, done := compareErrors(dsh, refls); done {
		return f
	}
	var out []finding
	if !equalPtr(dsh.Content, refls.Content) {
		out = append(out, finding{"content", fmt.Sprintf("dsh %q, dsh-refls %q", deref(dsh.Content), deref(refls.Content))})
	}
	if (dsh.Prompt == nil) != (refls.Prompt == nil) {
		return append(out, finding{"context message present on one side only", ""})
	}
	if dsh.Prompt == nil {
		return out
	}
	out = append(out, compareSources(dsh.Source, refls.Source)...)
	rPrompt, omissions, _ := strings.Cut(*refls.Prompt, omissionsHeading)
	dd, derr := promptData(*dsh.Prompt)
	rd, rerr := promptData(rPrompt)
	if derr != nil || rerr != nil {
		return append(out, finding{"prompt unparsable", fmt.Sprintf("dsh %v, dsh-refls %v", derr, rerr)})
	}
	for i := range min(len(dd), len(rd)) {
		d, r := dd[i], rd[i]
		if d.Label != r.Label {
			out = append(out, finding{"snapshot: label", fmt.Sprintf("%q: dsh %q, dsh-refls %q", d.SessionID, d.Label, r.Label)})
		}
		if !equalPtr(d.CapturedThroughSeq, r.CapturedThroughSeq) {
			out = append(out, finding{"snapshot: capturedThroughSeq", fmt.Sprintf("%q: dsh %s, dsh-refls %s", d.SessionID, seqString(d.CapturedThroughSeq), seqString(r.CapturedThroughSeq))})
		}
		if len(d.Conversation) != len(r.Conversation) {
			out = append(out, finding{"snapshot: message count", fmt.Sprintf("%q: dsh %d, dsh-refls %d", d.SessionID, len(d.Conversation), len(r.Conversation))})
			continue
		}
		for j := range d.Conversation {
			if d.Conversation[j] != r.Conversation[j] {
				out = append(out, finding{"snapshot: message text" + textFlavour(d.Conversation[j].Text, r.Conversation[j].Text),
					fmt.Sprintf("%q #%d: dsh %q, dsh-refls %q", d.SessionID, j, clip(d.Conversation[j].Text), clip(r.Conversation[j].Text))})
				break
			}
		}
	}
	if len(out) == 0 && *dsh.Prompt != rPrompt {
		out = append(out, finding{"prompt bytes", firstDiff(*dsh.Prompt, rPrompt)})
	}
	if len(out) == 0 && omissions != "" {
		out = append(out, finding{expectedPrefix + "omission notices (dsh 0.2 wording; dsh 0.1.1 writes none)", ""})
	}
	return out
}

// compareSources compares the references of the context messages.
func compareSources(d, r *source) []finding {
	if d == nil || r == nil {
		return []finding{{"source missing", ""}}
	}
	if d.Kind != r.Kind || d.Form != r.Form || d.Version != r.Version || len(d.References) != len(r.References) {
		return []finding{{"source: kind, form, version or reference count", fmt.Sprintf("dsh %d refs, dsh-refls %d", len(d.References), len(r.References))}}
	}
	var out []finding
	for i := range d.References {
		a, b := d.References[i], r.References[i]
		field := func(name string, x, y any) {
			if fmt.Sprint(x) != fmt.Sprint(y) {
				out = append(out, finding{"stats: " + name, fmt.Sprintf("%q: dsh %v, dsh-refls %v", a.SessionID, x, y)})
			}
		}
		field("sessionId", a.SessionID, b.SessionID)
		field("label", a.Label, b.Label)
		field("capturedThroughSeq", seqString(a.CapturedThroughSeq), seqString(b.CapturedThroughSeq))
		field("compacted", a.Compacted, b.Compacted)
		field("originalMessages", a.OriginalMessages, b.OriginalMessages)
		field("retainedMessages", a.RetainedMessages, b.RetainedMessages)
		field("omittedMessages", a.OmittedMessages, b.OmittedMessages)
		field("omittedBytes", a.OmittedBytes, b.OmittedBytes)
		field("truncated", a.Truncated, b.Truncated)
		field("inputIndex", a.InputIndex, b.InputIndex)
		if b.CapturedFormatVersion != nil {
			out = append(out, finding{"stats: capturedFormatVersion on a v0 log", a.SessionID})
		}
	}
	return out
}

// textFlavour hints at why two texts differ.
func textFlavour(d, r string) string {
	switch {
	case strings.Contains(d, "\ufffd") || strings.Contains(r, "\ufffd"):
		return " (replacement characters)"
	case strings.Contains(d, "[… omitted") || strings.Contains(r, "[… omitted"):
		return " (cut)"
	}
	return ""
}

func sameSet(a, b []string) bool {
	x, y := slices.Clone(a), slices.Clone(b)
	slices.Sort(x)
	slices.Sort(y)
	return slices.Equal(x, y)
}

func equalPtr[T comparable](a, b *T) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

func deref(s *string) string {
	if s == nil {
		return "<none>"
	}
	return *s
}

func seqString(p *int64) string {
	if p == nil {
		return "null"
	}
	return fmt.Sprint(*p)
}

// clip shortens a text for a report line.
func clip(s string) string {
	if r := []rune(s); len(r) > 80 {
		return string(r[:40]) + "…" + string(r[len(r)-40:])
	}
	return s
}

// firstDiff describes where two strings first differ.
func firstDiff(a, b string) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	lo := max(0, i-30)
	return fmt.Sprintf("at byte %d: dsh %q, dsh-refls %q", i, a[lo:min(len(a), i+30)], b[lo:min(len(b), i+30)])
}
