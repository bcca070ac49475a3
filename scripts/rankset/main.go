// Command rankset measures how well completion ranks what a person means
// (issue 30, item 1). It writes a store of dsh sessions and a workspace of
// its own (store.go, workspace.go: fixed content, so every run is the
// same), starts the real dsh-refls binary over stdio on them, and for each
// query of a labelled set (testdata/queries.json: the query, its category
// and the items a person expects first) types "@query" in an open document
// and asks textDocument/completion. The order is the server's sortText.
//
// Per query, the reciprocal rank is 1/position of the first expected item
// in the list (0 when none is listed) and hit@3 says one is among the
// first three. It prints the mean reciprocal rank (MRR), hit@1 and hit@3
// per category and overall, then the worst queries with what was listed
// instead.
//
// --base-bin runs a second binary on the same set in the same run and
// prints both and the difference (an A/B of a ranking change), then every
// query whose rank changed.
//
// --picks then replays a history of picks in each server and types the
// set again (picks.go): what frecency does for a person who references
// the same things again, and to the queries whose items were not picked.
//
//	go build -o /tmp/dsh-refls ./cmd/dsh-refls
//	go run ./scripts/rankset --bin /tmp/dsh-refls [--base-bin /tmp/dsh-refls-old] [--worst 20] [--all] [--keep DIR] [--picks]
package main

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"
	"unicode"

	"github.com/dsh-refls/dsh-refls/internal/dshgen"
	"github.com/dsh-refls/dsh-refls/internal/lsptest"
)

//go:embed testdata/queries.json
var defaultSet []byte

// categories are the kinds of query, in the order they are printed.
var categories = []string{"title", "id", "file", "shared", "body", "cjk", "typo"}

// query is one entry of the set.
type query struct {
	Query    string   `json:"query"`
	Category string   `json:"category"`
	Expect   []string `json:"expect"` // "session:<id>" or "file:<workspace path>"
	Wants    string   `json:"wants"`  // what the person means, in words
}

// querySet is the file.
type querySet struct {
	About   string  `json:"about"`
	Queries []query `json:"queries"`
}

// parseSet decodes a set and checks its shape: every query one word (a
// blank ends an @ token) with a known category and at least one expected
// item named as session:<id> or file:<path>, no query twice.
func parseSet(data []byte) (querySet, error) {
	var s querySet
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return s, fmt.Errorf("the set does not decode: %w", err)
	}
	var errs []error
	seen := map[string]bool{}
	for i, q := range s.Queries {
		where := fmt.Sprintf("query %d (%q)", i+1, q.Query)
		switch {
		case q.Query == "":
			errs = append(errs, fmt.Errorf("%s: empty", where))
		case strings.IndexFunc(q.Query, unicode.IsSpace) >= 0:
			errs = append(errs, fmt.Errorf("%s: holds a blank, which ends the @ token", where))
		case seen[q.Query]:
			errs = append(errs, fmt.Errorf("%s: listed twice", where))
		}
		seen[q.Query] = true
		known := false
		for _, c := range categories {
			known = known || c == q.Category
		}
		if !known {
			errs = append(errs, fmt.Errorf("%s: category %q is none of %v", where, q.Category, categories))
		}
		if len(q.Expect) == 0 {
			errs = append(errs, fmt.Errorf("%s: expects nothing", where))
		}
		for _, e := range q.Expect {
			if !strings.HasPrefix(e, "session:") && !strings.HasPrefix(e, "file:") {
				errs = append(errs, fmt.Errorf("%s: expected item %q is neither session:<id> nor file:<path>", where, e))
			}
		}
	}
	if len(s.Queries) == 0 {
		errs = append(errs, errors.New("the set holds no query"))
	}
	return s, errors.Join(errs...)
}

