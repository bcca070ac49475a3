package server

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"go.lsp.dev/protocol"

	"github.com/dsh-refls/dsh-refls/fileref"
	"github.com/dsh-refls/dsh-refls/sessionref"
	"github.com/dsh-refls/dsh-refls/sessionref/prepare"
	"github.com/dsh-refls/dsh-refls/sessionref/titles"
)

// excerptTurnRunes shortens each excerpt turn in a preview.
const excerptTurnRunes = 240

func (s *Server) hoverCall(params json.RawMessage) (call, error) {
	var p textDocumentPositionParams
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, invalidParams(protocol.MethodTextDocumentHover, err)
	}
	doc, ok := s.docs.get(p.TextDocument.URI)
	if !ok {
		return nil, invalidParams(protocol.MethodTextDocumentHover, fmt.Errorf("document %s is not open", p.TextDocument.URI))
	}
	return func(ctx context.Context) (any, error) { return s.hover(ctx, doc, p.Position) }, nil
}

// hover describes the session or file mention under the cursor; nil when
// there is none.
func (s *Server) hover(ctx context.Context, doc document, pos Position) (*hoverResult, error) {
	caps := s.clientCaps()
	m := NewMapper(doc.Text, caps.encoding)
	offset, err := m.Offset(pos)
	if err != nil {
		return nil, nil
	}
	kind := "plaintext"
	if caps.hoverMarkdown {
		kind = "markdown"
	}
	if s.currentSessions() != nil {
		for _, men := range sessionref.FindMentions(doc.Text) {
			if offset < men.Start || offset >= men.End {
				continue
			}
			var text string
			if men.Err != nil {
				text = "Malformed session reference: " + errorText(men.Err)
			} else {
				// The recall facts need the index: wait for its first build.
				snap, err := s.readySnapshot(ctx)
				if err != nil {
					return nil, err
				}
				text = s.sessionPreviewText(ctx, snap, men.SessionID, caps.hoverMarkdown)
			}
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return &hoverResult{Contents: markupContent{Kind: kind, Value: text}, Range: m.Range(men.Start, men.End)}, nil
		}
	}
	for _, fm := range fileMentionsIn(doc.Text, m) {
		if offset < fm.Start || offset >= fm.End {
			continue
		}
		text := s.fileMentionText(ctx, fm.Mention, caps.hoverMarkdown)
		return &hoverResult{Contents: markupContent{Kind: kind, Value: text}, Range: m.Range(fm.Start, fm.End)}, nil
	}
	return nil, nil
}

// sessionPreviewText renders the preview of one session for a person: its
// title, one line of what it is (id, working directory, age, log format),
// one line of what dsh/prepare would recall from it now, then a short
// excerpt, all from one snapshot of the index.
func (s *Server) sessionPreviewText(ctx context.Context, snap *titles.Snapshot, id string, markdown bool) string {
	cfg := s.config()
	entry, ok := snap.Locate(id)
	if !ok {
		return fmt.Sprintf("Unknown session %s: it is not in the session index.", quoteInline(id, markdown))
	}
	var b strings.Builder
	title := entry.DisplayTitle()
	// A paragraph per part; Markdown needs a blank line between them,
	// plain text reads better without.
	sep := "\n"
	if markdown {
		fmt.Fprintf(&b, "**%s**", escapeMarkdown(title))
		sep = "\n\n"
	} else {
		b.WriteString(title)
	}
	if label := entry.Label(); label != title {
		fmt.Fprintf(&b, "%stitled %s", sep, quoteInline(label, markdown))
	}
	about := []string{quoteInline(entry.ID, markdown)}
	switch {
	case entry.WorkDir != "" && entry.HasCwd && entry.WorkDir != entry.Cwd:
		// dsh 0.2.1 moves a session with working-directory/change; the
		// header keeps the directory it started in.
		about = append(about, "started in "+quoteInline(entry.Cwd, markdown)+", now in "+quoteInline(entry.WorkDir, markdown))
	case entry.WorkDir != "" && !entry.HasCwd:
		about = append(about, "now in "+quoteInline(entry.WorkDir, markdown))
	case entry.HasCwd:
		about = append(about, "in "+quoteInline(entry.Cwd, markdown))
	default:
		about = append(about, "no working directory")
	}
	about = append(about,
		fmt.Sprintf("created %s (%s)", time.UnixMilli(entry.CreatedAt).UTC().Format("2006-01-02 15:04 UTC"), humanAge(s.now(), entry.CreatedAt)))
	if entry.LastEventAt > 0 {
		about = append(about, "last active "+humanAge(s.now(), entry.LastEventAt))
	}
	about = append(about,
		fmt.Sprintf("log format v%d", entry.FormatVersion))
	b.WriteString(sep + strings.Join(about, " · "))
	for _, l := range relationLines(snap, &entry, markdown) {
		b.WriteString(sep + l)
	}

	p, err := prepare.PreviewSession(ctx, snap, id, cfg.Limits())
	switch {
	case err != nil:
		b.WriteString(sep + "Cannot be recalled now: " + errorText(err))
		return b.String() + "\n"
	case p.Err != nil:
		b.WriteString(sep + "Cannot be recalled now: " + errorText(p.Err))
	}
	b.WriteString(sep + recallLine(p))
	if len(p.Excerpt) == 0 {
		return b.String() + "\n"
	}
	var ex strings.Builder
	for _, t := range p.Excerpt {
		fmt.Fprintf(&ex, "%s: %s\n", t.Role, shorten(t.Text, excerptTurnRunes))
	}
	if markdown {
		fence := fenceFor(ex.String())
		fmt.Fprintf(&b, "\n\n%stext\n%s%s\n", fence, ex.String(), fence)
	} else {
		b.WriteString("\n\nExcerpt\n" + ex.String())
	}
	return b.String()
}

