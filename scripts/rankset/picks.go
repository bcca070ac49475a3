package main

// The --picks mode (issue 30 item 2, frecency): after the set is typed, a
// history of picks is replayed in the same server — for every other query
// of the set (even index), a person types it and accepts its first
// expected item where the list holds one, as an editor does: the item
// resolved (VS Code resolves the item it focuses), its edit applied to
// the document, then the command it resolved with run. Then the whole set
// is typed again. The set has no picks of its own, so this is the honest
// part of a simulation: the queries whose item was picked measure what
// frecency gives someone who references the same things again (through
// the same query, or another query naming the same item); the queries
// whose items were never picked measure what the picks of other items cost
// them. Every pick happens within the run, so all are equally recent.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/dsh-refls/dsh-refls/internal/lsptest"
)

// pickRun is the --picks part of one server's run.
type pickRun struct {
	history  []int           // the queries replayed as picks, by index
	picked   map[string]bool // the keys of the items picked
	replayed map[int]bool    // the history queries whose item was listed and picked
	commands int             // the picks that ran an item command (a server without frecency sends none)
	counted  int             // the picks the server counted (dsh/status), -1 when it does not say
	after    []outcome       // the set typed after the picks
}

// pickItem is what a pick reads of a completion item.
type pickItem struct {
	Label    string          `json:"label"`
	Data     json.RawMessage `json:"data"`
	TextEdit struct {
		NewText string         `json:"newText"`
		Range   *lsptest.Range `json:"range"`
		Replace *lsptest.Range `json:"replace"`
	} `json:"textEdit"`
	Command *pickCommand `json:"command"`
}

// pickCommand is an item's command.
type pickCommand struct {
	Command   string `json:"command"`
	Arguments []any  `json:"arguments"`
}

// replayAndType replays the history in the document at uri, then types
// the set again into pr.after.
func (pr *pickRun) replayAndType(ctx context.Context, ed *lsptest.Editor, uri string, s querySet) error {
	pr.picked, pr.replayed = map[string]bool{}, map[int]bool{}
	for i, q := range s.Queries {
		if i%2 != 0 {
			continue
		}
		pr.history = append(pr.history, i)
		pos, err := ed.SetText(ctx, uri, "Please read @"+q.Query+lsptest.Cursor)
		if err != nil {
			return err
		}
		var list struct {
			Items []json.RawMessage `json:"items"`
		}
		if err := ed.Completion(ctx, uri, pos, &list); err != nil {
			return fmt.Errorf("@%s: %w", q.Query, err)
		}
		plain := make([]completionItem, len(list.Items))
		for k, raw := range list.Items {
			if err := json.Unmarshal(raw, &plain[k]); err != nil {
				return err
			}
		}
		// ordered sorts stably by sortText; the raw items go along.
		idx := make([]int, len(plain))
		for k := range idx {
			idx[k] = k
		}
		sort.SliceStable(idx, func(a, b int) bool { return plain[idx[a]].SortText < plain[idx[b]].SortText })
		items := ordered(plain)
		at := rankOf(items, q.Expect)
		if at == 0 {
			continue // not listed: the person could not pick it here
		}
		var it pickItem
		if err := json.Unmarshal(list.Items[idx[at-1]], &it); err != nil {
			return err
		}
		if it.Command == nil {
			var r struct {
				Command *pickCommand `json:"command"`
			}
			if err := ed.Call(ctx, "completionItem/resolve", map[string]any{"label": it.Label, "data": it.Data}, &r); err != nil {
				return fmt.Errorf("@%s: resolving %q: %w", q.Query, it.Label, err)
			}
			it.Command = r.Command
		}
		rng := it.TextEdit.Replace
		if rng == nil {
			rng = it.TextEdit.Range
		}
		if rng == nil {
			return fmt.Errorf("@%s: the item %q has no edit", q.Query, it.Label)
		}
		if err := ed.EditFile(ctx, uri, lsptest.Edit{Range: *rng, Text: it.TextEdit.NewText}); err != nil {
			return err
		}
		if it.Command != nil {
			if err := ed.Call(ctx, "workspace/executeCommand", map[string]any{"command": it.Command.Command, "arguments": it.Command.Arguments}, nil); err != nil {
				return fmt.Errorf("@%s: running the command of %q: %w", q.Query, it.Label, err)
			}
			pr.commands++
		}
		// The person writes on: the document moves on with the mention.
		if err := ed.EditFile(ctx, uri, lsptest.Edit{Range: endOf(ed, uri), Text: " please."}); err != nil {
			return err
		}
		pr.picked[items[at-1].key] = true
		pr.replayed[i] = true
	}
	var st struct {
		Frecency *struct {
			Picks int `json:"picks"`
		} `json:"frecency"`
	}
	if err := ed.Status(ctx, &st); err != nil {
		return err
	}
	pr.counted = -1
	if st.Frecency != nil {
		pr.counted = st.Frecency.Picks
	}
	var err error
	pr.after, err = typeAll(ctx, ed, uri, s)
	return err
}

