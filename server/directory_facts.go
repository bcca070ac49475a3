package server

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"go.uber.org/zap"

	"github.com/dsh-refls/dsh-refls/fileref"
	"github.com/dsh-refls/dsh-refls/server/internal/render"
)

// Directory facts (issue 30 item 3): what a `@dir/` mention would bring
// if every file below it were read, counted from the workspace index
// without reading a file body (fileref.Totals, fileref.DirFacts).
const (
	// defaultDirectoryTokenBudget is the estimate above which a directory
	// mention is flagged: about three quarters of a 128k-token context
	// window, DeepSeek's, the rest left to the conversation itself.
	defaultDirectoryTokenBudget = 100_000
	// dirTreeDepth and dirTreeWidth bound the tree a hover lists: two
	// levels, eight entries each, the others summed in one line.
	dirTreeDepth = 2
	dirTreeWidth = 8
	// codeDirectoryBudget is the code of the diagnostic on a directory
	// mention over directoryTokenBudget: the setting that governs it.
	codeDirectoryBudget = "directoryTokenBudget"
	// maxNarrowMentions bounds the mentions one narrowing fix writes in
	// place of one: a line of a few folders still reads as a choice.
	maxNarrowMentions = 4
)

// dirFacter is a file source that knows directory facts: fileref's index,
// built (filesAdapter) or only opened (interimFiles).
type dirFacter interface {
	// DirTotals answers in constant time, once the index is summed.
	DirTotals(rel string) (fileref.Totals, bool)
	// DirFacts counts one directory, reading the disk for a bounded time.
	DirFacts(ctx context.Context, rel string, opt fileref.DirFactsOptions) (fileref.DirFacts, error)
}

// sizer is a file index whose file sizes are measured after its build and
// after changes (fileref.Index.MeasureSizes).
type sizer interface {
	MeasureSizes(ctx context.Context) error
	Unmeasured() int
	Summed() bool
}

// DirTotals implements dirFacter.
func (a *filesAdapter) DirTotals(rel string) (fileref.Totals, bool) { return a.ix.DirTotals(rel) }

// DirFacts implements dirFacter.
func (a *filesAdapter) DirFacts(ctx context.Context, rel string, opt fileref.DirFactsOptions) (fileref.DirFacts, error) {
	return a.ix.DirFacts(ctx, rel, opt)
}

// MeasureSizes implements sizer.
func (a *filesAdapter) MeasureSizes(ctx context.Context) error { return a.ix.MeasureSizes(ctx) }

// Unmeasured implements sizer.
func (a *filesAdapter) Unmeasured() int { return a.ix.Unmeasured() }

// Summed implements sizer.
func (a *filesAdapter) Summed() bool { return a.ix.Summed() }

// DirTotals implements dirFacter: nothing is summed before the build.
func (f interimFiles) DirTotals(string) (fileref.Totals, bool) { return fileref.Totals{}, false }

// DirFacts implements dirFacter: a bounded walk of the directory.
func (f interimFiles) DirFacts(ctx context.Context, rel string, opt fileref.DirFactsOptions) (fileref.DirFacts, error) {
	return f.ix.DirFacts(ctx, rel, opt)
}

// kickSizes measures, in the background, the sizes the current file index
// lacks (all of them after its build, those of a walked directory after a
// change), one run at a time, and then has diagnostics recomputed: a
// directory's budget check depends on them.
func (s *Server) kickSizes() {
	h := s.files.Load()
	if h == nil {
		return
	}
	sz, ok := h.f.(sizer)
	if !ok || sz.Unmeasured() == 0 && sz.Summed() || !s.sizing.CompareAndSwap(false, true) {
		return
	}
	s.bgWG.Add(1)
	go func() {
		defer s.bgWG.Done()
		for {
			if err := sz.MeasureSizes(h.ctx); err != nil && h.ctx.Err() == nil {
				s.logger.Warn("file sizes not measured", zap.Error(err))
			}
			s.diags.scheduleAll()
			s.sizing.Store(false)
			// A change that came after the last look left sizes to
			// measure, and its kickSizes found this run still going.
			if h.ctx.Err() != nil || sz.Unmeasured() == 0 && sz.Summed() || !s.sizing.CompareAndSwap(false, true) {
				return
			}
		}
	}()
}

