package render

import (
	"fmt"
	"strings"
	"time"

	"github.com/dsh-refls/dsh-refls/completion"
	"github.com/dsh-refls/dsh-refls/sessionref"
	"github.com/dsh-refls/dsh-refls/sessionref/dshlog"
	"github.com/dsh-refls/dsh-refls/sessionref/prepare"
	"github.com/dsh-refls/dsh-refls/sessionref/titles"
)

// excerptTurnRunes shortens each excerpt turn in a preview.
const excerptTurnRunes = 240

// maxRelatedNames is how many children of each sort a preview names; the
// rest are counted ("and 4 more"), so a parent of a hundred subagents
// keeps a hover of a few lines.
const maxRelatedNames = 3

// UnknownSession says that id names no session of the index.
func UnknownSession(id string, markdown bool) string {
	return fmt.Sprintf("Unknown session %s: it is not in the session index.", InlineCode(id, markdown))
}

// Session is what a preview of one listed session shows: its entry, its
// relations in the snapshot that lists it, and what dsh/prepare would
// recall from it now.
type Session struct {
	Entry    dshlog.Entry
	Snapshot *titles.Snapshot
	// Preview is prepare.PreviewSession's answer; PreviewErr its error,
	// when it could not be computed at all.
	Preview    *prepare.Preview
	PreviewErr error
	// Now is the time ages are counted from.
	Now time.Time
}

// Text renders the preview for a person: the session's title, one line of
// what it is (id, working directory, age, log format), its relations, one
// line of what dsh/prepare would recall from it now, then a short excerpt.
func (s Session) Text(markdown bool) string {
	entry := &s.Entry
	var b strings.Builder
	title := entry.DisplayTitle()
	// A paragraph per part; Markdown needs a blank line between them,
	// plain text reads better without.
	sep := "\n"
	if markdown {
		fmt.Fprintf(&b, "**%s**", Escape(title))
		sep = "\n\n"
	} else {
		b.WriteString(title)
	}
	if label := entry.Label(); label != title {
		fmt.Fprintf(&b, "%stitled %s", sep, InlineCode(label, markdown))
	}
	about := []string{InlineCode(entry.ID, markdown)}
	switch {
	case entry.WorkDir != "" && entry.HasCwd && entry.WorkDir != entry.Cwd:
		// dsh 0.2.1 moves a session with working-directory/change; the
		// header keeps the directory it started in.
		about = append(about, "started in "+InlineCode(entry.Cwd, markdown)+", now in "+InlineCode(entry.WorkDir, markdown))
	case entry.WorkDir != "" && !entry.HasCwd:
		about = append(about, "now in "+InlineCode(entry.WorkDir, markdown))
	case entry.HasCwd:
		about = append(about, "in "+InlineCode(entry.Cwd, markdown))
	default:
		about = append(about, "no working directory")
	}
	about = append(about,
		fmt.Sprintf("created %s (%s)", time.UnixMilli(entry.CreatedAt).UTC().Format("2006-01-02 15:04 UTC"), Age(s.Now, entry.CreatedAt)))
	if entry.LastEventAt > 0 {
		about = append(about, "last active "+Age(s.Now, entry.LastEventAt))
	}
	about = append(about,
		fmt.Sprintf("log format v%d", entry.FormatVersion))
	b.WriteString(sep + strings.Join(about, " · "))
	for _, l := range relationLines(s.Snapshot, entry, markdown) {
		b.WriteString(sep + l)
	}

	p := s.Preview
	switch {
	case s.PreviewErr != nil:
		b.WriteString(sep + "Cannot be recalled now: " + ErrorText(s.PreviewErr))
		return b.String() + "\n"
	case p.Err != nil:
		b.WriteString(sep + "Cannot be recalled now: " + ErrorText(p.Err))
	}
	b.WriteString(sep + recallLine(p))
	if len(p.Excerpt) == 0 {
		return b.String() + "\n"
	}
	var ex strings.Builder
	for _, t := range p.Excerpt {
		fmt.Fprintf(&ex, "%s: %s\n", t.Role, Shorten(t.Text, excerptTurnRunes))
	}
	if markdown {
		fence := Fence(ex.String())
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
		parts = append(parts, fmt.Sprintf("all %s kept", Plural(st.OriginalMessages, "message", "messages")))
	} else {
		parts = append(parts, fmt.Sprintf("%d of %s kept", st.RetainedMessages, Plural(st.OriginalMessages, "message", "messages")))
	}
	if st.OmittedBytes > 0 {
		parts = append(parts, Bytes(int64(st.OmittedBytes))+" left out")
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
		parts = append(parts, Plural(*p.Redactions, "secret", "secrets")+" redacted")
	}
	parts = append(parts, "budget "+Bytes(int64(p.Budget)))
	return strings.Join(parts, " · ")
}

// relationLines say how a session is related to others, one line each:
// its parent ("child of …" for a subagent, "forked from …" for a fork,
// with the parent's URI), its subagent children and its forks (the first
// few named), and, for a kind completion hides, how to list it. Empty for a
// session with none of these.
func relationLines(snap *titles.Snapshot, e *dshlog.Entry, markdown bool) []string {
	var lines []string
	if e.ParentSession != "" {
		how := "forked from"
		if e.IsSubagent() {
			how = "child of"
		}
		uri := InlineCode(sessionref.EncodeURI(e.ParentSession), markdown)
		if p, ok := snap.Locate(e.ParentSession); ok {
			lines = append(lines, fmt.Sprintf("%s %s (%s)", how, Title(p.DisplayTitle(), markdown), uri))
		} else {
			lines = append(lines, fmt.Sprintf("%s session %s, which is not in the session index (%s)", how, InlineCode(e.ParentSession, markdown), uri))
		}
	}
	c := snap.ChildrenOf(e.ID, maxRelatedNames)
	if c.SubagentCount > 0 {
		lines = append(lines, Plural(c.SubagentCount, "subagent child", "subagent children")+": "+namesText(c.Subagents, c.SubagentCount, markdown))
	}
	if c.ForkCount > 0 {
		lines = append(lines, Plural(c.ForkCount, "fork", "forks")+": "+namesText(c.Forks, c.ForkCount, markdown))
	}
	if k := e.Kind(); k.Hidden() {
		lines = append(lines, fmt.Sprintf("%s: not listed at @ unless you type %s", k, InlineCode("@"+completion.SwitchAll.String(), markdown)))
	}
	return lines
}

// namesText lists the display titles of the first few of total sessions:
// "A, B and C", "A, B, C and 2 more".
func namesText(first []dshlog.Entry, total int, markdown bool) string {
	names := make([]string, len(first))
	for i := range first {
		names[i] = Title(first[i].DisplayTitle(), markdown)
	}
	if more := total - len(first); more > 0 {
		return strings.Join(names, ", ") + fmt.Sprintf(" and %d more", more)
	}
	if len(names) == 1 {
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}
