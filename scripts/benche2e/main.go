// Command benche2e measures completion end to end: the real dsh-refls
// binary over pipes, a sessions root and a workspace, queries typed one
// keystroke at a time (the first 20 characters of real titles). For each
// keystroke it times the round trip of dsh/candidates (the session half
// alone) and of textDocument/completion after a didChange (sessions and
// files in one list), and the same session query in process on a
// sessionref snapshot of the same root as the baseline, and prints p50/p99
// with their ratios to the baseline and to the bound (issue 15 items 1, 4).
//
// What a round trip includes: the clock starts before the first byte of
// the request is written and stops when the last byte of its answer frame
// has been read and the frame's envelope found to answer that id (a
// borrowed scan, nothing decoded). Everything the server does for the
// answer (decoding the request, the query, encoding the result, writing
// every byte) and reading those bytes is inside. Decoding the answer into
// values, which any client does next, is the client's work: it is timed
// apart, after the clock stops, and printed as "client decode".
//
// Besides latency, which on a shared machine is mostly scheduling, it
// prints the server's CPU time per request: the CPU of every server
// thread (/proc/<pid>/task/*/schedstat) from the start of one request to
// the start of the next one sent to that server, so work done after an
// answer was written (collection, bookkeeping) counts for the request
// that caused it. It prints the answer's size too: every byte is encoded,
// written and read.
//
// --base-bin runs a second binary (an older build) on the same root and
// sends each keystroke to both servers, alternating which goes first, so
// the two are measured in the same minute under the same load; every
// figure is printed for both, with the ratio new / base.
//
//	go build -o /tmp/dsh-refls ./cmd/dsh-refls
//	go run ./scripts/benche2e --bin /tmp/dsh-refls --sessions-root R --workspace W [--titles 50] [--base-bin /tmp/dsh-refls-old]
package main

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.lsp.dev/jsonrpc2"

	"github.com/dsh-refls/dsh-refls/internal/lsptest"
	"github.com/dsh-refls/dsh-refls/sessionref/titles"
)

// noMatchQuery matches no title, id or cwd of a generated store.
const noMatchQuery = "qqzx-no-such-session-jjv"

func main() {
	bin := flag.String("bin", "dsh-refls", "the dsh-refls binary")
	baseBin := flag.String("base-bin", "", "an older dsh-refls binary to measure beside --bin in the same run (A/B)")
	root := flag.String("sessions-root", "", "sessions root")
	ws := flag.String("workspace", "", "workspace (an empty directory for sessions only)")
	titles := flag.Int("titles", 50, "titles to type, 20 keystrokes each")
	floorCalls := flag.Int("floor-calls", 200, "dsh/candidates calls answered with no candidates, for the fixed cost of a round trip")
	sessionBound := flag.Duration("session-p99", time.Millisecond, "bound on the p99 of session-only queries")
	mixedBound := flag.Duration("mixed-p99", 10*time.Millisecond, "bound on the p99 of mixed completion")
	samplesTo := flag.String("samples", "", "write every timed request to this file, tab-separated: server, kind, query, sent (µs since the server started), round trip (µs), server CPU (µs)")
	recallSearch := flag.String("recall-search", "", `"on" or "off" sets the server's recallSearch (body search, issue 13); empty keeps its default`)
	flag.Parse()
	if *recallSearch != "" && *recallSearch != "on" && *recallSearch != "off" {
		fmt.Fprintf(os.Stderr, "benche2e: --recall-search is on, off or empty, got %q\n", *recallSearch)
		os.Exit(2)
	}
	cfg := config{bin: *bin, baseBin: *baseBin, root: *root, ws: *ws, titles: *titles, floorCalls: *floorCalls,
		sessionBound: *sessionBound, mixedBound: *mixedBound, recallSearch: *recallSearch, samples: *samplesTo}
	if err := run(cfg); err != nil {
		fmt.Fprintln(os.Stderr, "benche2e:", err)
		os.Exit(1)
	}
}

// config is the command line.
type config struct {
	bin, baseBin, root, ws string
	titles, floorCalls     int
	sessionBound           time.Duration
	mixedBound             time.Duration
	recallSearch           string
	samples                string // file for every sample, or ""
}

type conn struct {
	in  io.Writer
	out *bufio.Reader
}