// endOf is the empty range at the end of the open document uri.
func endOf(ed *lsptest.Editor, uri string) lsptest.Range {
	text, _, _ := ed.Text(uri)
	end := lsptest.OffsetPosition(text, len(text), ed.Encoding())
	return lsptest.Range{Start: end, End: end}
}

// Groups of queries after a history of picks.
const (
	groupSame    = "picked by this query"
	groupOther   = "picked by another query"
	groupUnknown = "not picked"
)

// groupOf is the group of query i of s after pr's history.
func (pr *pickRun) groupOf(s querySet, i int) string {
	if pr.replayed[i] {
		return groupSame
	}
	for _, e := range s.Queries[i].Expect {
		if pr.picked[strings.TrimSuffix(e, "/")] {
			return groupOther
		}
	}
	return groupUnknown
}

// summarizeWhere is summarize over the queries for which in holds.
func summarizeWhere(out []outcome, n int, in func(i int) bool) figures {
	var f figures
	for i := range n {
		if !in(i) {
			continue
		}
		f.n++
		f.mrr += out[i].rr()
		if out[i].rank == 1 {
			f.hit1++
		}
		if out[i].rank >= 1 && out[i].rank <= 3 {
			f.hit3++
		}
	}
	if f.n > 0 {
		f.mrr /= float64(f.n)
		f.hit1 /= float64(f.n)
		f.hit3 /= float64(f.n)
	}
	return f
}

// reportPicks prints, for each server, the figures of each group of
// queries before and after its picks, by category, and the queries whose
// rank the picks changed.
func reportPicks(w io.Writer, s querySet, outs map[string][]outcome, picks map[string]*pickRun) {
	for _, name := range []string{"A", "B"} {
		pr, before := picks[name], outs[name]
		if pr == nil || before == nil {
			continue
		}
		counted := "it does not count picks"
		if pr.counted >= 0 {
			counted = fmt.Sprintf("it counted %d", pr.counted)
		}
		fmt.Fprintf(w, "\n%s after picks: of the %d queries of even index, %d listed their item and picked it (%d ran the item's command; %s), then the set again\n",
			name, len(pr.history), len(pr.replayed), pr.commands, counted)
		fmt.Fprintf(w, "%-8s %-24s %4s  %-20s  %-20s  %s\n", "category", "group", "n", "before: MRR hit@1 hit@3", "after: MRR hit@1 hit@3", "after−before: MRR hit@3")
		for _, c := range append(append([]string{}, categories...), "") {
			for _, g := range []string{groupSame, groupOther, groupUnknown, ""} {
				in := func(i int) bool {
					return (c == "" || s.Queries[i].Category == c) && (g == "" || pr.groupOf(s, i) == g)
				}
				fb := summarizeWhere(before, len(s.Queries), in)
				if fb.n == 0 || (c != "" && g == "") {
					continue
				}
				fa := summarizeWhere(pr.after, len(s.Queries), in)
				cat, grp := c, g
				if c == "" {
					cat = "overall"
				}
				if g == "" {
					grp = "all"
				}
				fmt.Fprintf(w, "%-8s %-24s %4d   %6.3f %5.2f %5.2f     %6.3f %5.2f %5.2f     %+6.3f %+5.2f\n",
					cat, grp, fb.n, fb.mrr, fb.hit1, fb.hit3, fa.mrr, fa.hit1, fa.hit3, fa.mrr-fb.mrr, fa.hit3-fb.hit3)
			}
		}
		fmt.Fprintf(w, "queries whose rank the picks changed (%s):\n", name)
		changed := 0
		for i, q := range s.Queries {
			if before[i].rank == pr.after[i].rank {
				continue
			}
			changed++
			fmt.Fprintf(w, "  @%-16s %-6s %-24s %s → %s\n", q.Query, q.Category, pr.groupOf(s, i), where(before[i]), where(pr.after[i]))
		}
		if changed == 0 {
			fmt.Fprintln(w, "  none")
		}
	}
}
