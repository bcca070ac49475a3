package server

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"strings"
	"unicode"

	"go.lsp.dev/protocol"

	"github.com/dsh-refls/dsh-refls/completion"
	"github.com/dsh-refls/dsh-refls/fileref"
	"github.com/dsh-refls/dsh-refls/server/internal/similar"
	"github.com/dsh-refls/dsh-refls/sessionref"
	"github.com/dsh-refls/dsh-refls/sessionref/dshlog"
	"github.com/dsh-refls/dsh-refls/sessionref/titles"
)

// Code actions (quick fixes) for the problems diagnostics report.
const (
	// codeActionKindQuickFix is LSP's CodeActionKind.QuickFix.
	codeActionKindQuickFix = "quickfix"
	// CommandOpenPreview opens the recall preview of a session; its one
	// argument is the preview's dsh-refls: URI.
	CommandOpenPreview = "dsh-refls.openPreview"
	// maxFixes bounds the alternatives offered for one mention.
	maxFixes = 3
	// minTitleSimilarity is the least bigram similarity (0..1) for a title
	// to be offered in place of an unknown one.
	minTitleSimilarity = 0.3
)

type codeActionParams struct {
	TextDocument textDocumentIdentifier `json:"textDocument"`
	Range        Range                  `json:"range"`
	Context      struct {
		Only []string `json:"only"`
	} `json:"context"`
}

// codeAction is an LSP CodeAction.
type codeAction struct {
	Title       string         `json:"title"`
	Kind        string         `json:"kind,omitempty"`
	Diagnostics []diagnostic   `json:"diagnostics,omitempty"`
	IsPreferred bool           `json:"isPreferred,omitempty"`
	Edit        *workspaceEdit `json:"edit,omitempty"`
	Command     *command       `json:"command,omitempty"`
}

// workspaceEdit is an LSP WorkspaceEdit with changes by document URI.
type workspaceEdit struct {
	Changes map[string][]textEdit `json:"changes"`
}

// command is an LSP Command.
type command struct {
	Title     string `json:"title"`
	Command   string `json:"command"`
	Arguments []any  `json:"arguments,omitempty"`
}

type codeActionOptions struct {
	CodeActionKinds []string `json:"codeActionKinds"`
}

type executeCommandOptions struct {
	Commands []string `json:"commands"`
}

func (s *Server) codeActionCall(params json.RawMessage) (call, error) {
	var p codeActionParams
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, invalidParams(protocol.MethodTextDocumentCodeAction, err)
	}
	doc, ok := s.docs.get(p.TextDocument.URI)
	if !ok {
		return nil, invalidParams(protocol.MethodTextDocumentCodeAction, fmt.Errorf("document %s is not open", p.TextDocument.URI))
	}
	if len(p.Context.Only) > 0 && !slices.ContainsFunc(p.Context.Only, func(k string) bool {
		return k == codeActionKindQuickFix || k == ""
	}) {
		return func(context.Context) (any, error) { return []codeAction{}, nil }, nil
	}
	return func(ctx context.Context) (any, error) {
		out, err := s.codeActions(ctx, doc, p.Range)
		if err != nil || !continueWanted(p.Context.Only) {
			return out, err
		}
		more, err := s.continueActions(ctx, doc, p.Range)
		return append(out, more...), err
	}, nil
}