// recallLine says in one line what dsh/prepare would recall now: "28 of 48
// messages kept · 44 KB left out · compacted · up to event 96 · budget 64 KB".
func recallLine(p *prepare.Preview) string {
	st := p.Stats
	var parts []string
	if st.RetainedMessages == st.OriginalMessages {
		parts = append(parts, fmt.Sprintf("all %s kept", plural(st.OriginalMessages, "message", "messages")))
	} else {
		parts = append(parts, fmt.Sprintf("%d of %s kept", st.RetainedMessages, plural(st.OriginalMessages, "message", "messages")))
	}
	if st.OmittedBytes > 0 {
		parts = append(parts, humanBytes(int64(st.OmittedBytes))+" left out")
	}
	if st.Truncated {
		parts = append(parts, "shortened to fit")
	}
	if st.Compacted {
		parts = append(parts, "compacted")
	}
	if p.CapturedThroughSeq != nil {
		parts = append(parts, fmt.Sprintf("up to event %d", *p.CapturedThroughSeq))
	}
	if p.Redactions != nil && *p.Redactions > 0 {
		parts = append(parts, plural(*p.Redactions, "secret", "secrets")+" redacted")
	}
	parts = append(parts, "budget "+humanBytes(int64(p.Budget)))
	return strings.Join(parts, " · ")
}

// plural writes n with the singular or plural noun.
func plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}

// humanBytes writes a byte count as a person reads it: "512 bytes",
// "44 KB", "3.2 MB" (1 KB = 1024 bytes).
func humanBytes(n int64) string {
	switch {
	case n == 1:
		return "1 byte"
	case n < 1024:
		return fmt.Sprintf("%d bytes", n)
	case n < 1024*1024:
		return fmt.Sprintf("%d KB", (n+512)/1024)
	default:
		return fmt.Sprintf("%.1f MB", float64(n)/(1024*1024))
	}
}

// fileFactsText describes a mentioned workspace path: kind, size and
// modification time (for a directory, what is below it), or why there is
// none.
func (s *Server) fileFactsText(ctx context.Context, rel string, markdown bool) string {
	name := quoteInline(rel, markdown)
	root := s.workspace()
	if root == "" {
		return name + ": outside workspace (no workspace is open)"
	}
	f := fileref.StatMention(root, rel)
	switch {
	case f.OutsideWorkspace:
		return name + ": outside workspace"
	case f.Missing:
		return name + ": missing"
	case f.Kind == fileref.KindDirectory:
		return s.directoryText(ctx, name, rel, markdown)
	}
	return fmt.Sprintf("%s: %s, %d bytes, modified %s", name, f.Kind, f.Size, f.ModTime.UTC().Format(time.RFC3339))
}

// longestBacktickRun returns the length of the longest run of backticks in s.
func longestBacktickRun(s string) int {
	longest, run := 0, 0
	for _, r := range s {
		if r == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	return longest
}

// fenceFor returns a backtick fence longer than any backtick run in s.
func fenceFor(s string) string {
	return strings.Repeat("`", max(3, longestBacktickRun(s)+1))
}

// quoteInline writes s as inline code in Markdown (with a delimiter longer
// than any backtick run in it), or as is in plain text.
func quoteInline(s string, markdown bool) string {
	if !markdown {
		return s
	}
	// A blank line would end the code span and let the rest render as
	// Markdown and HTML; inside a span a line break is a space anyway.
	s = oneLine(s)
	d := strings.Repeat("`", longestBacktickRun(s)+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		return d + " " + s + " " + d
	}
	return d + s + d
}

// oneLine replaces every line break of s with a space.
func oneLine(s string) string {
	return strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ", "\u2028", " ", "\u2029", " ").Replace(s)
}

// escapeMarkdown escapes characters that would format a title, keeps it on
// one line, and breaks "://" with a zero-width space so that a renderer
// that links bare URLs (VS Code's does) shows no live link.
func escapeMarkdown(s string) string {
	s = strings.ReplaceAll(oneLine(s), "://", ":/\u200b/")
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune("\\`*_{}[]()#+-.!|<>~", r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// shorten cuts s to at most n runes, on one line.
func shorten(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
