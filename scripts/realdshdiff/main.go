// Command realdshdiff compares dsh-refls with dsh itself on stores that the
// published dsh CLI wrote (../shared/realdsh: dsh 0.1.0-rc.8 driven offline
// against a mock provider). The probe sessions of those runs recorded what
// dsh's own session-reference service answered (listCandidates, prepare);
// realdshdiff asks dsh-refls' CLI the same questions on the same store and
// compares field by field:
//
//   - every prepare byte for byte: the content, the context message's text
//     and its reference records (or the same error code);
//   - candidates exactly, except where SPEC decides on purpose, each such
//     difference named: the order of a non-empty query's answer (dsh-refls
//     ranks better matches first, SPEC §4.2; the set stays dsh's), and the
//     mention label of a subagent child, which dsh-refls takes from its
//     display title (SPEC §2.2) and dsh 0.1.0-rc.8, which predates display
//     titles, from its title.
//
// It exits 1 when anything else differs.
//
//	go run ./scripts/realdshdiff --bin dsh-refls --home OUT/home-zstd --report OUT/logs/probe.report.json
package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// report is what the realdsh driver wrote: the probe sessions with dsh's
// answers.
type report struct {
	Sessions []probe `json:"sessions"`
}

type probe struct {
	Key        string                     `json:"key"`
	Probe      bool                       `json:"probe"`
	Self       string                     `json:"self"`
	Cwd        string                     `json:"cwd"`
	Candidates map[string]json.RawMessage `json:"candidates"`
	Prepared   []prepared                 `json:"prepared"`
}

// candidate is one entry of a candidates answer, dsh's or dsh-refls'.
type candidate struct {
	SessionID    string  `json:"sessionId"`
	Label        string  `json:"label"`
	DisplayTitle string  `json:"displayTitle"`
	Cwd          *string `json:"cwd"`
	CreatedAt    int64   `json:"createdAt"`
	Mention      string  `json:"mention"`
}

// prepared is dsh's answer to one prepare.
type prepared struct {
	Text              string          `json:"text"`
	Content           json.RawMessage `json:"content"`
	References        json.RawMessage `json:"references"`
	AdditionalContext *struct {
		Source struct {
			References json.RawMessage `json:"references"`
		} `json:"source"`
		Text string `json:"text"`
	} `json:"additionalContext"`
	Error string `json:"error"`
}

// reflsPrepared is dsh-refls' answer to one prepare.
type reflsPrepared struct {
	Content           json.RawMessage `json:"content"`
	References        json.RawMessage `json:"references"`
	AdditionalContext *struct {
		Source struct {
			References json.RawMessage `json:"references"`
		} `json:"source"`
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	} `json:"additionalContext"`
}

// tally counts the checks by outcome.
type tally struct {
	same, onPurpose, differ int
	out                     io.Writer
}

func (t *tally) sameAs(what string) {
	t.same++
	fmt.Fprintf(t.out, "  same        %s\n", what)
}

func (t *tally) decided(what, why string) {
	t.onPurpose++
	fmt.Fprintf(t.out, "  ON PURPOSE  %s: %s\n", what, why)
}

func (t *tally) differs(what string, dsh, refls any) {
	t.differ++
	fmt.Fprintf(t.out, "  DIFFERENT   %s\n      dsh:       %s\n      dsh-refls: %s\n", what, clip(dsh), clip(refls))
}

func clip(v any) string {
	b, _ := json.Marshal(v)
	if len(b) > 800 {
		return string(b[:800]) + "…"
	}
	return string(b)
}

func main() {
	bin := flag.String("bin", "", "the dsh-refls binary")
	home := flag.String("home", "", "the DSH_HOME the store was written under (its sessions/ is read)")
	reportPath := flag.String("report", "", "the driver's report holding dsh's answers")
	flag.Parse()
	if *bin == "" || *home == "" || *reportPath == "" {
		fmt.Fprintln(os.Stderr, "usage: realdshdiff --bin DSH_REFLS --home DSH_HOME --report REPORT")
		os.Exit(2)
	}
	t, err := run(*bin, *home, *reportPath, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "realdshdiff:", err)
		os.Exit(2)
	}
	fmt.Printf("%d same, %d different on purpose (named above), %d different\n", t.same, t.onPurpose, t.differ)
	if t.differ > 0 {
		os.Exit(1)
	}
}