// codeActions offers the quick fixes of the problems in range r of doc.
// The problems are the document's diagnostics, computed afresh (the
// mention being typed included), so a fix answers exactly what is shown.
func (s *Server) codeActions(ctx context.Context, doc document, r Range) ([]codeAction, error) {
	out := []codeAction{}
	m := NewMapper(doc.Text, s.clientCaps().encoding)
	from, err1 := m.Offset(r.Start)
	to, err2 := m.Offset(r.End)
	if err1 != nil || err2 != nil {
		return out, nil
	}
	doc.Typing = -1
	diags := s.computeDiagnostics(ctx, doc)
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	fx := &fixer{s: s, doc: doc, m: m, sessions: sessionref.FindMentions(doc.Text), files: fileMentionsIn(doc.Text, m)}
	if len(fx.sessions) > 0 {
		// Fixes name sessions: wait for the index's first build.
		ready, err := s.readySnapshot(ctx)
		if err != nil {
			return nil, err
		}
		fx.snap = ready
	}
	tooMany := false
	for _, d := range diags {
		start, _ := m.Offset(d.Range.Start)
		end, _ := m.Offset(d.Range.End)
		if end < from || start > to {
			continue
		}
		switch sessionref.Code(d.Code) {
		case sessionref.CodeInvalidReference, sessionref.CodeReadFailed:
			out = fx.unknownSession(out, d, start)
		case sessionref.CodeSelfReference:
			out = append(out, fx.fix("Remove the reference to this session", d, true, removal(doc.Text, m, start, end)))
		case sessionref.CodeTooMany:
			if !tooMany {
				tooMany = true
				out = append(out, fx.tooMany(d))
			}
		case sessionref.CodeBudgetExceeded:
			out = fx.openPreview(out, d, start)
		case codeDirectoryBudget:
			out = fx.narrowDirectory(ctx, out, d, start)
		case "":
			out = fx.missingFile(ctx, out, d, start)
		}
	}
	return fx.bareURIs(out, from, to), nil
}

// fixer makes the quick fixes of one document: its session and file
// mentions, and the title index's snapshot when it names sessions.
type fixer struct {
	s        *Server
	doc      document
	m        *Mapper
	sessions []sessionref.MentionSpan
	files    []docFileMention
	snap     *titles.Snapshot // nil when the document names no session
}

// edit is a workspace edit of the document.
func (fx *fixer) edit(edits ...textEdit) *workspaceEdit {
	return &workspaceEdit{Changes: map[string][]textEdit{fx.doc.URI: edits}}
}

// fix is a quick fix of d that applies edits.
func (fx *fixer) fix(title string, d diagnostic, preferred bool, edits ...textEdit) codeAction {
	return codeAction{Title: title, Kind: codeActionKindQuickFix, Diagnostics: []diagnostic{d}, IsPreferred: preferred, Edit: fx.edit(edits...)}
}

// unknownSession offers the listed sessions whose titles are closest to
// the label of a mention that names no listed session. A listed session
// whose log cannot be read gets none: no edit mends it.
func (fx *fixer) unknownSession(out []codeAction, d diagnostic, start int) []codeAction {
	men, ok := sessionAt(fx.sessions, start)
	if !ok || fx.snap == nil {
		return out
	}
	if men.Err == nil {
		if _, known := fx.snap.Locate(men.SessionID); known {
			return out
		}
	}
	for i, e := range closestTitles(fx.snap, men.Label, fx.s.config().SessionID) {
		mention := sessionref.Mention(e.DisplayTitle(), e.ID)
		out = append(out, fx.fix("Replace with @["+e.DisplayTitle()+"](…)", d, i == 0, textEdit{Range: d.Range, NewText: mention}))
	}
	return out
}

// tooMany removes every mention beyond the sessions a message may
// reference, in one fix.
func (fx *fixer) tooMany(d diagnostic) codeAction {
	var edits []textEdit
	for _, sm := range fx.s.extraMentions(fx.sessions, fx.snap) {
		edits = append(edits, removal(fx.doc.Text, fx.m, sm.Start, sm.End))
	}
	return fx.fix(fmt.Sprintf("Remove the mentions beyond the first %d sessions", fx.s.maxReferences()), d, true, edits...)
}

