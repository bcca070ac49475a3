package server

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/dsh-refls/dsh-refls/completion"
	"github.com/dsh-refls/dsh-refls/fileref"
	"github.com/dsh-refls/dsh-refls/sessionref"
)

// excerptTurnRunes shortens each excerpt turn in a preview.
const excerptTurnRunes = 240

func (s *Server) hoverCall(params json.RawMessage) (call, error) {
	var p textDocumentPositionParams
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, invalidParams("textDocument/hover", err)
	}
	doc, ok := s.docs.get(p.TextDocument.URI)
	if !ok {
		return nil, invalidParams("textDocument/hover", fmt.Errorf("document %s is not open", p.TextDocument.URI))
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
	if sess := s.currentSessions(); sess != nil {
		for _, men := range sess.FindMentions(doc.Text) {
			if offset < men.Start || offset >= men.End {
				continue
			}
			var text string
			if men.Err != nil {
				text = "Malformed session reference: " + errorText(men.Err)
			} else {
				// The recall facts need the index: wait for its first build.
				ready, err := s.readySessions(ctx)
				if err != nil {
					return nil, err
				}
				text = s.sessionPreviewText(ctx, ready, men.SessionID, caps.hoverMarkdown)
			}
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return &hoverResult{Contents: markupContent{Kind: kind, Value: text}, Range: m.Range(men.Start, men.End)}, nil
		}
	}
	line, lineStart := m.Line(pos.Line)
	col := offset - lineStart
	for _, fm := range completion.FileMentions(line) {
		if col < fm.Start || col >= fm.End {
			continue
		}
		text := s.fileFactsText(fm.Path, caps.hoverMarkdown)
		return &hoverResult{Contents: markupContent{Kind: kind, Value: text}, Range: m.Range(lineStart+fm.Start, lineStart+fm.End)}, nil
	}
	return nil, nil
}

// sessionPreviewText renders the preview of one session: what it is, then
// the recall facts dsh/prepare would produce now, then a short excerpt.
func (s *Server) sessionPreviewText(ctx context.Context, sess Sessions, id string, markdown bool) string {
	cfg := s.config()
	entry, ok := sess.Locate(id)
	if !ok {
		return fmt.Sprintf("Unknown session %s: it is not in the session index (%s).", quoteInline(id, markdown), sessionref.CodeReadFailed)
	}
	var b strings.Builder
	title := entry.DisplayTitle()
	if markdown {
		fmt.Fprintf(&b, "**%s**\n\n", escapeMarkdown(title))
	} else {
		fmt.Fprintf(&b, "%s\n\n", title)
	}
	fact := func(name, value string) {
		if markdown {
			fmt.Fprintf(&b, "- %s: %s\n", name, value)
		} else {
			fmt.Fprintf(&b, "%s: %s\n", name, value)
		}
	}
	fact("title", quoteInline(entry.Label(), markdown))
	fact("display title", quoteInline(title, markdown))
	fact("id", quoteInline(entry.ID, markdown))
	cwd := "(none)"
	if entry.HasCwd {
		cwd = quoteInline(entry.Cwd, markdown)
	}
	fact("cwd", cwd)
	fact("created", fmt.Sprintf("%s (%s)", time.UnixMilli(entry.CreatedAt).UTC().Format(time.RFC3339), humanAge(s.now(), entry.CreatedAt)))
	fact("format version", fmt.Sprint(entry.FormatVersion))

	p, err := sess.Preview(ctx, id, cfg.Limits())
	b.WriteString("\n")
	if markdown {
		b.WriteString("**Recall now**\n\n")
	} else {
		b.WriteString("Recall now\n\n")
	}
	switch {
	case err != nil:
		fact("cannot prepare", quoteInline(err.Error(), markdown))
		return b.String()
	case p.Err != nil:
		fact("cannot prepare", quoteInline(p.Err.Error(), markdown))
	}
	fact("originalMessages", fmt.Sprint(p.Stats.OriginalMessages))
	fact("retainedMessages", fmt.Sprint(p.Stats.RetainedMessages))
	fact("omittedMessages", fmt.Sprint(p.Stats.OmittedMessages))
	fact("omittedBytes", fmt.Sprint(p.Stats.OmittedBytes))
	fact("truncated", fmt.Sprint(p.Stats.Truncated))
	fact("compacted", fmt.Sprint(p.Stats.Compacted))
	seq := "null"
	if p.CapturedThroughSeq != nil {
		seq = fmt.Sprint(*p.CapturedThroughSeq)
	}
	fact("capturedThroughSeq", seq)
	fact("budget", fmt.Sprintf("%d bytes", p.Budget))
	if len(p.Excerpt) == 0 {
		return b.String()
	}
	var ex strings.Builder
	for _, t := range p.Excerpt {
		fmt.Fprintf(&ex, "%s: %s\n", t.Role, shorten(t.Text, excerptTurnRunes))
	}
	b.WriteString("\n")
	if markdown {
		fence := fenceFor(ex.String())
		fmt.Fprintf(&b, "%stext\n%s%s\n", fence, ex.String(), fence)
	} else {
		b.WriteString("Excerpt\n\n")
		b.WriteString(ex.String())
	}
	return b.String()
}

// fileFactsText describes a mentioned workspace path: kind, size and
// modification time, or why there is none.
func (s *Server) fileFactsText(rel string, markdown bool) string {
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
	d := strings.Repeat("`", longestBacktickRun(s)+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		return d + " " + s + " " + d
	}
	return d + s + d
}

// escapeMarkdown escapes characters that would format a title.
func escapeMarkdown(s string) string {
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
