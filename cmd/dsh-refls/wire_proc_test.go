package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/dsh-refls/dsh-refls/internal/lsptest"
)

// abuseTimeout bounds every wait on the binary.
const abuseTimeout = 20 * time.Second

// frameTimeout bounds the wait for one frame on stdout. It is longer than
// abuseTimeout because a frame can be tens of MiB: the 24 MiB answer of
// TestBinaryReturnsMemoryAfterALargeRequest, decoded under -race on two
// loaded cores, once took over 20 s. Only a failing run waits it out.
const frameTimeout = 60 * time.Second

// maxMessageBytes mirrors the server's frame limit (server/internal/lspwire/limits.go).
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

// wireProc is the real binary on real pipes, driven through the test
// editor (internal/lsptest): its stdout is read strictly as frames, and
// the test reads them in order with next and response.
type wireProc struct {
	t      testing.TB
	cmd    *exec.Cmd
	editor *lsptest.Editor
	pos    int // index of the next frame next returns
	stderr *lockedBuffer
	waited bool
}

func startWire(t testing.TB, args ...string) *wireProc {
	t.Helper()
	return startWireCache(t, t.TempDir(), args...)
}

// startWireCache starts the binary with cacheHome as its user cache dir.
func startWireCache(t testing.TB, cacheHome string, args ...string) *wireProc {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+cacheHome)
	p := &wireProc{t: t, cmd: cmd, stderr: &lockedBuffer{}}
	cmd.Stderr = p.stderr
	e, err := lsptest.Start(cmd, lsptest.Config{})
	if err != nil {
		t.Fatal(err)
	}
	p.editor = e
	t.Cleanup(func() {
		if p.waited {
			return
		}
		// The test stopped early: end the process and reap it.
		e.ResumeReading()
		_ = e.Close()
		_ = cmd.Process.Kill()
		<-e.Done()
		_ = cmd.Wait()
	})
	return p
}

func (p *wireProc) write(b []byte) {
	p.t.Helper()
	if err := p.editor.WriteRaw(b); err != nil {
		p.t.Fatalf("writing to dsh-refls: %v\nstderr:\n%s", err, p.stderr.String())
	}
}

func (p *wireProc) send(msg map[string]any) { p.t.Helper(); p.write(frame(p.t, msg)) }

// next returns the next frame on stdout; frames it returned are
// forgotten, so long runs hold no history.
func (p *wireProc) next() lsptest.Message {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), frameTimeout)
	defer cancel()
	m, err := p.editor.Next(ctx, p.pos)
	if err != nil {
		p.t.Fatalf("no frame on stdout: %v (read error %v)\nstderr:\n%s", err, p.editor.ReadErr(), p.stderr.String())
	}
	p.pos = m.Index + 1
	p.editor.Forget(p.pos)
	return m
}

// response returns the next response, skipping server notifications and
// requests.
func (p *wireProc) response() lsptest.Message {
	p.t.Helper()
	for {
		m := p.next()
		if m.Batch {
			p.t.Fatalf("frame %s is a batch, not one response", m.Raw)
		}
		if m.Method != "" {
			continue
		}
		// The editor's decoding: answers of tens of MiB are not parsed
		// twice.
		return m
	}
}

// notification waits for the next notification of method, skipping the
// frames before it.
func (p *wireProc) notification(method string) json.RawMessage {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), abuseTimeout)
	defer cancel()
	m, err := p.editor.AwaitFrom(ctx, p.pos, lsptest.Notification(method))
	if err != nil {
		p.t.Fatalf("no %s: %v\nstderr:\n%s", method, err, p.stderr.String())
	}
	p.pos = m.Index + 1
	p.editor.Forget(p.pos)
	return m.Params
}

// finish closes stdin, reads stdout to its end and waits for the exit; it
// returns the frames not read yet.
func (p *wireProc) finish() ([]json.RawMessage, int) {
	p.t.Helper()
	p.editor.ResumeReading()
	_ = p.editor.Close()
	select {
	case <-p.editor.Done():
	case <-time.After(abuseTimeout):
		_ = p.cmd.Process.Signal(syscall.SIGQUIT)
		p.t.Fatalf("dsh-refls did not close stdout\nstderr:\n%s", p.stderr.String())
	}
	if err := p.editor.ReadErr(); err != nil {
		p.t.Errorf("stdout is not only frames: %v", err)
	}
	var rest []json.RawMessage
	for _, m := range p.editor.Messages() {
		if m.Index >= p.pos {
			rest = append(rest, m.Raw)
		}
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
	if a.Error == nil || a.Error.Code != int64(code) || string(a.ID) != id {
		p.t.Errorf("%s: answered id %s error %+v, want id %s code %d", what, a.ID, a.Error, id, code)
	}
}

// expectResult reads the next response and checks it is a result for id.
func (p *wireProc) expectResult(what, id string) lsptest.Message {
	p.t.Helper()
	a := p.response()
	if a.Error != nil || string(a.ID) != id {
		p.t.Errorf("%s: answered id %s error %+v, want a result for %s", what, a.ID, a.Error, id)
	}
	return a
}