func (c *conn) send(msg map[string]any) error {
	msg["jsonrpc"] = "2.0"
	body, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	_, err = c.in.Write(lsptest.Frame(body))
	return err
}

// awaitAnswer reads frames until the answer to id, and returns its body.
// Frames are classified by a borrowed scan, so the caller's clock stops
// with the last byte in and before anything is decoded.
func (c *conn) awaitAnswer(id int) ([]byte, error) {
	want := strconv.Itoa(id)
	for {
		body, err := lsptest.ReadFrameBody(c.out)
		if err != nil {
			return nil, err
		}
		v, err := jsonrpc2.ScanMessageView(body)
		if err != nil {
			return nil, fmt.Errorf("answer to %d: %w: %.200q", id, err, body)
		}
		if (v.Kind == jsonrpc2.MessageViewResponseResult || v.Kind == jsonrpc2.MessageViewResponseError) && string(v.IDRaw) == want {
			return body, nil
		}
	}
}

// answer is a decoded answer frame.
type answer struct {
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
}

// decode decodes an answer frame: the client's work after the round trip.
func decode(method string, body []byte) (json.RawMessage, error) {
	var a answer
	if err := json.Unmarshal(body, &a); err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	if len(a.Error) > 0 {
		return nil, fmt.Errorf("%s: %s", method, a.Error)
	}
	return a.Result, nil
}

func (c *conn) call(id int, method string, params any) (json.RawMessage, error) {
	if err := c.send(map[string]any{"id": id, "method": method, "params": params}); err != nil {
		return nil, err
	}
	body, err := c.awaitAnswer(id)
	if err != nil {
		return nil, err
	}
	return decode(method, body)
}

func pct(d []time.Duration, p float64) time.Duration {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	if len(s) == 0 {
		return 0
	}
	return s[min(len(s)-1, int(p*float64(len(s)-1)+0.5))]
}

func mean(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	var t time.Duration
	for _, x := range d {
		t += x
	}
	return t / time.Duration(len(d))
}

// Kinds of measured request.
const (
	kindCandidates = "dsh/candidates"
	kindCompletion = "didChange + completion"
	kindFloor      = "dsh/candidates, no match"
)

// samples are the figures of one kind of request on one server.
type samples struct {
	lat    []time.Duration // round trips
	cpu    []time.Duration // server CPU per request
	decode []time.Duration // client decode, after the clock
	at     []time.Duration // when each request was sent, since the server started
	query  []string        // each request's query
	bytes  int64           // answer bytes, all requests
	items  int64           // candidates or completion items, all requests
}

// server is one dsh-refls process under measurement.
type server struct {
	name    string
	cmd     *exec.Cmd
	c       *conn
	id      int
	uri     string
	version int
	// cpuOK says whether the server's CPU can be read; cpuKind and
	// cpuStart are the request being charged and the CPU at its start.
	cpuOK    bool
	cpuKind  string
	cpuStart time.Duration
	stats    map[string]*samples
	started  time.Time // when the process was started
}

// charge starts charging the server's CPU to a request of kind (none when
// kind is empty), ending the charge of the request before it.
func (s *server) charge(kind string) {
	if !s.cpuOK {
		return
	}
	now, ok := processCPU(s.cmd.Process.Pid)
	if !ok {
		s.cpuOK = false
		return
	}
	if s.cpuKind != "" {
		st := s.stats[s.cpuKind]
		st.cpu = append(st.cpu, now-s.cpuStart)
	}
	s.cpuKind, s.cpuStart = kind, now
}

// timedCall sends one request, times it to the last byte of its answer,
// then decodes the answer and counts its items (both after the clock).
func (s *server) timedCall(kind, q, method string, params any, started time.Time) error {
	s.id++
	if err := s.c.send(map[string]any{"id": s.id, "method": method, "params": params}); err != nil {
		return err
	}
	body, err := s.c.awaitAnswer(s.id)
	if err != nil {
		return err
	}
	st := s.stats[kind]
	st.lat = append(st.lat, time.Since(started))
	st.at = append(st.at, started.Sub(s.started))
	st.query = append(st.query, q)
	d0 := time.Now()
	result, err := decode(method, body)
	if err != nil {
		return err
	}
	st.decode = append(st.decode, time.Since(d0))
	st.bytes += int64(len(body))
	st.items += int64(countItems(result))
	return nil
}

