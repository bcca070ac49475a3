package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/dsh-refls/dsh-refls/internal/dshgen"
	"github.com/dsh-refls/dsh-refls/sessionref"
)

// abuseTimeout bounds every wait on the binary.
const abuseTimeout = 20 * time.Second

// maxMessageBytes mirrors the server's frame limit (server/stream.go).
const maxMessageBytes = 64 << 20

// lockedBuffer is a bytes.Buffer safe to read while the process writes it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// wireProc is the real binary on real pipes, its stdout read strictly as
// frames by one goroutine.
type wireProc struct {
	t       *testing.T
	cmd     *exec.Cmd
	in      io.WriteCloser
	frames  chan json.RawMessage // closed at the end of stdout
	readErr error                // set before frames is closed
	stderr  *lockedBuffer
	waited  bool
}

// answer is one response read back.
type answer struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func startWire(t *testing.T, args ...string) *wireProc {
	t.Helper()
	return startWireCache(t, t.TempDir(), args...)
}

// startWireCache starts the binary with cacheHome as its user cache dir.
func startWireCache(t *testing.T, cacheHome string, args ...string) *wireProc {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+cacheHome)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &wireProc{t: t, cmd: cmd, in: in, frames: make(chan json.RawMessage, 256), stderr: &lockedBuffer{}}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(p.frames)
		p.readErr = readFramesTo(out, p.frames)
		if p.readErr != nil {
			_, _ = io.Copy(io.Discard, out)
		}
	}()
	t.Cleanup(func() {
		if p.waited {
			return
		}
		// The test stopped early: end the process and reap it.
		_ = in.Close()
		_ = cmd.Process.Kill()
		for range p.frames {
		}
		_ = cmd.Wait()
	})
	return p
}

// readFramesTo parses r strictly as frames of JSON, sending each body to
// ch, and returns nil at a clean end or the first violation.
func readFramesTo(r io.Reader, ch chan<- json.RawMessage) error {
	br := bufio.NewReader(r)
	for {
		if _, err := br.Peek(1); err == io.EOF {
			return nil
		}
		length := -1
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				return fmt.Errorf("header: %w (read %q)", err, line)
			}
			if !strings.HasSuffix(line, "\r\n") {
				return fmt.Errorf("header line %q does not end in CRLF", line)
			}
			line = strings.TrimSuffix(line, "\r\n")
			if line == "" {
				break
			}
			name, value, ok := strings.Cut(line, ":")
			if !ok {
				return fmt.Errorf("not a header: %q", line)
			}
			if strings.EqualFold(name, "Content-Length") {
				n, err := strconv.Atoi(strings.TrimSpace(value))
				if err != nil {
					return fmt.Errorf("bad length %q", value)
				}
				length = n
			}
		}
		if length < 0 {
			return errors.New("frame without Content-Length")
		}
		body := make([]byte, length)
		if _, err := io.ReadFull(br, body); err != nil {
			return fmt.Errorf("body: %w", err)
		}
		if !json.Valid(body) {
			return fmt.Errorf("body is not JSON: %q", body)
		}
		ch <- body
	}
}

func (p *wireProc) write(b []byte) {
	p.t.Helper()
	if _, err := p.in.Write(b); err != nil {
		p.t.Fatalf("writing to dsh-refls: %v\nstderr:\n%s", err, p.stderr.String())
	}
}

func (p *wireProc) send(msg map[string]any) { p.t.Helper(); p.write(frame(p.t, msg)) }

// response returns the next response, skipping server notifications and
// requests.
func (p *wireProc) response() answer {
	p.t.Helper()
	deadline := time.After(abuseTimeout)
	for {
		select {
		case f, ok := <-p.frames:
			if !ok {
				p.t.Fatalf("stdout ended (%v)\nstderr:\n%s", p.readErr, p.stderr.String())
			}
			var a answer
			if err := json.Unmarshal(f, &a); err != nil {
				p.t.Fatalf("frame %s: %v", f, err)
			}
			if a.Method == "" {
				return a
			}
		case <-deadline:
			p.t.Fatalf("no response\nstderr:\n%s", p.stderr.String())
		}
	}
}