func run(bin, home, reportPath string, out io.Writer) (*tally, error) {
	data, err := os.ReadFile(reportPath)
	if err != nil {
		return nil, err
	}
	var rep report
	if err := json.Unmarshal(data, &rep); err != nil {
		return nil, fmt.Errorf("reading %s: %w", reportPath, err)
	}
	root := filepath.Join(home, "sessions")
	spill, err := os.MkdirTemp("", "realdshdiff-spill-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(spill)
	t := &tally{out: out}
	probes := 0
	for _, p := range rep.Sessions {
		if !p.Probe {
			continue
		}
		probes++
		fmt.Fprintf(out, "probe %s: target %s, cwd %q\n", p.Key, p.Self, p.Cwd)
		queries := make([]string, 0, len(p.Candidates))
		for q := range p.Candidates {
			queries = append(queries, q)
		}
		slices.Sort(queries)
		for _, q := range queries {
			stdout, stderr, err := cli(bin, "candidates", "--sessions-root", root, "--query", q, "--session", p.Self, "--cwd", p.Cwd, "--limit", "50")
			var dshList, reflsList []candidate
			if json.Unmarshal(p.Candidates[q], &dshList) != nil {
				t.differs(fmt.Sprintf("candidates %q", q), json.RawMessage(p.Candidates[q]), "dsh answered no list")
				continue
			}
			if err != nil || json.Unmarshal(stdout, &reflsList) != nil {
				t.differs(fmt.Sprintf("candidates %q", q), len(dshList), fmt.Sprintf("%v: %s", err, stderr))
				continue
			}
			compareCandidates(t, q, dshList, reflsList)
		}
		for i, pp := range p.Prepared {
			stdout, stderr, err := cli(bin, "prepare", "--sessions-root", root, "--session", p.Self, "--text", pp.Text, "--spill-dir", spill)
			comparePrepared(t, fmt.Sprintf("prepare #%d %q", i, short(pp.Text)), pp, stdout, stderr, err)
		}
	}
	if probes == 0 {
		return nil, fmt.Errorf("%s holds no probe session: the realdsh run did not get that far", reportPath)
	}
	return t, nil
}

func short(s string) string {
	if r := []rune(s); len(r) > 60 {
		return string(r[:60]) + "…"
	}
	return s
}

// cli runs one dsh-refls command with a deadline.
func cli(bin string, args ...string) ([]byte, string, error) {
	cmd := exec.Command(bin, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		return nil, "", err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return stdout.Bytes(), stderr.String(), err
	case <-time.After(60 * time.Second):
		_ = cmd.Process.Kill()
		<-done
		return nil, "", errors.New("dsh-refls " + args[0] + " did not answer in 60 s")
	}
}

// mentionOf is the canonical mention of SPEC §2.1 for an id and label.
func mentionOf(label, id string) string {
	var quoted bytes.Buffer
	enc := json.NewEncoder(&quoted)
	enc.SetEscapeHTML(false) // JSON.stringify leaves <, > and & as they are
	_ = enc.Encode(id)
	return "@[" + strings.NewReplacer(`\`, `\\`, `]`, `\]`).Replace(label) + "](dsh-session:" + base64.RawURLEncoding.EncodeToString(bytes.TrimSuffix(quoted.Bytes(), []byte("\n"))) + ")"
}

// compareCandidates compares one candidates answer.
func compareCandidates(t *tally, q string, dsh, refls []candidate) {
	what := fmt.Sprintf("candidates %q", q)
	ids := func(cs []candidate) []string {
		out := make([]string, len(cs))
		for i, c := range cs {
			out[i] = c.SessionID
		}
		return out
	}
	dshIDs, reflsIDs := ids(dsh), ids(refls)
	switch {
	case slices.Equal(dshIDs, reflsIDs):
		t.sameAs(fmt.Sprintf("%s: %d ids in dsh's order", what, len(dshIDs)))
	case q != "" && sameSet(dshIDs, reflsIDs):
		t.decided(fmt.Sprintf("%s: the same %d ids, in another order", what, len(dshIDs)), "dsh-refls ranks better matches of a non-empty query first (SPEC §4.2)")
	default:
		t.differs(what+": ids", dshIDs, reflsIDs)
		return
	}
	byID := map[string]candidate{}
	for _, c := range refls {
		byID[c.SessionID] = c
	}
	for _, d := range dsh {
		r := byID[d.SessionID]
		field := func(name string, a, b any) {
			if clip(a) == clip(b) {
				return
			}
			t.differs(fmt.Sprintf("%s: %s of %s", what, name, d.SessionID), a, b)
		}
		field("label", d.Label, r.Label)
		field("cwd", d.Cwd, r.Cwd)
		field("createdAt", d.CreatedAt, r.CreatedAt)
		switch {
		case d.Mention == r.Mention:
		case r.DisplayTitle != r.Label && r.Mention == mentionOf(r.DisplayTitle, r.SessionID) && d.Mention == mentionOf(d.Label, d.SessionID):
			t.decided(fmt.Sprintf("%s: mention of %s", what, d.SessionID),
				fmt.Sprintf("labelled with its display title %q, not its title %q: a subagent child (SPEC §2.2; dsh 0.1.0-rc.8 predates display titles)", r.DisplayTitle, r.Label))
		default:
			t.differs(fmt.Sprintf("%s: mention of %s", what, d.SessionID), d.Mention, r.Mention)
		}
	}
	t.sameAs(what + ": labels, cwd, createdAt of every id")
}

func sameSet(a, b []string) bool {
	x, y := slices.Clone(a), slices.Clone(b)
	slices.Sort(x)
	slices.Sort(y)
	return slices.Equal(x, y)
}

// comparePrepared compares one prepare: dsh's answer (or error) with
// dsh-refls' output.
func comparePrepared(t *tally, what string, d prepared, stdout []byte, stderr string, err error) {
	if d.Error != "" || err != nil {
		var reflsErr struct {
			Code string `json:"code"`
		}
		_ = json.Unmarshal([]byte(strings.TrimSpace(stderr)), &reflsErr)
		dshCode, _, _ := strings.Cut(d.Error, " ")
		switch {
		case d.Error == "":
			t.differs(what, "ok", strings.TrimSpace(stderr))
		case err == nil:
			t.differs(what, d.Error, "ok")
		case dshCode == reflsErr.Code:
			t.sameAs(fmt.Sprintf("%s: both fail with %s", what, dshCode))
		default:
			t.differs(what+": error", d.Error, strings.TrimSpace(stderr))
		}
		return
	}
	var r reflsPrepared
	if e := json.Unmarshal(stdout, &r); e != nil {
		t.differs(what, "an answer", string(stdout))
		return
	}
	// dsh answers content blocks; the CLI, given --text, the string.
	dshText := textOfBlocks(d.Content)
	var reflsText string
	if json.Unmarshal(r.Content, &reflsText) != nil {
		reflsText = textOfBlocks(r.Content)
	}
	if dshText != reflsText {
		t.differs(what+": content", dshText, reflsText)
	} else {
		t.sameAs(what + ": content")
	}
	var dshCtx, reflsCtx string
	var dshRefs, reflsRefs json.RawMessage
	if d.AdditionalContext != nil {
		dshCtx, dshRefs = d.AdditionalContext.Text, d.AdditionalContext.Source.References
	}
	if r.AdditionalContext != nil && len(r.AdditionalContext.Content) > 0 {
		reflsCtx, reflsRefs = r.AdditionalContext.Content[0].Text, r.AdditionalContext.Source.References
	}
	if dshCtx != reflsCtx {
		at := firstDifference(dshCtx, reflsCtx)
		t.differs(fmt.Sprintf("%s: context text (%d vs %d bytes, first difference at byte %d)", what, len(dshCtx), len(reflsCtx), at),
			window(dshCtx, at), window(reflsCtx, at))
	} else {
		t.sameAs(fmt.Sprintf("%s: context text, %d bytes", what, len(dshCtx)))
	}
	if !jsonEqual(dshRefs, reflsRefs) {
		t.differs(what+": reference records", dshRefs, reflsRefs)
	} else {
		t.sameAs(what + ": reference records")
	}
}

func textOfBlocks(raw json.RawMessage) string {
	var blocks []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	_ = json.Unmarshal(raw, &blocks)
	var texts []string
	for _, b := range blocks {
		if b.Type == "text" {
			texts = append(texts, b.Text)
		}
	}
	return strings.Join(texts, "\n")
}

func jsonEqual(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return bytes.Equal(bytes.TrimSpace(a), bytes.TrimSpace(b))
	}
	return clip(x) == clip(y)
}

func firstDifference(a, b string) int {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	return i
}

func window(s string, at int) string {
	return s[max(0, at-60):min(len(s), at+120)]
}