// checkSet reports every expected item the store or the workspace does
// not hold: a session id not written, a path not in the tree or not
// offered (ignored, excluded).
func checkSet(s querySet, facts map[string]dshgen.Expected) error {
	var errs []error
	for _, q := range s.Queries {
		for _, e := range q.Expect {
			if id, ok := strings.CutPrefix(e, "session:"); ok {
				if _, ok := facts[id]; !ok {
					errs = append(errs, fmt.Errorf("query %q expects session %s, which the store does not hold", q.Query, id))
				}
			} else if p, ok := strings.CutPrefix(e, "file:"); ok && !offered(strings.TrimSuffix(p, "/")) {
				errs = append(errs, fmt.Errorf("query %q expects %s, which the workspace does not offer", q.Query, p))
			}
		}
	}
	return errors.Join(errs...)
}

// item is one completion item: what it names, and its label as listed.
type item struct {
	key   string // session:<id> or file:<path>
	label string
}

// outcome is a query's result on one server.
type outcome struct {
	rank   int    // position of the first expected item, from 1; 0 when none is listed
	listed int    // items listed
	top    []item // the first three
}

// rr is the reciprocal rank.
func (o outcome) rr() float64 {
	if o.rank == 0 {
		return 0
	}
	return 1 / float64(o.rank)
}

// rankOf is the position (from 1) of the first of expect in items, 0 when
// none is there.
func rankOf(items []item, expect []string) int {
	for i, it := range items {
		for _, e := range expect {
			if it.key == strings.TrimSuffix(e, "/") {
				return i + 1
			}
		}
	}
	return 0
}

// completionItem is what is read of an item on the wire.
type completionItem struct {
	Label    string `json:"label"`
	SortText string `json:"sortText"`
	Data     struct {
		Kind      string `json:"kind"`
		SessionID string `json:"sessionId"`
		Path      string `json:"path"`
	} `json:"data"`
}

// ordered is the list in the order the client shows it: by sortText, ties
// in the order sent.
func ordered(list []completionItem) []item {
	sort.SliceStable(list, func(i, j int) bool { return list[i].SortText < list[j].SortText })
	out := make([]item, len(list))
	for i, it := range list {
		key := "?" + it.Label
		switch it.Data.Kind {
		case "session":
			key = "session:" + it.Data.SessionID
		case "file":
			key = "file:" + strings.TrimSuffix(it.Data.Path, "/")
		}
		out[i] = item{key: key, label: it.Label}
	}
	return out
}

// status is what is read of dsh/status.
type status struct {
	Building        bool `json:"building"`
	SessionsIndexed int  `json:"sessionsIndexed"`
	FilesIndexed    int  `json:"filesIndexed"`
	Recall          *struct {
		Sessions int `json:"sessions"`
		Pending  int `json:"pending"`
	} `json:"recall"`
}

// env is one written store and workspace.
type env struct {
	dir, root, ws string
	facts         map[string]dshgen.Expected
}

// prepare writes the store and the workspace under dir.
func prepare(dir string) (env, error) {
	e := env{dir: dir, root: filepath.Join(dir, "sessions"), ws: filepath.Join(dir, "ledger")}
	var err error
	if e.facts, err = writeStore(e.root); err != nil {
		return e, fmt.Errorf("writing the store: %w", err)
	}
	if err := writeWorkspace(e.ws); err != nil {
		return e, fmt.Errorf("writing the workspace: %w", err)
	}
	return e, nil
}