// fileSizesPending is the number of indexed files whose size is not in
// the directory totals yet, for dsh/status: every file until the index is
// first summed, then those still unmeasured.
func (s *Server) fileSizesPending() int {
	f := s.currentFiles()
	sz, ok := f.(sizer)
	if !ok {
		return 0
	}
	df, ok := f.(dirFacter)
	if !ok || !sz.Summed() {
		return f.Count()
	}
	t, _ := df.DirTotals("")
	return t.Unmeasured
}

// directoryRow shows a directory's totals on its completion row: in
// labelDetails' description when the client has it, else in detail. It
// reads the index's sums only (constant time): nothing before they exist.
func directoryRow(item *completionItem, files Files, path string, useLabelDetails bool) {
	df, ok := files.(dirFacter)
	if !ok {
		return
	}
	t, ok := df.DirTotals(path)
	if !ok {
		return
	}
	summary := dirSummary(t)
	if useLabelDetails {
		item.LabelDetails = &labelDetails{Description: summary}
		return
	}
	item.Detail = summary
}

// dirSummary writes totals in one short line: "412 files · 3.1 MB ·
// ~820k tokens"; bytes and tokens read "≥ …" when they are lower bounds.
// A completion row writes one per directory listed: it appends into one
// buffer, without fmt (about 1.3 µs and 14 allocations a row with fmt).
func dirSummary(t fileref.Totals) string {
	var buf [80]byte
	b := appendGrouped(buf[:0], int64(t.Files))
	if t.Files == 1 {
		b = append(b, " file"...)
	} else {
		b = append(b, " files"...)
	}
	if t.Files == 0 {
		return string(b)
	}
	atLeast := ""
	if !t.Exact() {
		atLeast = "≥ "
	}
	b = append(b, " · "...)
	b = append(b, atLeast...)
	b = appendHumanBytes(b, t.Bytes)
	if t.TextBytes() > 0 || t.BinaryFiles < t.Files {
		b = append(b, " · "...)
		b = append(b, atLeast...)
		b = append(b, '~')
		b = appendHumanTokens(b, t.Tokens())
		if t.Tokens() == 1 {
			b = append(b, " token"...)
		} else {
			b = append(b, " tokens"...)
		}
	}
	return string(b)
}

// appendHumanBytes appends what humanBytes writes.
func appendHumanBytes(b []byte, n int64) []byte {
	switch {
	case n == 1:
		return append(b, "1 byte"...)
	case n < 1024:
		return append(strconv.AppendInt(b, n, 10), " bytes"...)
	case n < 1024*1024:
		return append(strconv.AppendInt(b, (n+512)/1024, 10), " KB"...)
	default:
		return append(strconv.AppendFloat(b, float64(n)/(1024*1024), 'f', 1, 64), " MB"...)
	}
}

// humanTokens writes a token count as a person reads it: "950", "1.2k",
// "820k", "3.4M".
func humanTokens(n int64) string { return string(appendHumanTokens(nil, n)) }

// appendHumanTokens appends what humanTokens writes.
func appendHumanTokens(b []byte, n int64) []byte {
	tenth := func(b []byte, v float64, unit byte) []byte {
		b = strconv.AppendFloat(b, v, 'f', 1, 64)
		if b[len(b)-1] == '0' && b[len(b)-2] == '.' {
			b = b[:len(b)-2]
		}
		return append(b, unit)
	}
	switch {
	case n < 1000:
		return strconv.AppendInt(b, n, 10)
	case n < 10_000:
		return tenth(b, float64(n)/1000, 'k')
	case n < 1_000_000:
		return append(strconv.AppendInt(b, (n+500)/1000, 10), 'k')
	default:
		return tenth(b, float64(n)/1e6, 'M')
	}
}

// groupThousands writes n with commas between groups of three digits.
func groupThousands(n int64) string { return string(appendGrouped(nil, n)) }

// appendGrouped appends n with commas between groups of three digits.
func appendGrouped(b []byte, n int64) []byte {
	start := len(b)
	b = strconv.AppendInt(b, n, 10)
	digits := b[start:]
	if n < 0 {
		digits = digits[1:]
	}
	commas := (len(digits) - 1) / 3
	if commas == 0 {
		return b
	}
	b = append(b, make([]byte, commas)...)
	// Move the digits right, from the end, a comma before every third.
	src, dst := len(b)-commas-1, len(b)-1
	for k := 0; src >= len(b)-commas-len(digits); k++ {
		if k > 0 && k%3 == 0 {
			b[dst] = ','
			dst--
		}
		b[dst] = b[src]
		dst--
		src--
	}
	return b
}