// finish closes stdin, reads stdout to its end and waits for the exit.
func (p *wireProc) finish() ([]json.RawMessage, int) {
	p.t.Helper()
	_ = p.in.Close()
	var rest []json.RawMessage
	deadline := time.After(abuseTimeout)
	for done := false; !done; {
		select {
		case f, ok := <-p.frames:
			if !ok {
				done = true
				break
			}
			rest = append(rest, f)
		case <-deadline:
			_ = p.cmd.Process.Signal(syscall.SIGQUIT)
			p.t.Fatalf("dsh-refls did not close stdout\nstderr:\n%s", p.stderr.String())
		}
	}
	if p.readErr != nil {
		p.t.Errorf("stdout is not only frames: %v", p.readErr)
	}
	// Wait only after stdout is drained (exec's rule for StdoutPipe).
	err := p.cmd.Wait()
	p.waited = true
	code := 0
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		code = exitErr.ExitCode()
	} else if err != nil {
		p.t.Fatalf("waiting for dsh-refls: %v", err)
	}
	return rest, code
}

// expectError reads the next response and checks its id and code.
func (p *wireProc) expectError(what, id string, code int) {
	p.t.Helper()
	a := p.response()
	if a.Error == nil || a.Error.Code != code || string(a.ID) != id {
		p.t.Errorf("%s: answered id %s error %+v, want id %s code %d", what, a.ID, a.Error, id, code)
	}
}

// expectResult reads the next response and checks it is a result for id.
func (p *wireProc) expectResult(what, id string) answer {
	p.t.Helper()
	a := p.response()
	if a.Error != nil || string(a.ID) != id {
		p.t.Errorf("%s: answered id %s error %+v, want a result for %s", what, a.ID, a.Error, id)
	}
	return a
}

// socketFDs lists the open descriptors of pid that are sockets.
func socketFDs(t *testing.T, pid int) (sockets []string, total int) {
	t.Helper()
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Skipf("cannot list %s: %v", dir, err)
	}
	for _, e := range entries {
		target, err := os.Readlink(filepath.Join(dir, e.Name()))
		if err != nil {
			continue
		}
		total++
		if strings.HasPrefix(target, "socket:") {
			sockets = append(sockets, e.Name()+" → "+target)
		}
	}
	return sockets, total
}

