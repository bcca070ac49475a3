package main

import (
	"bufio"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"runtime/metrics"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/klauspost/compress/s2"

	"github.com/dsh-refls/dsh-refls/internal/cputime"
	"github.com/dsh-refls/dsh-refls/sessionref/dshlog"
	"github.com/dsh-refls/dsh-refls/sessionref/recall"
	"github.com/dsh-refls/dsh-refls/sessionref/titles"
)

// fts5Script is the SQLite side of the comparison, run by python3: its
// sqlite3 module links the system's SQLite (Debian's libsqlite3, whose
// FTS5 the sqlite3 CLI has too).
//
//go:embed fts5.py
var fts5Script string

// fts5Check fails when Python's SQLite has no FTS5 or no trigram
// tokenizer (SQLite 3.34 and later).
const fts5Check = `import sqlite3; sqlite3.connect(":memory:").execute("create virtual table t using fts5(x, tokenize='trigram')")`

// ftsTable is one FTS5 table of the comparison: the same rows, one per
// message, under another tokenizer.
type ftsTable struct {
	name, tokenize string
	// snippet is snippet()'s token count: about the 160 characters of a
	// dsh-refls excerpt (24 words; a trigram token is one character, and
	// 64 is snippet()'s most).
	snippet int
	// substrings: the table answers a piece of a word (trigram does,
	// unicode61 matches whole words only).
	substrings bool
}

// ftsOrders are the two orders FTS5 answers in: the best 20 by bm25,
// the ranking FTS5 is used for, and the first 20 in rowid order, which
// is the newest sessions' messages first (they were staged in that
// order): the order dsh-refls answers in, which lets FTS5 stop early.
var ftsOrders = [...]string{rank: "rank", newest: "rowid"}

const (
	rank = iota
	newest
)

var ftsTables = []ftsTable{
	{name: "unicode61", tokenize: "unicode61", snippet: 24},
	{name: "trigram", tokenize: "trigram", snippet: 64, substrings: true},
}

// queryClass is one kind of query asked of both sides.
type queryClass struct {
	name  string
	terms []string
	// phrase: each term is two words, quoted on both sides.
	phrase bool
	// substring: pieces of words, which unicode61 does not answer.
	substring bool
}

// recallText is term as a dsh/search query.
func (q queryClass) recallText(term string) string {
	if q.phrase {
		return `"` + term + `"`
	}
	return term
}

// ftsMatch is term as an FTS5 MATCH expression: one quoted string, a
// phrase of its tokens (for trigram, the substring as written).
func ftsMatch(term string) string { return `"` + strings.ReplaceAll(term, `"`, `""`) + `"` }

// Picks from the typed queries of the recall benchmark.
const (
	// minWordRunes: shorter words (a, to, of) are left out.
	minWordRunes = 3
	// substringFrom: substrings start at a word's second character, so
	// that none is a prefix; they are taken from words of at least
	// substringWordRunes characters, substringRunes long.
	substringFrom      = 1
	substringWordRunes = 6
)

// substringRunes are the lengths of the substrings taken.
var substringRunes = []int{3, 5}

// issueWord and issuePhrase are the examples of issue 31's table: one
// common word and a phrase of two common words of dshgen's text.
const (
	issueWord   = "session"
	issuePhrase = "session poll"
)