// directoryFacts counts the directory rel for a hover, a resolve or a
// quick fix, with a tree depth levels deep and width entries wide (0: all
// of them); ok is false when there is no file source or rel is no
// directory it can count.
func (s *Server) directoryFacts(ctx context.Context, rel string, depth, width int) (fileref.DirFacts, bool) {
	df, ok := s.currentFiles().(dirFacter)
	if !ok {
		return fileref.DirFacts{}, false
	}
	facts, err := df.DirFacts(ctx, rel, fileref.DirFactsOptions{Depth: depth, Width: width})
	if err != nil {
		if !errors.Is(err, fileref.ErrNotIndexedDir) && ctx.Err() == nil {
			s.logger.Debug("no directory facts", zap.String("path", rel), zap.Error(err))
		}
		return fileref.DirFacts{}, false
	}
	return facts, true
}

// directoryText is the hover (and completion documentation) of a
// directory mention named name (as the hover writes it): its totals, how
// the estimate is made, what is not counted, whether it fits the budget,
// then its compact tree.
func (s *Server) directoryText(ctx context.Context, name, rel string, markdown bool) string {
	facts, ok := s.directoryFacts(ctx, rel, dirTreeDepth, dirTreeWidth)
	if !ok {
		return name + ": directory (a symlink or not indexed: its files are not counted; directory symlinks are never followed)"
	}
	if facts.Ignored {
		return name + ": directory, ignored by the workspace's ignore rules (.gitignore, .dshignore, excludedDirectories): nothing in it is counted"
	}
	sep := "\n"
	if markdown {
		sep = "\n\n"
	}
	var b strings.Builder
	b.WriteString(name + ": directory · " + dirSummary(facts.Totals))
	if facts.Dirs > 0 {
		b.WriteString(" in " + render.Plural(facts.Dirs, "folder", "folders") + " below")
	}
	var about []string
	switch {
	case facts.Partial:
		about = append(about, fmt.Sprintf("Counting stopped after %v: at least %s and %s so far.",
			fileref.DefaultFactsCap, render.Plural(facts.Files, "file", "files"), render.Bytes(facts.Bytes)))
	case facts.Unmeasured > 0:
		about = append(about, fmt.Sprintf("The sizes of %s are still being read: bytes and tokens are lower bounds.", render.Plural(facts.Unmeasured, "file", "files")))
	}
	est := fmt.Sprintf("Tokens: text bytes ÷ %d, dsh's own budget rule; dsh sends only the path, so this is what reading every counted file would bring.", fileref.BytesPerToken)
	if facts.BinaryFiles > 0 {
		est += fmt.Sprintf(" Not in it: %s (%s), binary by extension.", render.Plural(facts.BinaryFiles, "file", "files"), render.Bytes(facts.BinaryBytes))
	}
	about = append(about, est)
	ignored := "Ignored paths (.gitignore, .dshignore, excludedDirectories) are never counted"
	if facts.IgnoredCount > 0 {
		names := make([]string, len(facts.IgnoredHere))
		for i, n := range facts.IgnoredHere {
			names[i] = render.InlineCode(n, markdown)
		}
		ignored += "; ignored here: " + strings.Join(names, ", ")
		if more := facts.IgnoredCount - len(facts.IgnoredHere); more > 0 {
			ignored += fmt.Sprintf(" and %d more", more)
		}
	}
	about = append(about, ignored+".")
	if budget := s.config().DirectoryTokenBudget; budget > 0 && facts.Tokens() > int64(budget) {
		about = append(about, fmt.Sprintf("Over the directoryTokenBudget of %s tokens: narrow the mention to a subfolder.", humanTokens(int64(budget))))
	}
	b.WriteString(sep + strings.Join(about, " "))
	if len(facts.Tree) == 0 {
		return b.String() + "\n"
	}
	var tree strings.Builder
	tree.WriteString(strings.TrimSuffix(rel, "/") + "/\n")
	writeTree(&tree, facts.Tree, facts.Rest, "")
	if markdown {
		fence := render.Fence(tree.String())
		fmt.Fprintf(&b, "\n\n%stext\n%s%s\n", fence, tree.String(), fence)
	} else {
		b.WriteString("\n\n" + tree.String())
	}
	return b.String()
}