// countItems counts the entries of a dsh/candidates array or a
// completion list.
func countItems(result json.RawMessage) int {
	var list []json.RawMessage
	if json.Unmarshal(result, &list) == nil {
		return len(list)
	}
	var cl struct {
		Items []json.RawMessage `json:"items"`
	}
	if json.Unmarshal(result, &cl) == nil {
		return len(cl.Items)
	}
	return 0
}

// candidates times one dsh/candidates call.
func (s *server) candidates(kind, q string) error {
	s.charge(kind)
	return s.timedCall(kind, q, "dsh/candidates", map[string]any{"query": q}, time.Now())
}

// complete times a didChange that makes the document "@q" and the
// completion at its end.
func (s *server) complete(q string) error {
	s.charge(kindCompletion)
	s.version++
	text := "@" + q
	start := time.Now()
	if err := s.c.send(map[string]any{"method": "textDocument/didChange", "params": map[string]any{
		"textDocument":   map[string]any{"uri": s.uri, "version": s.version},
		"contentChanges": []map[string]any{{"text": text}}}}); err != nil {
		return err
	}
	return s.timedCall(kindCompletion, q, "textDocument/completion", map[string]any{"textDocument": map[string]any{"uri": s.uri},
		"position": map[string]any{"line": 0, "character": len(utf16(text))}}, start)
}

func run(cfg config) error {
	ws, err := filepath.Abs(cfg.ws)
	if err != nil {
		return err
	}
	root, err := filepath.Abs(cfg.root)
	if err != nil {
		return err
	}
	// The baseline: the same queries on a snapshot in process.
	t0 := time.Now()
	ix := titles.NewIndex(root, titles.IndexOptions{})
	if err := ix.Build(context.Background(), nil); err != nil {
		return err
	}
	snap := ix.Snapshot()
	fmt.Printf("in-process index: %d sessions in %v\n", len(snap.Sessions), time.Since(t0).Round(time.Millisecond))
	if len(snap.Sessions) == 0 {
		return fmt.Errorf("no sessions under %s", root)
	}
	rnd := rand.New(rand.NewSource(7))
	var queries [][]string // per title, its prefixes
	for k := 0; k < cfg.titles; k++ {
		title := []rune(snap.Sessions[rnd.Intn(len(snap.Sessions))].DisplayTitle())
		var qs []string
		for n := 1; n <= len(title) && n <= 20; n++ {
			q := string(title[:n])
			if strings.Contains(q, "/") {
				break // a slash makes a file query
			}
			qs = append(qs, q)
		}
		queries = append(queries, qs)
	}
	target := snap.Sessions[0]
	var base []time.Duration
	for _, qs := range queries {
		for _, q := range qs {
			s := time.Now()
			_, _, _ = snap.Candidates(titles.CandidateQuery{Query: q, TargetID: target.ID, TargetCwd: ws})
			base = append(base, time.Since(s))
		}
	}
	var floorBase []time.Duration
	for i := 0; i < cfg.floorCalls; i++ {
		s := time.Now()
		_, _, _ = snap.Candidates(titles.CandidateQuery{Query: noMatchQuery, TargetID: target.ID, TargetCwd: ws})
		floorBase = append(floorBase, time.Since(s))
	}

	bins := []struct{ name, path string }{{"new", cfg.bin}}
	if cfg.baseBin != "" {
		bins = append([]struct{ name, path string }{{"base", cfg.baseBin}}, bins...)
	}
	var servers []*server
	defer func() {
		for _, s := range servers {
			_ = s.cmd.Process.Kill()
			_ = s.cmd.Wait()
		}
	}()
	for _, b := range bins {
		s, err := start(b.name, b.path, root, ws, target.ID, cfg.recallSearch)
		if err != nil {
			return err
		}
		servers = append(servers, s)
	}
	for i, qs := range queries {
		for j, q := range qs {
			order := servers
			if (i+j)%2 == 1 && len(servers) == 2 {
				order = []*server{servers[1], servers[0]}
			}
			for _, s := range order {
				if err := s.candidates(kindCandidates, q); err != nil {
					return err
				}
				if strings.ContainsAny(q, " \t") {
					continue // a blank ends an @ token: completion sees the word before it
				}
				if err := s.complete(q); err != nil {
					return err
				}
			}
		}
	}
	for i := 0; i < cfg.floorCalls; i++ {
		for _, s := range servers {
			if err := s.candidates(kindFloor, noMatchQuery); err != nil {
				return err
			}
		}
	}
	for _, s := range servers {
		s.charge("")
	}
	report(cfg, base, floorBase, servers)
	if cfg.samples != "" {
		if err := writeSamples(cfg.samples, servers); err != nil {
			return err
		}
	}
	for _, s := range servers {
		if err := s.stop(); err != nil {
			return err
		}
	}
	servers = nil
	return nil
}

