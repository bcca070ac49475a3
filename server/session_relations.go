package server

import (
	"fmt"
	"strings"

	"github.com/dsh-refls/dsh-refls/completion"
	"github.com/dsh-refls/dsh-refls/sessionref"
	"github.com/dsh-refls/dsh-refls/sessionref/dshlog"
	"github.com/dsh-refls/dsh-refls/sessionref/titles"
)

// maxRelatedNames is how many children of each sort a preview names; the
// rest are counted ("and 4 more"), so a parent of a hundred subagents
// keeps a hover of a few lines.
const maxRelatedNames = 3

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
		uri := quoteInline(sessionref.EncodeURI(e.ParentSession), markdown)
		if p, ok := snap.Locate(e.ParentSession); ok {
			lines = append(lines, fmt.Sprintf("%s %s (%s)", how, titleText(p.DisplayTitle(), markdown), uri))
		} else {
			lines = append(lines, fmt.Sprintf("%s session %s, which is not in the session index (%s)", how, quoteInline(e.ParentSession, markdown), uri))
		}
	}
	c := snap.ChildrenOf(e.ID, maxRelatedNames)
	if c.SubagentCount > 0 {
		lines = append(lines, plural(c.SubagentCount, "subagent child", "subagent children")+": "+namesText(c.Subagents, c.SubagentCount, markdown))
	}
	if c.ForkCount > 0 {
		lines = append(lines, plural(c.ForkCount, "fork", "forks")+": "+namesText(c.Forks, c.ForkCount, markdown))
	}
	if k := e.Kind(); k.Hidden() {
		lines = append(lines, fmt.Sprintf("%s: not listed at @ unless you type %s", k, quoteInline("@"+completion.SwitchAll.String(), markdown)))
	}
	return lines
}

// namesText lists the display titles of the first few of total sessions:
// "A, B and C", "A, B, C and 2 more".
func namesText(first []dshlog.Entry, total int, markdown bool) string {
	names := make([]string, len(first))
	for i := range first {
		names[i] = titleText(first[i].DisplayTitle(), markdown)
	}
	if more := total - len(first); more > 0 {
		return strings.Join(names, ", ") + fmt.Sprintf(" and %d more", more)
	}
	if len(names) == 1 {
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// titleText is a session title in a preview: bold and escaped in Markdown,
// on one line in plain text.
func titleText(title string, markdown bool) string {
	if markdown {
		return "**" + escapeMarkdown(title) + "**"
	}
	return oneLine(title)
}