// measure starts bin on e, waits until its session, file and body indexes
// hold the whole store and workspace, and types every query of s. name
// keeps its cache and log apart from another binary's.
func measure(ctx context.Context, name, bin string, e env, s querySet, readyWithin time.Duration, picks *pickRun) ([]outcome, status, error) {
	var st status
	logPath := filepath.Join(e.dir, name+".log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, st, err
	}
	defer logFile.Close()
	cmd := exec.Command(bin, "--sessions-root", e.root, "--watch", "off")
	// A cache of its own: nothing stored by an earlier run or by the other
	// binary is read, so each run builds its indexes from the logs.
	cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+filepath.Join(e.dir, "cache-"+name))
	cmd.Stderr = logFile
	ed, err := lsptest.Start(cmd, lsptest.Config{
		RootURI: "file://" + filepath.ToSlash(e.ws),
		// The prompt is written in the ledger project, so its sessions
		// are this workspace's (the sessions' cwd is a fixed path).
		InitializationOptions: map[string]any{"cwd": projLedger},
		Capabilities: map[string]any{"textDocument": map[string]any{"completion": map[string]any{
			"completionItem": map[string]any{"labelDetailsSupport": true, "insertReplaceSupport": true}}}},
	})
	if err != nil {
		return nil, st, err
	}
	defer func() {
		_ = ed.Close()
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	}()
	fail := func(err error) ([]outcome, status, error) {
		return nil, st, fmt.Errorf("%s (%s): %w; its log: %s", name, bin, err, logPath)
	}
	if err := ed.Initialize(ctx, nil); err != nil {
		return fail(err)
	}
	deadline := time.Now().Add(readyWithin)
	for {
		if err := ed.Status(ctx, &st); err != nil {
			return fail(err)
		}
		if !st.Building && st.SessionsIndexed == len(e.facts) && st.FilesIndexed > 0 &&
			st.Recall != nil && st.Recall.Sessions == len(e.facts) && st.Recall.Pending == 0 {
			break
		}
		if !st.Building && st.SessionsIndexed > 0 && st.SessionsIndexed != len(e.facts) {
			return fail(fmt.Errorf("lists %d sessions of the %d written; status %+v", st.SessionsIndexed, len(e.facts), st))
		}
		if time.Now().After(deadline) {
			return fail(fmt.Errorf("waited %v for every session (%d) to be listed and searchable and the workspace indexed; last status %+v",
				readyWithin, len(e.facts), st))
		}
		time.Sleep(20 * time.Millisecond) // polling dsh/status, bounded by the deadline above
	}
	uri := "file://" + filepath.ToSlash(filepath.Join(e.ws, "prompt.md"))
	if _, err := ed.OpenFile(ctx, uri, "‸"); err != nil {
		return fail(err)
	}
	out, err := typeAll(ctx, ed, uri, s)
	if err != nil {
		return fail(err)
	}
	if picks != nil {
		if err := picks.replayAndType(ctx, ed, uri, s); err != nil {
			return fail(err)
		}
	}
	if err := ed.Shutdown(ctx); err != nil {
		return fail(err)
	}
	_ = ed.Close()
	select {
	case <-ed.Done():
	case <-ctx.Done():
		return fail(errors.New("the server did not close its output after exit"))
	}
	if err := cmd.Wait(); err != nil {
		return fail(fmt.Errorf("exit: %w", err))
	}
	return out, st, nil
}

// typeAll types every query of s after "Please read " in the document
// at uri and reads where the expected items are listed.
func typeAll(ctx context.Context, ed *lsptest.Editor, uri string, s querySet) ([]outcome, error) {
	out := make([]outcome, len(s.Queries))
	for i, q := range s.Queries {
		pos, err := ed.SetText(ctx, uri, "Please read @"+q.Query+lsptest.Cursor)
		if err != nil {
			return nil, err
		}
		var list struct {
			Items []completionItem `json:"items"`
		}
		if err := ed.Completion(ctx, uri, pos, &list); err != nil {
			return nil, fmt.Errorf("@%s: %w", q.Query, err)
		}
		items := ordered(list.Items)
		out[i] = outcome{rank: rankOf(items, q.Expect), listed: len(items), top: items[:min(3, len(items))]}
	}
	return out, nil
}

// figures are the means of one group of queries on one server.
type figures struct {
	n               int
	mrr, hit1, hit3 float64
}

// summarize is the figures of the queries of category ("" for all).
func summarize(s querySet, out []outcome, category string) figures {
	return summarizeWhere(out, len(s.Queries), func(i int) bool {
		return category == "" || s.Queries[i].Category == category
	})
}