// fts5Classes derives the words, phrases and substrings from the windows
// of text the recall benchmark types (pickQueries, misses left out): the
// whole words of each window (its last, possibly cut, left out), each pair
// of adjacent words written with one space between them, and pieces from
// inside the longer words.
func fts5Classes(windows []string) []queryClass {
	words := queryClass{name: "words", terms: []string{issueWord}}
	phrases := queryClass{name: "phrases", terms: []string{issuePhrase}, phrase: true}
	subs := queryClass{name: "substrings", substring: true}
	seen := map[string]bool{issueWord: true, issuePhrase: true}
	add := func(c *queryClass, t string) {
		if !seen[t] {
			seen[t] = true
			c.terms = append(c.terms, t)
		}
	}
	for _, w := range windows {
		f := strings.FieldsFunc(strings.ToLower(w), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
		if len(f) > 0 {
			f = f[:len(f)-1]
		}
		for i, word := range f {
			r := []rune(word)
			if len(r) >= minWordRunes {
				add(&words, word)
			}
			if i > 0 && utf8.RuneCountInString(f[i-1]) >= minWordRunes && len(r) >= minWordRunes &&
				strings.Contains(strings.ToLower(w), f[i-1]+" "+word) {
				add(&phrases, f[i-1]+" "+word)
			}
			if len(r) >= substringWordRunes {
				for _, n := range substringRunes {
					if substringFrom+n <= len(r) {
						add(&subs, string(r[substringFrom:substringFrom+n]))
					}
				}
			}
		}
	}
	return []queryClass{words, phrases, subs}
}

// timings are one side's answers to one class of queries.
type timings struct {
	wall, cpu []time.Duration
	// term is the index of each sample's term in its class.
	term []int
	// rows: sessions (dsh-refls) or messages (FTS5) answered; excerpts:
	// the excerpts cut for them.
	rows, excerpts int
	// slowest is dsh-refls's sample of the most CPU time, with what it
	// used beside its CPU time: what makes a p99 of 50 samples.
	slowest slowSample
}

// slowSample is one search of dsh-refls and what the process used while
// it ran: its CPU time split into user and system time, page faults, and
// the collections of the Go heap that ran during it (their marking, on
// any thread, counts in the process's CPU time).
type slowSample struct {
	term        string
	round       int
	usage       cputime.Usage
	collections uint64
}

func (s slowSample) String() string {
	if s.term == "" {
		return "none"
	}
	return fmt.Sprintf("`%s` in round %d: %s ms CPU (user %s, system %s), %d page faults, %d collections",
		s.term, s.round, ms(s.usage.CPU()), ms(s.usage.User), ms(s.usage.System), s.usage.MinorFaults+s.usage.MajorFaults, s.collections)
}

// collections is the number of collections of the Go heap finished so far.
func collections() uint64 {
	s := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

func (t *timings) add(wall, cpu time.Duration, term int) {
	t.wall = append(t.wall, wall)
	t.cpu = append(t.cpu, cpu)
	t.term = append(t.term, term)
}

// of is the samples of the term-th term alone.
func (t *timings) of(term int) timings {
	var o timings
	for i, k := range t.term {
		if k == term {
			o.add(t.wall[i], t.cpu[i], k)
		}
	}
	return o
}

// python is the FTS5 side, spoken to one JSON line each way.
type python struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
}

func startPython(script string) (*python, error) {
	cmd := exec.Command("python3", script)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting python3: %w", err)
	}
	return &python{cmd: cmd, in: in, out: bufio.NewReader(out)}, nil
}

// ask sends req and decodes the answer into into, waiting at most within
// for it; what names the request in the error.
func (p *python) ask(what string, req map[string]any, into any, within time.Duration) error {
	b, err := json.Marshal(req)
	if err != nil {
		return err
	}
	if _, err := p.in.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("asking the FTS5 side for %s: %w", what, err)
	}
	type line struct {
		b   []byte
		err error
	}
	got := make(chan line, 1)
	go func() {
		b, err := p.out.ReadBytes('\n')
		got <- line{b, err}
	}()
	var l line
	select {
	case l = <-got:
	case <-time.After(within):
		_ = p.cmd.Process.Kill()
		return fmt.Errorf("the FTS5 side gave no answer to %s within %v", what, within)
	}
	if l.err != nil {
		return fmt.Errorf("the FTS5 side's answer to %s: %w", what, l.err)
	}
	var e struct {
		Error string `json:"error"`
	}
	if json.Unmarshal(l.b, &e) == nil && e.Error != "" {
		return fmt.Errorf("the FTS5 side: %s", e.Error)
	}
	if err := json.Unmarshal(l.b, into); err != nil {
		return fmt.Errorf("the FTS5 side's answer to %s: %w", what, err)
	}
	return nil
}

// stop asks the FTS5 side to quit and waits 30 s at most for it to exit.
func (p *python) stop() {
	_, _ = p.in.Write([]byte(`{"cmd":"quit"}` + "\n"))
	p.in.Close()
	done := make(chan struct{})
	go func() {
		_ = p.cmd.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		fmt.Println("  the FTS5 side did not exit within 30 s of quit; killed")
		_ = p.cmd.Process.Kill()
		<-done
	}
}