// TestBinaryAbuseKeepsServing drives the real binary over real pipes with
// frames it must refuse one by one — invalid JSON, an unknown method, a
// frame over the size limit, duplicate ids — between a whole session of
// real requests; it must answer each, keep serving, log the reasons, open
// no socket, refuse requests after shutdown and exit 0.
func TestBinaryAbuseKeepsServing(t *testing.T) {
	store := t.TempDir()
	ws := t.TempDir()
	now := time.Now()
	expected, err := dshgen.DemoStoreFor(store, ws, now)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "notes.md"), []byte("hi"), 0o644); err != nil {
		t.Fatal(err)
	}
	target, ref := expected[0], expected[1]
	p := startWire(t, "--sessions-root", store, "--watch", "fsnotify", "--log-level", "info")

	p.send(map[string]any{"id": "init", "method": "initialize", "params": map[string]any{
		"processId": nil, "rootUri": "file://" + ws, "capabilities": map[string]any{},
		"initializationOptions": map[string]any{"sessionId": target.ID, "cwd": ws}}})
	p.expectResult("initialize", `"init"`)
	p.send(map[string]any{"method": "initialized", "params": map[string]any{}})

	p.write([]byte("Content-Length: 17\r\n\r\n{\"jsonrpc\":\"2.0\","))
	p.expectError("invalid JSON", "null", -32700)

	p.send(map[string]any{"id": "u", "method": "dsh/nonesuch"})
	p.expectError("unknown method", `"u"`, -32601)

	big := `{"jsonrpc":"2.0","id":"big","method":"dsh/prepare","params":{"text":"` + strings.Repeat("x", maxMessageBytes) + `"}}`
	p.write(fmt.Appendf(nil, "Content-Length: %d\r\n\r\n%s", len(big), big))
	p.expectError("oversized frame", `"big"`, -32600)

	mention := sessionref.Mention(ref.DisplayTitle, ref.ID)
	text := "Compare with " + mention + " and @notes.md"
	p.send(map[string]any{"method": "textDocument/didOpen", "params": map[string]any{"textDocument": map[string]any{
		"uri": "file://" + ws + "/msg.md", "languageId": "markdown", "version": 1, "text": text}}})
	requests := []struct {
		method string
		params map[string]any
	}{
		{"textDocument/completion", map[string]any{"textDocument": map[string]any{"uri": "file://" + ws + "/msg.md"}, "position": map[string]any{"line": 0, "character": 13}}},
		{"textDocument/hover", map[string]any{"textDocument": map[string]any{"uri": "file://" + ws + "/msg.md"}, "position": map[string]any{"line": 0, "character": 15}}},
		{"dsh/prepare", map[string]any{"text": text}},
		{"dsh/candidates", map[string]any{"query": ""}},
		{"dsh/files", map[string]any{"query": "no"}},
		{"dsh/status", map[string]any{}},
	}
	for i, r := range requests {
		p.send(map[string]any{"id": i, "method": r.method, "params": r.params})
		p.expectResult(r.method, strconv.Itoa(i))
	}

	for range 2 {
		p.send(map[string]any{"id": "dup", "method": "dsh/candidates", "params": map[string]any{"query": ""}})
	}
	p.expectResult("first of a duplicate id", `"dup"`)
	p.expectResult("second of a duplicate id", `"dup"`)

	sockets, fds := socketFDs(t, p.cmd.Process.Pid)
	if len(sockets) > 0 {
		t.Errorf("dsh-refls holds sockets after a whole session: %v", sockets)
	}
	t.Logf("open descriptors after a whole session: %d, sockets: %d", fds, len(sockets))

	p.send(map[string]any{"id": "down", "method": "shutdown"})
	p.expectResult("shutdown", `"down"`)
	p.send(map[string]any{"id": "late", "method": "dsh/status", "params": map[string]any{}})
	p.expectError("request after shutdown", `"late"`, -32600)
	p.send(map[string]any{"method": "exit"})
	rest, code := p.finish()
	if len(rest) != 0 {
		t.Errorf("frames after exit: %s", rest)
	}
	if code != 0 {
		t.Errorf("exit code %d after shutdown and exit, want 0\nstderr:\n%s", code, p.stderr.String())
	}
	for _, want := range []string{"invalid JSON", "exceeds the maximum of 67108864 bytes"} {
		if !strings.Contains(p.stderr.String(), want) {
			t.Errorf("stderr does not log %q:\n%s", want, p.stderr.String())
		}
	}
}

// TestBinaryLostFraming feeds the real binary input whose framing is lost:
// it answers what it read before, logs the reason and exits 1, writing
// nothing but frames.
func TestBinaryLostFraming(t *testing.T) {
	tests := []struct {
		name  string
		input string
		// answers are the ids (raw JSON) answered after initialize.
		answers []string
		logged  string
	}{
		{"garbage", "\x00\x01garbage\xff\r\nmore", nil, "is not a header field"},
		{"missing Content-Length", "Content-Type: x\r\n\r\n{}", nil, "no Content-Length field"},
		{"Content-Length too short", "Content-Length: 20\r\n\r\n" + `{"jsonrpc":"2.0","id":"short","method":"dsh/status"}`, []string{"null"}, "input ends inside the header"},
		{"Content-Length too long, then end of input", "Content-Length: 400\r\n\r\n" + `{"jsonrpc":"2.0","id":"long","method":"dsh/status"}`, nil, "body ends after"},
		{"header line without end", strings.Repeat("x", 10000), nil, "is not an LSP header"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := startWire(t, "--sessions-root", t.TempDir(), "--watch", "off", "--no-index-cache")
			p.send(map[string]any{"id": "init", "method": "initialize", "params": map[string]any{"processId": nil, "capabilities": map[string]any{}}})
			p.expectResult("initialize", `"init"`)
			_, _ = p.in.Write([]byte(tt.input))
			rest, code := p.finish()
			var got []string
			for _, f := range rest {
				var a answer
				if json.Unmarshal(f, &a) == nil && a.Method == "" {
					got = append(got, string(a.ID))
				}
			}
			if strings.Join(got, ",") != strings.Join(tt.answers, ",") {
				t.Errorf("answered %v, want %v", got, tt.answers)
			}
			if code != 1 {
				t.Errorf("exit code %d, want 1", code)
			}
			if !strings.Contains(p.stderr.String(), tt.logged) {
				t.Errorf("stderr does not give the reason %q:\n%s", tt.logged, p.stderr.String())
			}
		})
	}
}