// run is one whole measurement, printed to w; base may be "".
type config struct {
	bin, baseBin string
	set          querySet
	worst        int
	all          bool
	keep         string
	readyWithin  time.Duration
	// picks replays a history of picks after the set and types it again.
	picks bool
}

type runResult struct {
	outs  map[string][]outcome // by server name: "A" (--bin), "B" (--base-bin)
	env   env
	stats map[string]status
	// picks are the runs of --picks, by server name.
	picks map[string]*pickRun
}

func run(ctx context.Context, cfg config, w io.Writer) (runResult, error) {
	res := runResult{outs: map[string][]outcome{}, stats: map[string]status{}, picks: map[string]*pickRun{}}
	dir := cfg.keep
	if dir == "" {
		tmp, err := os.MkdirTemp("", "rankset-")
		if err != nil {
			return res, err
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return res, err
	}
	e, err := prepare(dir)
	if err != nil {
		return res, err
	}
	res.env = e
	if err := checkSet(cfg.set, e.facts); err != nil {
		return res, fmt.Errorf("the set is malformed:\n%w", err)
	}
	bins := []struct{ name, path string }{{"A", cfg.bin}}
	if cfg.baseBin != "" {
		bins = append(bins, struct{ name, path string }{"B", cfg.baseBin})
	}
	for _, b := range bins {
		var picks *pickRun
		if cfg.picks {
			picks = &pickRun{}
			res.picks[b.name] = picks
		}
		out, st, err := measure(ctx, b.name, b.path, e, cfg.set, cfg.readyWithin, picks)
		if err != nil {
			return res, err
		}
		res.outs[b.name], res.stats[b.name] = out, st
		fmt.Fprintf(w, "%s = %s: %d sessions listed and searchable, %d workspace files indexed\n", b.name, b.path, st.SessionsIndexed, st.FilesIndexed)
	}
	report(w, cfg, e, res.outs)
	if cfg.picks {
		reportPicks(w, cfg.set, res.outs, res.picks)
	}
	return res, nil
}

// report prints the figures, the worst queries of A and, with B, every
// query whose rank changed.
func report(w io.Writer, cfg config, e env, outs map[string][]outcome) {
	s := cfg.set
	a, b := outs["A"], outs["B"]
	fmt.Fprintf(w, "\n%d queries; reciprocal rank = 1/position of the first expected item (0 when not listed)\n", len(s.Queries))
	head := fmt.Sprintf("%-8s %4s  %-20s", "category", "n", "A: MRR  hit@1 hit@3")
	if b != nil {
		head += fmt.Sprintf("  %-20s  %-20s", "B: MRR  hit@1 hit@3", "A−B: MRR hit@1 hit@3")
	}
	fmt.Fprintln(w, head)
	for _, c := range append(append([]string{}, categories...), "") {
		fa := summarize(s, a, c)
		if fa.n == 0 {
			continue
		}
		name := c
		if c == "" {
			name = "overall"
		}
		line := fmt.Sprintf("%-8s %4d  %6.3f %5.2f %5.2f ", name, fa.n, fa.mrr, fa.hit1, fa.hit3)
		if b != nil {
			fb := summarize(s, b, c)
			line += fmt.Sprintf("   %6.3f %5.2f %5.2f    %+6.3f %+5.2f %+5.2f", fb.mrr, fb.hit1, fb.hit3, fa.mrr-fb.mrr, fa.hit1-fb.hit1, fa.hit3-fb.hit3)
		}
		fmt.Fprintln(w, line)
	}

	order := make([]int, len(s.Queries))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(x, y int) bool { return a[order[x]].rr() < a[order[y]].rr() })
	n := cfg.worst
	if cfg.all {
		n = len(order)
		fmt.Fprintf(w, "\nevery query, worst first (A):\n")
	} else {
		fmt.Fprintf(w, "\nthe %d worst queries (A):\n", n)
	}
	for _, i := range order[:min(n, len(order))] {
		q, o := s.Queries[i], a[i]
		if !cfg.all && o.rank == 1 {
			break
		}
		fmt.Fprintf(w, "  @%-16s %-6s %s; wants %s\n", q.Query, q.Category, where(o), q.Wants)
		for k, it := range o.top {
			fmt.Fprintf(w, "      %d. %s\n", k+1, describe(it, e))
		}
	}
	if b == nil {
		return
	}
	fmt.Fprintf(w, "\nqueries whose rank changed (A vs B):\n")
	changed := 0
	for _, i := range order {
		if a[i].rank == b[i].rank {
			continue
		}
		changed++
		fmt.Fprintf(w, "  @%-16s %-6s A %s, B %s\n", s.Queries[i].Query, s.Queries[i].Category, where(a[i]), where(b[i]))
		for _, side := range []struct {
			name string
			o    outcome
		}{{"A", a[i]}, {"B", b[i]}} {
			if len(side.o.top) > 0 && side.o.rank != 1 {
				fmt.Fprintf(w, "      %s lists first %s\n", side.name, describe(side.o.top[0], e))
			}
		}
	}
	if changed == 0 {
		fmt.Fprintln(w, "  none")
	}
}