// start starts a server on root and ws and waits for its indexes.
func start(name, bin, root, ws, target, recallSearch string) (*server, error) {
	cmd := exec.Command(bin, "--sessions-root", root, "--watch", "off")
	// Each binary keeps its own index cache, named after its path: an
	// older build may not read a newer build's cache, and would then build
	// from scratch; two runs of different binaries at once must not share
	// one either.
	abs, err := filepath.Abs(bin)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256([]byte(abs))
	cache := filepath.Join(os.TempDir(), fmt.Sprintf("benche2e-cache-%s-%x", name, sum[:6]))
	cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+cache)
	started := time.Now()
	pipes, err := lsptest.StartPipes(cmd)
	if err != nil {
		return nil, err
	}
	s := &server{name: name, cmd: cmd, c: &conn{in: pipes.In, out: pipes.Out}, started: started,
		uri: "file://" + ws + "/message.md", version: 1, stats: map[string]*samples{}}
	for _, k := range []string{kindCandidates, kindCompletion, kindFloor} {
		s.stats[k] = &samples{}
	}
	_, s.cpuOK = processCPU(cmd.Process.Pid)
	begin := time.Now()
	if _, err := s.c.call(1, "initialize", map[string]any{"processId": nil, "rootUri": "file://" + ws, "capabilities": map[string]any{},
		"initializationOptions": initOptions(target, ws, recallSearch)}); err != nil {
		return s, err
	}
	if err := s.c.send(map[string]any{"method": "initialized", "params": map[string]any{}}); err != nil {
		return s, err
	}
	var st struct {
		Building        bool `json:"building"`
		SessionsIndexed int  `json:"sessionsIndexed"`
		FilesIndexed    int  `json:"filesIndexed"`
	}
	for s.id = 2; ; s.id++ {
		raw, err := s.c.call(s.id, "dsh/status", map[string]any{})
		if err != nil {
			return s, err
		}
		if err := json.Unmarshal(raw, &st); err != nil {
			return s, err
		}
		entries, _ := os.ReadDir(ws)
		if !st.Building && st.SessionsIndexed > 0 && (st.FilesIndexed > 0 || len(entries) == 0) {
			break
		}
		if time.Since(begin) > 10*time.Minute {
			return s, errors.New("indexes not built within 10 minutes")
		}
		time.Sleep(100 * time.Millisecond)
	}
	fmt.Printf("%s server (%s) ready in %v: %d sessions, %d workspace files\n", name, bin, time.Since(begin).Round(time.Millisecond),
		st.SessionsIndexed, st.FilesIndexed)
	if err := s.c.send(map[string]any{"method": "textDocument/didOpen", "params": map[string]any{"textDocument": map[string]any{
		"uri": s.uri, "languageId": "markdown", "version": 1, "text": ""}}}); err != nil {
		return s, err
	}
	return s, nil
}

// stop prints the server's memory and shuts it down.
func (s *server) stop() error {
	for _, field := range []string{"VmHWM", "VmRSS"} { // in /proc's order
		if kb, err := lsptest.ProcStatusKB(s.cmd.Process.Pid, field); err == nil {
			fmt.Printf("%s server %s: %d kB\n", s.name, field, kb)
		}
	}
	_, _ = s.c.call(1<<30, "shutdown", nil)
	_ = s.c.send(map[string]any{"method": "exit"})
	return s.cmd.Wait()
}