// exportRows writes one JSON line [session, seq, role, text] per
// projected message of every listed session (dshlog.ReadProjection,
// as the recall index reads them) and returns the text's bytes.
func exportRows(ctx context.Context, snap *titles.Snapshot, path string) (textBytes int64, messages, failed int, err error) {
	f, err := os.Create(path)
	if err != nil {
		return 0, 0, 0, err
	}
	defer f.Close()
	w := bufio.NewWriterSize(f, 1<<20)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for _, e := range snap.Sessions {
		p, err := dshlog.ReadProjection(ctx, e)
		if err != nil {
			failed++
			continue
		}
		for _, m := range p.Messages {
			if err := enc.Encode([]any{e.ID, m.Seq, m.Role, m.Text}); err != nil {
				return 0, 0, 0, err
			}
			textBytes += int64(len(m.Text))
			messages++
		}
	}
	if err := w.Flush(); err != nil {
		return 0, 0, 0, err
	}
	return textBytes, messages, failed, f.Close()
}

// projectOnly reads and projects every listed log with workers
// goroutines, each through its own reused buffers as the recall index's
// build does, and nothing else: the least a build must spend. With
// compress, each session's text is also compressed as the index stores
// it (S2's fast mode in pieces of s2Piece bytes), and nothing more: the
// least a build that keeps the text compressed on disk must spend.
func projectOnly(ctx context.Context, snap *titles.Snapshot, workers int, compress bool) (cpu, wall time.Duration) {
	next := make(chan int)
	var wg sync.WaitGroup
	c0, t0 := cputime.Process(), time.Now()
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var r dshlog.ProjectionReader
			var z s2Pieces
			for i := range next {
				p, _, _ := r.ReadFrom(ctx, snap.Sessions[i], nil)
				if compress && p != nil {
					for _, m := range p.Messages {
						z.write(m.Text)
					}
					z.flush()
				}
			}
		}()
	}
	for i := range snap.Sessions {
		next <- i
	}
	close(next)
	wg.Wait()
	return cputime.Process() - c0, time.Since(t0)
}

// s2Piece is the most bytes of text the recall index compresses as one S2
// block (chunkMax in sessionref/recall/blocks.go).
const s2Piece = 16<<10 - 64

// s2Pieces compresses text written to it in pieces of s2Piece bytes, as
// the recall index's blocks are, and keeps nothing but its buffers.
type s2Pieces struct {
	piece, out []byte
}

// write adds text to the piece being filled, compressing each full one.
func (z *s2Pieces) write(text string) {
	for len(text) > 0 {
		k := min(s2Piece-len(z.piece), len(text))
		z.piece = append(z.piece, text[:k]...)
		text = text[k:]
		if len(z.piece) == s2Piece {
			z.flush()
		}
	}
}

// flush compresses the piece being filled, if any.
func (z *s2Pieces) flush() {
	if len(z.piece) == 0 {
		return
	}
	z.out = s2.Encode(z.out[:cap(z.out)], z.piece)
	z.piece = z.piece[:0]
}

// dirBytes is the size of the files under dir.
func dirBytes(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}

func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	return strings.Join(f[:min(3, len(f))], " ")
}

