package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dsh-refls/dsh-refls/internal/dshgen"
	"github.com/dsh-refls/dsh-refls/internal/lsptest"
	"github.com/dsh-refls/dsh-refls/sessionref"
)

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
	p.write(lsptest.Frame([]byte(big)))
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
			_ = p.editor.WriteRaw([]byte(tt.input))
			rest, code := p.finish()
			var got []string
			for _, f := range rest {
				var a lsptest.Message
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