func report(cfg config, base, floorBase []time.Duration, servers []*server) {
	r := func(a, b time.Duration) float64 { return float64(a) / float64(max(b, 1)) }
	us := func(d time.Duration) string { return d.Round(time.Microsecond).String() }
	fmt.Printf("baseline, sessionref query in process: %d keystrokes, p50 %v, p99 %v\n", len(base), pct(base, 0.5), pct(base, 0.99))
	fmt.Printf("baseline of the no-match query in process: p50 %v, p99 %v\n", pct(floorBase, 0.5), pct(floorBase, 0.99))
	fmt.Println("round trip: first request byte written → last answer byte read; client decode is after the clock")
	for _, k := range []struct {
		kind  string
		bound time.Duration
		base  []time.Duration
	}{{kindCandidates, cfg.sessionBound, base}, {kindCompletion, cfg.mixedBound, base}, {kindFloor, 0, floorBase}} {
		b50, b99 := pct(k.base, 0.5), pct(k.base, 0.99)
		for _, s := range servers {
			st := s.stats[k.kind]
			p50, p99 := pct(st.lat, 0.5), pct(st.lat, 0.99)
			name := k.kind + ":"
			if len(servers) > 1 {
				name = "[" + s.name + "] " + name
			}
			line := fmt.Sprintf("%-32s p50 %v (%.1f× baseline), p99 %v (%.1f× baseline)", name, us(p50), r(p50, b50), us(p99), r(p99, b99))
			if k.bound > 0 {
				line += fmt.Sprintf(" = %.2f× the bound %v", r(p99, k.bound), k.bound)
			}
			fmt.Println(line)
			n := int64(max(len(st.lat), 1))
			cpu := "server CPU n/a"
			if len(st.cpu) > 0 {
				cpu = fmt.Sprintf("server CPU/request p50 %v, mean %v, p99 %v", us(pct(st.cpu, 0.5)), us(mean(st.cpu)), us(pct(st.cpu, 0.99)))
			}
			fmt.Printf("%-32s %s; answer %d bytes, %d items (mean); client decode p50 %v\n", "", cpu,
				st.bytes/n, st.items/n, us(pct(st.decode, 0.5)))
		}
		if len(servers) == 2 {
			a, b := servers[0].stats[k.kind], servers[1].stats[k.kind]
			line := fmt.Sprintf("%-32s p50 %.2f×, p99 %.2f×", "new / base:", r(pct(b.lat, 0.5), pct(a.lat, 0.5)), r(pct(b.lat, 0.99), pct(a.lat, 0.99)))
			if len(a.cpu) > 0 && len(b.cpu) > 0 {
				line += fmt.Sprintf(", server CPU/request mean %.2f×", r(mean(b.cpu), mean(a.cpu)))
			}
			fmt.Println(line)
		}
	}
}

// utf16 returns s as UTF-16 code units, for LSP positions.
func utf16(s string) []uint16 {
	var out []uint16
	for _, r := range s {
		if r >= 0x10000 {
			r -= 0x10000
			out = append(out, uint16(0xd800+(r>>10)), uint16(0xdc00+(r&0x3ff)))
			continue
		}
		out = append(out, uint16(r))
	}
	return out
}

// initOptions are the server's initializationOptions: the target session,
// its cwd and, when recallSearch is "on" or "off", that setting.
func initOptions(target, cwd, recallSearch string) map[string]any {
	opts := map[string]any{"sessionId": target, "cwd": cwd}
	if recallSearch != "" {
		opts["recallSearch"] = recallSearch == "on"
	}
	return opts
}

// writeSamples writes every timed request of servers to path, one a line,
// tab-separated: server, kind, query, when it was sent (µs since its server
// started), its round trip and its server CPU (µs; -1 when not read), so
// the slowest requests can be matched with the server's own trace.
func writeSamples(path string, servers []*server) error {
	var b strings.Builder
	b.WriteString("server\tkind\tquery\tsent_us\tround_trip_us\tcpu_us\n")
	for _, s := range servers {
		for _, kind := range []string{kindCandidates, kindCompletion, kindFloor} {
			st := s.stats[kind]
			for i := range st.lat {
				cpu := int64(-1)
				if i < len(st.cpu) {
					cpu = st.cpu[i].Microseconds()
				}
				fmt.Fprintf(&b, "%s\t%s\t%q\t%d\t%d\t%d\n", s.name, kind, st.query[i], st.at[i].Microseconds(), st.lat[i].Microseconds(), cpu)
			}
		}
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("writing the samples: %w", err)
	}
	return nil
}
