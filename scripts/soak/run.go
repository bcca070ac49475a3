package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/dsh-refls/dsh-refls/internal/dshgen"
	"github.com/dsh-refls/dsh-refls/internal/lsptest"
	"github.com/dsh-refls/dsh-refls/sessionref"
)

// Pacing of the load and the writer.
const (
	// keystrokeInterval is a fast typist (~100 words a minute).
	keystrokeInterval = 15 * time.Millisecond
	// appendInterval, createInterval and touchInterval pace the writer:
	// busier than a real user's dsh sessions, so freshness work never
	// stops during the run.
	appendInterval = 150 * time.Millisecond
	createInterval = 2 * time.Second
	touchInterval  = 300 * time.Millisecond
	// sampleInterval paces /proc sampling.
	sampleInterval = time.Second
	// maxDocumentRunes bounds a typed document before it is cleared.
	maxDocumentRunes = 400
	// shutdownTimeout bounds shutdown and exit.
	shutdownTimeout = 10 * time.Second
)

// run executes one soak run.
func run(ctx context.Context, cfg config) (*report, error) {
	if cfg.Warmup <= 0 {
		cfg.Warmup = max(cfg.Duration/6, 5*time.Second)
	}
	if cfg.Typists <= 0 {
		cfg.Typists = 1
	}
	if cfg.Logf == nil {
		cfg.Logf = func(string, ...any) {}
	}
	dir := cfg.Dir
	if dir == "" {
		tmp, err := os.MkdirTemp("", "dsh-refls-soak")
		if err != nil {
			return nil, fmt.Errorf("creating a work directory: %w", err)
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	}
	store := filepath.Join(dir, "sessions")
	ws := filepath.Join(dir, "workspace")
	binary := cfg.Binary
	if binary == "" {
		binary = filepath.Join(dir, "dsh-refls")
		cfg.Logf("building %s", binary)
		if err := build(binary); err != nil {
			return nil, err
		}
	}
	cfg.Logf("generating %d sessions and %d files under %s", cfg.Sessions, cfg.Files, dir)
	w, err := newWorld(store, ws, cfg.Sessions, cfg.Files)
	if err != nil {
		return nil, err
	}

	logPath := filepath.Join(dir, "server.log")
	cmd := exec.Command(binary, "--sessions-root", store, "--watch", "auto", "--log-file", logPath, "--log-level", "info")
	cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+filepath.Join(dir, "cache"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	pipes, err := lsptest.StartPipes(cmd)
	if err != nil {
		return nil, err
	}
	exited := make(chan error, 1)
	c := newClient(pipes.In, pipes.Out)
	go func() {
		<-c.done
		exited <- cmd.Wait()
	}()
	reaped := false
	defer func() {
		if !reaped {
			_ = cmd.Process.Kill()
			<-exited
		}
	}()

	rep := &report{cfg: cfg, latencies: map[string][]time.Duration{}, errors: map[string]int{}}
	start := time.Now()
	if _, err := c.call("initialize", map[string]any{
		"processId": os.Getpid(), "rootUri": "file://" + ws,
		"capabilities": map[string]any{
			"textDocument": map[string]any{"completion": map[string]any{"completionItem": map[string]any{"labelDetailsSupport": true}}},
		},
		"initializationOptions": map[string]any{"sessionId": w.target, "cwd": ws},
	}); err != nil {
		return nil, fmt.Errorf("initialize: %w", err)
	}
	if err := c.notify("initialized", map[string]any{}); err != nil {
		return nil, err
	}
	rep.initialize = time.Since(start)

	loadCtx, stopLoad := context.WithTimeout(ctx, cfg.Duration)
	defer stopLoad()
	var wg sync.WaitGroup
	sampler := newSampler(cmd.Process.Pid)
	wg.Add(1)
	go func() {
		defer wg.Done()
		sampler.loop(loadCtx, start)
	}()
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := w.write(loadCtx, rep); err != nil {
			rep.fail("writer: %v", err)
		}
	}()
	for i := range cfg.Typists {
		wg.Add(1)
		go func() {
			defer wg.Done()
			typist(loadCtx, c, w, i, start.Add(cfg.Warmup), rep)
		}()
	}
	cfg.Logf("load running for %s (warm-up %s)", cfg.Duration, cfg.Warmup)
	wg.Wait()
	// One sample once the load has stopped: what the idle server keeps.
	time.Sleep(sampleInterval)
	sampler.sample(start)
	rep.samples = sampler.samples

	if _, err := c.call("shutdown", nil); err != nil {
		rep.fail("shutdown: %v", err)
	}
	if err := c.notify("exit", nil); err != nil {
		rep.fail("exit: %v", err)
	}
	_ = pipes.In.Close()
	select {
	case err := <-exited:
		reaped = true
		if err != nil {
			rep.fail("dsh-refls exited with %v after shutdown and exit", err)
		}
	case <-time.After(shutdownTimeout):
		rep.fail("dsh-refls did not exit within %s of exit", shutdownTimeout)
	}
	if rerr := c.err(); rerr != nil && !errors.Is(rerr, io.EOF) {
		rep.fail("stdout: %v", rerr)
	}
	if stderr.Len() > 0 {
		rep.fail("dsh-refls wrote to stderr with --log-file set: %s", firstLine(stderr.String()))
	}
	if logText, err := os.ReadFile(logPath); err == nil {
		for _, bad := range []string{"panicked", `"level":"error"`} {
			if bytes.Contains(logText, []byte(bad)) {
				rep.fail("the server log has %q entries (%s)", bad, logPath)
			}
		}
	}
	rep.elapsed = time.Since(start)
	return rep, nil
}

// build compiles the server from the module this program lives in.
func build(out string) error {
	root, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return fmt.Errorf("finding the module: %w", err)
	}
	cmd := exec.Command("go", "build", "-o", out, "./cmd/dsh-refls")
	cmd.Dir = filepath.Dir(strings.TrimSpace(string(root)))
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("building dsh-refls: %w", err)
	}
	return nil
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// typist types into its own document and asks what an editor asks while
// typing: completion at every keystroke, now and then hover, preparation,
// candidates, files and status. Latencies after the warm-up are recorded.
func typist(ctx context.Context, c *client, w *world, n int, measureFrom time.Time, rep *report) {
	uri := fmt.Sprintf("file://%s/draft-%d.md", w.ws, n)
	rng := rand.New(rand.NewPCG(uint64(n), 7))
	version := 1
	text := ""
	if err := c.notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{
		"uri": uri, "languageId": "markdown", "version": version, "text": text}}); err != nil {
		rep.fail("didOpen: %v", err)
		return
	}
	// The words typed: plain text, session mentions being typed, file
	// mentions being typed.
	words := []string{"see ", "the ", "parser ", "@", "@Fix ", "@src/", "@docs/g", "and ", "@" + w.mentionTitle(rng) + " ", "@README"}
	pending := ""
	ticker := time.NewTicker(keystrokeInterval)
	defer ticker.Stop()
	for i := 0; ; i++ {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
		if pending == "" {
			pending = words[rng.IntN(len(words))]
		}
		if len([]rune(text)) > maxDocumentRunes {
			text = ""
			version++
			if err := c.notify("textDocument/didChange", map[string]any{"textDocument": map[string]any{"uri": uri, "version": version},
				"contentChanges": []map[string]any{{"text": ""}}}); err != nil {
				rep.fail("didChange: %v", err)
				return
			}
		}
		r, size := firstRune(pending)
		pending = pending[size:]
		line, col := endOf(text)
		text += string(r)
		version++
		pos := map[string]any{"line": line, "character": col}
		if err := c.notify("textDocument/didChange", map[string]any{"textDocument": map[string]any{"uri": uri, "version": version},
			"contentChanges": []map[string]any{{"range": map[string]any{"start": pos, "end": pos}, "text": string(r)}}}); err != nil {
			rep.fail("didChange: %v", err)
			return
		}
		line, col = endOf(text)
		cursor := map[string]any{"textDocument": map[string]any{"uri": uri}, "position": map[string]any{"line": line, "character": col}}
		measured := time.Now().After(measureFrom)
		timed(c, rep, measured, "textDocument/completion", cursor)
		switch {
		case i%10 == 3:
			timed(c, rep, measured, "textDocument/hover", map[string]any{"textDocument": map[string]any{"uri": uri},
				"position": map[string]any{"line": 0, "character": 1}})
		case i%20 == 7:
			timed(c, rep, measured, "dsh/prepare", map[string]any{"text": "Compare " + w.mention(rng) + " with " + w.mention(rng)})
		case i%15 == 11:
			timed(c, rep, measured, "dsh/candidates", map[string]any{"query": words[rng.IntN(3)]})
		case i%12 == 5:
			timed(c, rep, measured, "dsh/files", map[string]any{"query": "src/"})
		case i%50 == 0:
			timed(c, rep, measured, "dsh/status", map[string]any{})
		}
	}
}