// openPreview opens the recall preview of a session over its budget, for
// a client that can show a document.
func (fx *fixer) openPreview(out []codeAction, d diagnostic, start int) []codeAction {
	men, ok := sessionAt(fx.sessions, start)
	if !ok || fx.snap == nil || !fx.s.clientCaps().features.showDocument {
		return out
	}
	uri := PreviewURI(men.SessionID, previewTitle(fx.snap, men.SessionID, men.Label))
	return append(out, codeAction{
		Title: "Open recall preview", Kind: codeActionKindQuickFix, Diagnostics: []diagnostic{d},
		Command: &command{Title: "Open recall preview", Command: CommandOpenPreview, Arguments: []any{uri}},
	})
}

// narrowDirectory offers narrower mentions of a directory over the token
// budget.
func (fx *fixer) narrowDirectory(ctx context.Context, out []codeAction, d diagnostic, start int) []codeAction {
	fm, ok := fileAt(fx.files, start)
	if !ok {
		return out
	}
	for _, n := range fx.s.narrowingFixes(ctx, fm, fx.s.config().DirectoryTokenBudget) {
		out = append(out, fx.fix(n.title, d, n.preferred, textEdit{Range: d.Range, NewText: n.text}))
	}
	return out
}

// missingFile offers the workspace paths closest to a mentioned file that
// does not exist.
func (fx *fixer) missingFile(ctx context.Context, out []codeAction, d diagnostic, start int) []codeAction {
	fm, ok := fileAt(fx.files, start)
	if !ok || !strings.Contains(d.Message, "does not exist") {
		return out
	}
	for i, c := range fx.s.closestPaths(ctx, fm.Path) {
		out = append(out, fx.fix("Replace with "+c.Path, d, i == 0, textEdit{Range: d.Range, NewText: fileMentionText(c.Path, c.Kind, fm.Quoted, fm.Lines)}))
	}
	return out
}

// bareURIs offers to write each bare dsh-session: URI in [from, to] as a
// mention: it is valid, but reads better as one.
func (fx *fixer) bareURIs(out []codeAction, from, to int) []codeAction {
	if fx.snap == nil {
		return out
	}
	for _, men := range fx.sessions {
		if !men.Bare || men.Err != nil || men.End < from || men.Start > to {
			continue
		}
		title := previewTitle(fx.snap, men.SessionID, men.SessionID)
		out = append(out, codeAction{
			Title: "Write as @[" + title + "](…)", Kind: codeActionKindQuickFix, IsPreferred: true,
			Edit: fx.edit(textEdit{Range: fx.m.Range(men.Start, men.End), NewText: sessionref.Mention(title, men.SessionID)}),
		})
	}
	return out
}

// maxReferences is the effective maxReferences setting.
func (s *Server) maxReferences() int {
	if n := s.config().MaxReferences; n > 0 {
		return n
	}
	return defaultMaxReferences
}

// extraMentions are the mentions of the sessions beyond the first
// maxReferences distinct known ones, as diagnostics count them.
func (s *Server) extraMentions(sessions []sessionref.MentionSpan, snap *titles.Snapshot) []sessionref.MentionSpan {
	self := s.config().SessionID
	counted := func(men sessionref.MentionSpan) bool {
		if men.Err != nil || (men.SessionID == self && self != "") || snap == nil {
			return false
		}
		_, ok := snap.Locate(men.SessionID)
		return ok
	}
	kept := map[string]bool{}
	var out []sessionref.MentionSpan
	for _, men := range sessions {
		if !counted(men) {
			continue
		}
		if !kept[men.SessionID] && len(kept) < s.maxReferences() {
			kept[men.SessionID] = true
		}
		if !kept[men.SessionID] {
			out = append(out, men)
		}
	}
	return out
}

// sessionAt is the session mention starting at offset.
func sessionAt(sessions []sessionref.MentionSpan, offset int) (sessionref.MentionSpan, bool) {
	for _, men := range sessions {
		if men.Start == offset {
			return men, true
		}
	}
	return sessionref.MentionSpan{}, false
}

// fileAt is the file mention starting at offset.
func fileAt(files []docFileMention, offset int) (docFileMention, bool) {
	for _, fm := range files {
		if fm.Start == offset {
			return fm, true
		}
	}
	return docFileMention{}, false
}