// where says where the expected item was listed.
func where(o outcome) string {
	if o.rank == 0 {
		return fmt.Sprintf("not listed (%d items)", o.listed)
	}
	return fmt.Sprintf("#%d of %d", o.rank, o.listed)
}

// describe names a listed item for a reader: a session by its display
// title (and the text that matched, for a body match), a file by its path.
func describe(it item, e env) string {
	if id, ok := strings.CutPrefix(it.key, "session:"); ok {
		title := id
		if x, ok := e.facts[id]; ok {
			title = x.DisplayTitle
		}
		if strings.HasPrefix(it.label, "“") {
			return fmt.Sprintf("session %q by its text %s", title, it.label)
		}
		return fmt.Sprintf("session %q", title)
	}
	if p, ok := strings.CutPrefix(it.key, "file:"); ok {
		return p
	}
	return it.label
}

func main() {
	bin := flag.String("bin", "", "the dsh-refls binary to measure (A)")
	baseBin := flag.String("base-bin", "", "a second binary (B) measured on the same set in the same run")
	setPath := flag.String("set", "", "a query set (default: the built-in testdata/queries.json)")
	worst := flag.Int("worst", 20, "how many of the worst queries to print")
	all := flag.Bool("all", false, "print every query's rank")
	keep := flag.String("keep", "", "write the store, the workspace and the servers' logs here and keep them")
	readyWithin := flag.Duration("ready-within", 2*time.Minute, "how long a server may take to index the store and the workspace")
	picks := flag.Bool("picks", false, "then pick the expected item of every other query, as a person accepts it, and type the set again (frecency)")
	flag.Parse()
	if *bin == "" {
		fmt.Fprintln(os.Stderr, "rankset: --bin names the dsh-refls binary to measure (go build -o /tmp/dsh-refls ./cmd/dsh-refls)")
		os.Exit(2)
	}
	data := defaultSet
	if *setPath != "" {
		var err error
		if data, err = os.ReadFile(*setPath); err != nil {
			fmt.Fprintln(os.Stderr, "rankset:", err)
			os.Exit(2)
		}
	}
	s, err := parseSet(data)
	if err != nil {
		fmt.Fprintln(os.Stderr, "rankset:", err)
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), *readyWithin+10*time.Minute)
	defer cancel()
	cfg := config{bin: *bin, baseBin: *baseBin, set: s, worst: *worst, all: *all, keep: *keep, readyWithin: *readyWithin, picks: *picks}
	if _, err := run(ctx, cfg, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "rankset:", err)
		os.Exit(1)
	}
}
