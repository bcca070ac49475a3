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
	sessions := sessionref.FindMentions(doc.Text)
	var snap *titles.Snapshot
	if len(sessions) > 0 {
		// Fixes name sessions: wait for the index's first build.
		ready, err := s.readySnapshot(ctx)
		if err != nil {
			return nil, err
		}
		snap = ready
	}
	files := fileMentionsIn(doc.Text, m)
	edit := func(edits ...textEdit) *workspaceEdit {
		return &workspaceEdit{Changes: map[string][]textEdit{doc.URI: edits}}
	}
	tooMany := false
	for _, d := range diags {
		start, _ := m.Offset(d.Range.Start)
		end, _ := m.Offset(d.Range.End)
		if end < from || start > to {
			continue
		}
		one := []diagnostic{d}
		switch sessionref.Code(d.Code) {
		case sessionref.CodeInvalidReference, sessionref.CodeReadFailed:
			men, ok := sessionAt(sessions, start)
			if !ok || snap == nil {
				continue
			}
			if men.Err == nil {
				if _, known := snap.Locate(men.SessionID); known {
					continue // a log that cannot be read: no edit mends it
				}
			}
			for i, e := range closestTitles(snap, men.Label, s.config().SessionID) {
				mention := sessionref.Mention(e.DisplayTitle(), e.ID)
				out = append(out, codeAction{
					Title: "Replace with @[" + e.DisplayTitle() + "](…)", Kind: codeActionKindQuickFix, Diagnostics: one,
					IsPreferred: i == 0, Edit: edit(textEdit{Range: d.Range, NewText: mention}),
				})
			}
		case sessionref.CodeSelfReference:
			out = append(out, codeAction{
				Title: "Remove the reference to this session", Kind: codeActionKindQuickFix, Diagnostics: one,
				IsPreferred: true, Edit: edit(removal(doc.Text, m, start, end)),
			})
		case sessionref.CodeTooMany:
			if tooMany {
				continue
			}
			tooMany = true
			var edits []textEdit
			for _, sm := range s.extraMentions(sessions, snap) {
				edits = append(edits, removal(doc.Text, m, sm.Start, sm.End))
			}
			out = append(out, codeAction{
				Title: fmt.Sprintf("Remove the mentions beyond the first %d sessions", s.maxReferences()), Kind: codeActionKindQuickFix,
				Diagnostics: one, IsPreferred: true, Edit: edit(edits...),
			})
		case sessionref.CodeBudgetExceeded:
			men, ok := sessionAt(sessions, start)
			if !ok || snap == nil || !s.clientCaps().features.showDocument {
				continue
			}
			uri := PreviewURI(men.SessionID, previewTitle(snap, men.SessionID, men.Label))
			out = append(out, codeAction{
				Title: "Open recall preview", Kind: codeActionKindQuickFix, Diagnostics: one,
				Command: &command{Title: "Open recall preview", Command: CommandOpenPreview, Arguments: []any{uri}},
			})
		case codeDirectoryBudget:
			fm, ok := fileAt(files, start)
			if !ok {
				continue
			}
			for _, n := range s.narrowingFixes(ctx, fm, s.config().DirectoryTokenBudget) {
				out = append(out, codeAction{Title: n.title, Kind: codeActionKindQuickFix, Diagnostics: one, IsPreferred: n.preferred,
					Edit: edit(textEdit{Range: d.Range, NewText: n.text})})
			}
		case "":
			fm, ok := fileAt(files, start)
			if !ok || !strings.Contains(d.Message, "does not exist") {
				continue
			}
			for i, c := range s.closestPaths(ctx, fm.Path) {
				out = append(out, codeAction{
					Title: "Replace with " + c.Path, Kind: codeActionKindQuickFix, Diagnostics: one, IsPreferred: i == 0,
					Edit: edit(textEdit{Range: d.Range, NewText: fileMentionText(c.Path, c.Kind, fm.Quoted, fm.Lines)}),
				})
			}
		}
	}
	// A bare dsh-session: URI is valid but reads better as a mention.
	if snap != nil {
		for _, men := range sessions {
			if !men.Bare || men.Err != nil || men.End < from || men.Start > to {
				continue
			}
			title := previewTitle(snap, men.SessionID, men.SessionID)
			out = append(out, codeAction{
				Title: "Write as @[" + title + "](…)", Kind: codeActionKindQuickFix, IsPreferred: true,
				Edit: edit(textEdit{Range: m.Range(men.Start, men.End), NewText: sessionref.Mention(title, men.SessionID)}),
			})
		}
	}
	return out, nil
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