// removal deletes [start, end) of text with one space beside it, so that
// "a @[x](…) b" becomes "a b", not "a  b".
func removal(text string, m *Mapper, start, end int) textEdit {
	switch {
	case end < len(text) && text[end] == ' ':
		end++
	case start > 0 && text[start-1] == ' ':
		start--
	}
	return textEdit{Range: m.Range(start, end), NewText: ""}
}

// fileMentionText writes a file mention: quoted when asked or when the
// path holds whitespace, with its line range.
func fileMentionText(p string, kind fileref.Kind, quoted bool, lines *completion.LineRange) string {
	if kind == fileref.KindDirectory && !strings.HasSuffix(p, "/") {
		p += "/"
	}
	out := "@" + p
	if quoted || strings.IndexFunc(p, unicode.IsSpace) >= 0 {
		out = `@"` + p + `"`
	}
	if lines != nil {
		out += "#" + lines.String()
	}
	return out
}

// closestTitles are the sessions whose titles come closest to label: the
// best few candidates matching it, or else the titles most alike by
// bigrams. The target session is never offered.
func closestTitles(snap *titles.Snapshot, label, target string) []dshlog.Entry {
	var out []dshlog.Entry
	if strings.TrimSpace(label) != "" {
		cands, _, err := snap.Candidates(titles.CandidateQuery{Query: label, TargetID: target, Limit: maxFixes})
		if err == nil {
			for _, c := range cands {
				if e, ok := snap.Locate(c.SessionID); ok {
					out = append(out, e)
				}
			}
		}
	}
	if len(out) > 0 || strings.TrimSpace(label) == "" {
		return out
	}
	want := similar.BigramsOf(label)
	type scoredEntry struct {
		e     dshlog.Entry
		score float64
	}
	var best []scoredEntry
	for _, e := range snap.Sessions {
		if e.ID == target {
			continue
		}
		sc := similar.Dice(want, similar.BigramsOf(e.DisplayTitle()))
		if sc < minTitleSimilarity {
			continue
		}
		best = append(best, scoredEntry{e, sc})
		slices.SortStableFunc(best, func(a, b scoredEntry) int {
			switch {
			case a.score > b.score:
				return -1
			case a.score < b.score:
				return 1
			}
			return 0
		})
		if len(best) > maxFixes {
			best = best[:maxFixes]
		}
	}
	for _, b := range best {
		out = append(out, b.e)
	}
	return out
}

// closestPaths are existing workspace paths closest to a missing one:
// fuzzy candidates for its base name, its stem and the stem's first half,
// ranked by edit distance to the whole path.
func (s *Server) closestPaths(ctx context.Context, missing string) []FileCandidate {
	files := s.currentFiles()
	if files == nil {
		return nil
	}
	base := path.Base(strings.TrimSuffix(missing, "/"))
	stem := strings.TrimSuffix(base, path.Ext(base))
	queries := []string{base, stem}
	if r := []rune(stem); len(r) >= 2 {
		queries = append(queries, string(r[:(len(r)+1)/2]))
	}
	wantDir := strings.HasSuffix(missing, "/")
	seen := map[string]bool{}
	var cands []FileCandidate
	for _, q := range queries {
		if q == "" || seen["?"+q] {
			continue
		}
		seen["?"+q] = true
		found, _, err := files.Search(ctx, q, 50)
		if err != nil {
			return nil
		}
		for _, c := range found {
			if seen[c.Path] || !completion.Offerable(c.Path) || (c.Kind == fileref.KindDirectory) != wantDir || c.Ignored {
				continue
			}
			seen[c.Path] = true
			cands = append(cands, c)
		}
	}
	slices.SortStableFunc(cands, func(a, b FileCandidate) int {
		return similar.EditDistance(missing, a.Path) - similar.EditDistance(missing, b.Path)
	})
	return cands[:min(len(cands), maxFixes)]
}