// timed calls method and records its latency (when measured) or error.
func timed(c *client, rep *report, measured bool, method string, params any) {
	start := time.Now()
	_, err := c.call(method, params)
	d := time.Since(start)
	rep.record(method, d, measured, err)
}

func firstRune(s string) (rune, int) {
	for _, r := range s {
		return r, len(string(r))
	}
	return 0, 0
}

// endOf returns the LSP position (UTF-16) of the end of text.
func endOf(text string) (line, col int) {
	for _, r := range text {
		switch {
		case r == '\n':
			line, col = line+1, 0
		case r >= 0x10000:
			col += 2
		default:
			col++
		}
	}
	return line, col
}

// world is the generated store and workspace and what the writer changes
// in them.
type world struct {
	store, ws string
	target    string

	// mu guards sessions, paths and created.
	mu       sync.Mutex
	sessions []*liveSession
	created  []string // workspace files the writer added
	serial   int
}

// liveSession is a session log the writer appends to.
type liveSession struct {
	s     *dshgen.Session
	path  string
	title string
	turns int
}

// newWorld writes the demo store (whose target session the server is
// initialized with), count more sessions in both encodings, and a
// workspace of files.
func newWorld(store, ws string, sessions, files int) (*world, error) {
	now := time.Now()
	if err := os.MkdirAll(ws, 0o755); err != nil {
		return nil, err
	}
	demo, err := dshgen.DemoStoreFor(store, ws, now)
	if err != nil {
		return nil, fmt.Errorf("writing the demo store: %w", err)
	}
	w := &world{store: store, ws: ws, target: demo[0].ID}
	for i := range sessions {
		if _, err := w.newSession(now.Add(-time.Duration(i)*time.Hour), i); err != nil {
			return nil, err
		}
	}
	dirs := []string{"src", "src/parser", "docs", "docs/guide", "test", "scripts"}
	for i := range files {
		p := filepath.Join(ws, dirs[i%len(dirs)], fmt.Sprintf("file-%04d.go", i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(p, []byte("package x\n"), 0o644); err != nil {
			return nil, err
		}
	}
	if err := os.WriteFile(filepath.Join(ws, "README.md"), []byte("# soak\n"), 0o644); err != nil {
		return nil, err
	}
	return w, nil
}

// topics give generated sessions believable titles.
var topics = []string{"Fix the parser", "Speed up indexing", "Write the docs", "Review the watcher", "Flaky login test", "Refactor completion"}

// newSession writes one more session and keeps it for appending.
func (w *world) newSession(created time.Time, i int) (*liveSession, error) {
	id := fmt.Sprintf("soak-%04d-%d", i, created.UnixNano()%1000)
	title := fmt.Sprintf("%s #%d", topics[i%len(topics)], i)
	s := dshgen.NewSession(id).Cwd(w.ws).CreatedAt(created.UnixMilli()).Turn(func(t *dshgen.Turn) {
		t.UserText("Please look into " + title)
		t.Title(title, "provider")
		t.AssistantText("Looking into it.")
	})
	enc := dshgen.Raw
	if i%2 == 1 {
		enc = dshgen.Zstd
	}
	path, err := s.Save(w.store, enc)
	if err != nil {
		return nil, fmt.Errorf("writing session %s: %w", id, err)
	}
	ls := &liveSession{s: s, path: path, title: title, turns: 1}
	w.mu.Lock()
	w.sessions = append(w.sessions, ls)
	w.mu.Unlock()
	return ls, nil
}

// mention returns the canonical mention of a random session.
func (w *world) mention(rng *rand.Rand) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	ls := w.sessions[rng.IntN(len(w.sessions))]
	return sessionref.Mention(ls.title, ls.s.ID())
}

// mentionTitle returns the first word of a random session title.
func (w *world) mentionTitle(rng *rand.Rand) string {
	return strings.Fields(topics[rng.IntN(len(topics))])[0]
}

// write appends turns to sessions, creates sessions and touches workspace
// files until ctx ends.
func (w *world) write(ctx context.Context, rep *report) error {
	rng := rand.New(rand.NewPCG(42, 42))
	appendTick := time.NewTicker(appendInterval)
	createTick := time.NewTicker(createInterval)
	touchTick := time.NewTicker(touchInterval)
	defer appendTick.Stop()
	defer createTick.Stop()
	defer touchTick.Stop()
	created := 0
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-appendTick.C:
			// Under the lock: typists read titles for their mentions.
			w.mu.Lock()
			ls := w.sessions[rng.IntN(len(w.sessions))]
			ls.turns++
			n := ls.turns
			ls.s.Turn(func(t *dshgen.Turn) {
				t.UserText(fmt.Sprintf("Turn %d: what about the next step?", n))
				if n%5 == 0 {
					ls.title = fmt.Sprintf("%s (v%d)", strings.SplitN(ls.title, " (v", 2)[0], n)
					t.Title(ls.title, "provider")
				}
				t.AssistantText(strings.Repeat("Working on it. ", 1+n%20))
			})
			err := ls.s.Append(ls.path)
			w.mu.Unlock()
			if err != nil {
				return fmt.Errorf("appending to %s: %w", ls.path, err)
			}
			rep.count("appends")
		case <-createTick.C:
			created++
			if _, err := w.newSession(time.Now(), 100000+created); err != nil {
				return err
			}
			rep.count("sessions created")
		case <-touchTick.C:
			if err := w.touch(rng); err != nil {
				return err
			}
			rep.count("workspace changes")
		}
	}
}

// maxCreatedFiles bounds the files the writer keeps in the workspace; past
// it, it deletes the oldest, so the workspace churns at a steady size.
const maxCreatedFiles = 50

// touch creates, modifies or deletes a workspace file.
func (w *world) touch(rng *rand.Rand) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case len(w.created) >= maxCreatedFiles:
		p := w.created[0]
		w.created = w.created[1:]
		if err := os.Remove(p); err != nil {
			return fmt.Errorf("deleting %s: %w", p, err)
		}
	case len(w.created) > 0 && rng.IntN(3) == 0:
		p := w.created[rng.IntN(len(w.created))]
		if err := os.WriteFile(p, []byte(time.Now().String()), 0o644); err != nil {
			return fmt.Errorf("modifying %s: %w", p, err)
		}
	default:
		w.serial++
		p := filepath.Join(w.ws, "src", fmt.Sprintf("new-%05d.go", w.serial))
		if err := os.WriteFile(p, []byte("package x\n"), 0o644); err != nil {
			return fmt.Errorf("creating %s: %w", p, err)
		}
		w.created = append(w.created, p)
	}
	return nil
}