// writeTree writes one level of a directory tree with box-drawing
// prefixes, each entry with its totals, then the line summing the rest.
func writeTree(b *strings.Builder, nodes []fileref.Node, rest fileref.Rest, indent string) {
	for i, n := range nodes {
		last := i == len(nodes)-1 && rest.Count == 0
		branch, below := "├── ", "│   "
		if last {
			branch, below = "└── ", "    "
		}
		name, summary := n.Name, dirSummary(n.Totals)
		if n.Dir {
			name += "/"
		} else {
			summary = strings.TrimPrefix(summary, "1 file · ")
		}
		b.WriteString(indent + branch + name + "  " + summary + "\n")
		if n.Dir {
			writeTree(b, n.Children, n.Rest, indent+below)
		}
	}
	if rest.Count > 0 {
		b.WriteString(indent + "└── … " + strconv.Itoa(rest.Count) + " more  " + dirSummary(rest.Totals) + "\n")
	}
}

// directoryOverBudget reports, for the diagnostic of a directory mention,
// the totals of rel when their token estimate exceeds budget: from the
// index's sums when it has them, else from a count bounded in time (whose
// lower bounds count only when they already exceed it).
func (s *Server) directoryOverBudget(ctx context.Context, rel string, budget int) (fileref.Totals, bool) {
	if budget <= 0 {
		return fileref.Totals{}, false
	}
	df, ok := s.currentFiles().(dirFacter)
	if !ok {
		return fileref.Totals{}, false
	}
	t, ok := df.DirTotals(rel)
	if !ok {
		facts, err := df.DirFacts(ctx, rel, fileref.DirFactsOptions{})
		if err != nil || facts.Ignored {
			return fileref.Totals{}, false
		}
		t = facts.Totals
	}
	return t, t.Tokens() > int64(budget)
}

// budgetMessage is the diagnostic of a directory mention over budget.
func budgetMessage(path string, t fileref.Totals, budget int) string {
	atLeast := ""
	if !t.Exact() {
		atLeast = "at least "
	}
	size := dirSummary(t)
	if i := strings.LastIndex(size, " · "); i >= 0 {
		size = size[:i] // files and bytes: the tokens are said first
	}
	return fmt.Sprintf("%s would bring %s~%s tokens if read whole (%s), over the directoryTokenBudget of %s: narrow it to a subfolder",
		path, atLeast, humanTokens(t.Tokens()), size, humanTokens(int64(budget)))
}

// narrowing is one quick fix for a directory mention over budget: the
// mentions to write in its place.
type narrowing struct {
	title, text string
	preferred   bool
}

// narrowingFixes are the quick fixes of the directory mention fm over
// budget: first, when two or more fit together, its largest subfolders
// that fit the budget together (taken greedily, biggest first, at most
// maxNarrowMentions of them); then each of its largest subfolders that
// fits alone, up to maxFixes in all. When none fits, its largest
// subfolders, one level down, to narrow again from. Files are never
// offered: the mention named a folder.
func (s *Server) narrowingFixes(ctx context.Context, fm docFileMention, budget int) []narrowing {
	facts, ok := s.directoryFacts(ctx, fm.Path, 1, 0)
	if !ok {
		return nil
	}
	var subs, fits, together []fileref.Node
	used := int64(0)
	for _, n := range facts.Tree { // biggest first
		if !n.Dir || n.Totals.Files == 0 {
			continue
		}
		subs = append(subs, n)
		if tok := n.Totals.Tokens(); tok <= int64(budget) {
			fits = append(fits, n)
			if used+tok <= int64(budget) && len(together) < maxNarrowMentions {
				together = append(together, n)
				used += tok
			}
		}
	}
	dir := strings.TrimSuffix(fm.Path, "/") + "/"
	mention := func(n fileref.Node) string {
		return fileMentionText(dir+n.Name+"/", fileref.KindDirectory, fm.Quoted, nil)
	}
	var out []narrowing
	if len(together) >= 2 {
		var mentions []string
		for _, n := range together {
			mentions = append(mentions, mention(n))
		}
		text := strings.Join(mentions, " ")
		out = append(out, narrowing{title: fmt.Sprintf("Narrow to %s (~%s tokens)", text, humanTokens(used)), text: text, preferred: true})
	}
	pick := fits
	if len(pick) == 0 {
		pick = subs
	}
	for _, n := range pick[:min(len(pick), maxFixes-len(out))] {
		out = append(out, narrowing{title: fmt.Sprintf("Narrow to %s (~%s tokens)", mention(n), humanTokens(n.Totals.Tokens())),
			text: mention(n), preferred: len(out) == 0 && len(fits) > 0})
	}
	return out
}