// runFTS5 builds the recall index in process and FTS5 unicode61 and
// trigram tables of the same projected text, one row per message, and
// prints their build CPU, size on disk and query latency and CPU side by
// side, as ratios, in one run. Both sides are measured in process, with
// no pipe: the recall index's Search in this process, SQLite inside one
// python3 process; their query rounds alternate, after one untimed round.
func runFTS5(ctx context.Context, c config, workers, rounds int) error {
	if _, err := exec.LookPath("python3"); err != nil {
		fmt.Println("fts5: skipped: python3 is not installed, so SQLite FTS5 was not measured (scripts/bench-recall.sh installs it with apt)")
		return nil
	}
	if out, err := exec.Command("python3", "-c", fts5Check).CombinedOutput(); err != nil {
		fmt.Printf("fts5: skipped: Python's SQLite has no FTS5 trigram tokenizer (SQLite 3.34 or later is needed): %s\n", strings.TrimSpace(string(out)))
		return nil
	}
	if err := ensureStore(ctx, c); err != nil {
		return err
	}
	load0, start := loadAvg(), time.Now()
	title := titles.NewIndex(c.root, titles.IndexOptions{})
	if err := title.Build(ctx, nil); err != nil {
		return fmt.Errorf("title index: %w", err)
	}
	snap := title.Snapshot()
	typed := pickQueries(ctx, snap, c.queries, 7)
	classes := fts5Classes(typed[:len(typed)-len(misses)])

	tmp, err := os.MkdirTemp("", "benchrecall-fts5-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	rowsPath := filepath.Join(tmp, "rows.jsonl")
	text, messages, failed, err := exportRows(ctx, snap, rowsPath)
	if err != nil {
		return fmt.Errorf("writing the rows: %w", err)
	}
	gib := float64(text) / (1 << 30)
	perGiB := func(d time.Duration) float64 { return d.Seconds() / gib }
	fmt.Printf("store %s: %d sessions (%d unreadable), %d messages, %.1f MB projected text; load %s\n",
		c.root, len(snap.Sessions), failed, messages, float64(text)/1e6, load0)

	// The server builds at GOGC 25 (server/gcpercent.go): so do both.
	old := debug.SetGCPercent(25)
	projCPU, projWall := projectOnly(ctx, snap, workers, false)
	squeezeCPU, _ := projectOnly(ctx, snap, workers, true)
	dir := filepath.Join(tmp, "recall")
	if err := os.Mkdir(dir, 0o700); err != nil {
		return err
	}
	ix := recall.New(recall.Options{Path: filepath.Join(dir, "recall.idx"), Parallelism: workers})
	defer ix.Close()
	// Built and saved, as FTS5's build is committed.
	c0, t0 := cputime.Process(), time.Now()
	err = ix.Sync(ctx, snap)
	if err == nil {
		err = ix.Save(filepath.Join(dir, "recall.idx"), c.root)
	}
	recallCPU, recallWall := cputime.Process()-c0, time.Since(t0)
	debug.SetGCPercent(old)
	if err != nil {
		return fmt.Errorf("recall build: %w", err)
	}
	recallDisk := dirBytes(dir)
	st := ix.Stats()
	if st.TextBytes != text {
		fmt.Printf("  note: the recall index counts %d bytes of text, the rows %d\n", st.TextBytes, text)
	}

	script := filepath.Join(tmp, "fts5.py")
	if err := os.WriteFile(script, []byte(fts5Script), 0o600); err != nil {
		return err
	}
	py, err := startPython(script)
	if err != nil {
		return err
	}
	defer py.stop()
	var stage struct {
		SQLite, Python    string
		Rows              int
		TextBytes         int64
		ReadCPU, ReadWall time.Duration
	}
	if err := py.ask("staging the rows", map[string]any{"cmd": "stage", "rows": rowsPath, "dir": tmp}, &stage, 30*time.Minute); err != nil {
		return err
	}
	_ = os.Remove(rowsPath)
	type built struct {
		BuildCPU, BuildWall, OptimizeCPU, OptimizeWall time.Duration
		FileBytes, FreeBytes                           int64
		Schema                                         string
	}
	fts := make([]built, len(ftsTables))
	for i, t := range ftsTables {
		if err := py.ask("building "+t.name, map[string]any{"cmd": "build", "name": t.name, "tokenize": t.tokenize, "dir": tmp}, &fts[i], 60*time.Minute); err != nil {
			return err
		}
	}

	// Query rounds: round 0 warms both sides and is not timed.
	recallT := make([]timings, len(classes))
	// ftsT[o][i][k]: FTS5's answers in order o, on table i, to class k.
	var ftsT [len(ftsOrders)][][]timings
	for o := range ftsT {
		ftsT[o] = make([][]timings, len(ftsTables))
		for i := range ftsT[o] {
			ftsT[o][i] = make([]timings, len(classes))
		}
	}
	var sql [len(ftsOrders)][]string
	for o := range sql {
		sql[o] = make([]string, len(ftsTables))
	}
	for round := 0; round <= rounds; round++ {
		for k, cl := range classes {
			for j, term := range cl.terms {
				g0, u0, t0 := collections(), cputime.ProcessUsage(), time.Now()
				res, err := ix.Search(ctx, recall.Query{Text: cl.recallText(term), Limit: c.limit})
				wall, used, gcs := time.Since(t0), cputime.ProcessUsage().Sub(u0), collections()-g0
				cpu := used.CPU()
				if err != nil {
					return fmt.Errorf("recall search %q: %w", term, err)
				}
				if round > 0 {
					if cpu > recallT[k].slowest.usage.CPU() {
						recallT[k].slowest = slowSample{term: cl.recallText(term), round: round, usage: used, collections: gcs}
					}
					recallT[k].add(wall, cpu, j)
					recallT[k].rows += len(res)
					for _, r := range res {
						recallT[k].excerpts += len(r.Matches)
					}
				}
			}
		}
		for o, order := range ftsOrders {
			for i, t := range ftsTables {
				for k, cl := range classes {
					if cl.substring && !t.substrings {
						continue
					}
					var ans struct {
						Wall, CPU []time.Duration
						Rows      []int
						SQL       string
					}
					matches := make([]string, len(cl.terms))
					for j, term := range cl.terms {
						matches[j] = ftsMatch(term)
					}
					if err := py.ask(fmt.Sprintf("round %d of %s on %s by %s", round, cl.name, t.name, order),
						map[string]any{"cmd": "queries", "name": t.name, "snippet": t.snippet, "order": order, "matches": matches}, &ans, 30*time.Minute); err != nil {
						return err
					}
					sql[o][i] = ans.SQL
					if round > 0 {
						ft := &ftsT[o][i][k]
						for j := range ans.Wall {
							ft.add(ans.Wall[j], ans.CPU[j], j)
							ft.rows += ans.Rows[j]
							ft.excerpts += ans.Rows[j]
						}
					}
				}
			}
		}
	}
	load1 := loadAvg()

	fmt.Printf("SQLite %s (Python %s's sqlite3 module), %d rows staged; took %v, load %s → %s\n",
		stage.SQLite, stage.Python, stage.Rows, time.Since(start).Round(time.Second), load0, load1)
	for i, t := range ftsTables {
		fmt.Printf("  %s: %s;\n", t.name, fts[i].Schema)
		for o := range ftsOrders {
			fmt.Printf("    %s\n", sql[o][i])
		}
	}
	fmt.Printf("  dsh-refls: recall.Index Sync and Save (%d workers, GOGC 25), then Search, limit %d, in this process\n", workers, c.limit)
	fmt.Println()
	fmt.Printf("| %s sessions, %.0f MB projected | dsh-refls recall index | FTS5 unicode61 | FTS5 trigram |\n", commas(len(snap.Sessions)), float64(text)/1e6)
	fmt.Println("|---|---|---|---|")
	row := func(label, ours string, theirs ...string) {
		fmt.Printf("| %s | %s | %s |\n", label, ours, strings.Join(theirs, " | "))
	}
	buildCells := make([]string, len(ftsTables))
	optCells := make([]string, len(ftsTables))
	wallCells := make([]string, len(ftsTables))
	diskCells := make([]string, len(ftsTables))
	for i, f := range fts {
		buildCells[i] = fmt.Sprintf("%.1f = %s", perGiB(f.BuildCPU), times(perGiB(f.BuildCPU), perGiB(recallCPU)))
		optCells[i] = fmt.Sprintf("%.1f", perGiB(f.OptimizeCPU))
		wallCells[i] = fmt.Sprintf("%.2f s + %.2f s", f.BuildWall.Seconds(), f.OptimizeWall.Seconds())
		share := float64(f.FileBytes) / float64(text)
		diskCells[i] = fmt.Sprintf("%.2f = %s", share, times(share, float64(recallDisk)/float64(text)))
		if f.FreeBytes > 0 {
			diskCells[i] += fmt.Sprintf(" (%.0f%% free pages)", 100*float64(f.FreeBytes)/float64(f.FileBytes))
		}
	}
	row("first build, CPU-s per GiB of projected text (ratio to dsh-refls)",
		fmt.Sprintf("%.1f = %s projection, reading and projecting the logs included (alone: %.1f; with S2 compression of the text alone: %.1f = %s)",
			perGiB(recallCPU), times(perGiB(recallCPU), perGiB(projCPU)), perGiB(projCPU), perGiB(squeezeCPU), times(perGiB(squeezeCPU), perGiB(projCPU))), buildCells...)
	row("`optimize`, CPU-s per GiB", "—", optCells...)
	row("first build wall (+ optimize)", fmt.Sprintf("%.2f s on %d workers (projection alone %.2f s)", recallWall.Seconds(), workers, projWall.Seconds()), wallCells...)
	row("on disk ÷ projected text", fmt.Sprintf("%.2f", float64(recallDisk)/float64(text)), diskCells...)
	cpuOf := func(t timings) []time.Duration { return t.cpu }
	wallOf := func(t timings) []time.Duration { return t.wall }
	for k, cl := range classes {
		n := len(recallT[k].wall)
		for _, r := range []struct {
			what string
			o    int
			pick func(timings) []time.Duration
		}{{"ranked by bm25, wall", rank, wallOf}, {"ranked by bm25, CPU", rank, cpuOf}, {"newest first, CPU", newest, cpuOf}} {
			ours := r.pick(recallT[k])
			cells := make([]string, len(ftsTables))
			for i, t := range ftsTables {
				if cl.substring && !t.substrings {
					cells[i] = "— (whole words only)"
					continue
				}
				theirs := r.pick(ftsT[r.o][i][k])
				cells[i] = fmt.Sprintf("%s / %s ms = %s / %s", ms(pct(theirs, 50)), ms(pct(theirs, 99)),
					times(float64(pct(theirs, 50)), float64(pct(ours, 50))), times(float64(pct(theirs, 99)), float64(pct(ours, 99))))
			}
			row(fmt.Sprintf("%s (%d × %d), FTS5 %s p50 / p99", cl.name, len(cl.terms), rounds, r.what),
				fmt.Sprintf("%s / %s ms", ms(pct(ours, 50)), ms(pct(ours, 99))), cells...)
		}
		cells := make([]string, len(ftsTables))
		for i, t := range ftsTables {
			cells[i] = "—"
			if !cl.substring || t.substrings {
				cells[i] = fmt.Sprintf("%.1f messages", float64(ftsT[rank][i][k].rows)/float64(max(n, 1)))
			}
		}
		row(fmt.Sprintf("%s: answered per query", cl.name), fmt.Sprintf("%.1f sessions, %.1f excerpts",
			float64(recallT[k].rows)/float64(max(n, 1)), float64(recallT[k].excerpts)/float64(max(n, 1))), cells...)
	}
	// Issue 31's two examples, each the first term of its class.
	for k, cl := range classes[:2] {
		ours := recallT[k].of(0)
		cells := make([]string, len(ftsTables))
		for i := range ftsTables {
			ranked, newer := ftsT[rank][i][k].of(0), ftsT[newest][i][k].of(0)
			cells[i] = fmt.Sprintf("%s / %s ms = %s / %s", ms(pct(ranked.cpu, 50)), ms(pct(newer.cpu, 50)),
				times(float64(pct(ranked.cpu, 50)), float64(pct(ours.cpu, 50))), times(float64(pct(newer.cpu, 50)), float64(pct(ours.cpu, 50))))
		}
		row(fmt.Sprintf("%s `%s` (issue 31's example), CPU p50: dsh-refls; FTS5 ranked / newest first", cl.name[:len(cl.name)-1], cl.recallText(cl.terms[0])),
			fmt.Sprintf("%s ms", ms(pct(ours.cpu, 50))), cells...)
	}
	fmt.Println()
	fmt.Println("dsh-refls's slowest search of each class (of 100 samples or fewer, the p99 is the slowest):")
	for k, cl := range classes {
		fmt.Printf("  %s: %s\n", cl.name, recallT[k].slowest)
	}
	fmt.Printf("FTS5's build reads rows already projected (staged in SQLite; reading them back alone: %.2f CPU-s per GiB); ratios are FTS5 ÷ dsh-refls.\n",
		perGiB(stage.ReadCPU))
	for _, cl := range classes {
		fmt.Printf("  %s: %s\n", cl.name, strings.Join(cl.terms, ", "))
	}
	return nil
}

// times is a ÷ b as a ratio.
func times(a, b float64) string {
	r := a / max(b, 1e-12)
	switch {
	case r >= 10:
		return fmt.Sprintf("%.0f×", r)
	case r >= 1:
		return fmt.Sprintf("%.1f×", r)
	default:
		return fmt.Sprintf("%.2f×", r)
	}
}

// ms is d in milliseconds, to three significant figures or so.
func ms(d time.Duration) string {
	v := float64(d) / 1e6
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	case v >= 1:
		return fmt.Sprintf("%.2f", v)
	default:
		return fmt.Sprintf("%.3f", v)
	}
}

// commas writes n with thousands separators.
func commas(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
