package server

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"go.lsp.dev/jsonrpc2"

	"github.com/dsh-refls/dsh-refls/internal/lsptest"
)

func TestRequestBeforeInitializeIsRejected(t *testing.T) {
	opts, _, _ := testOptions(t)
	h := newHarness(t, opts)
	err := h.call(MethodStatus, map[string]any{}, nil)
	if code, _ := rpcError(t, err); code != jsonrpc2.ServerNotInitialized {
		t.Fatalf("code = %d, want %d", code, jsonrpc2.ServerNotInitialized)
	}
	h.initialize(initOptions{})
	var st statusResult
	h.mustCall(MethodStatus, map[string]any{}, &st)
}

func TestExitCodes(t *testing.T) {
	tests := []struct {
		name     string
		shutdown bool
		want     int
	}{
		{"exit after shutdown", true, 0},
		{"exit without shutdown", false, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts, _, _ := testOptions(t)
			h := newHarness(t, opts)
			h.initialize(initOptions{})
			if tt.shutdown {
				h.mustCall("shutdown", nil, nil)
				// After shutdown only exit is accepted.
				if code, _ := rpcError(t, h.call(MethodStatus, nil, nil)); code != jsonrpc2.InvalidRequest {
					t.Errorf("request after shutdown: code %d, want %d", code, jsonrpc2.InvalidRequest)
				}
			}
			h.notify("exit", nil)
			if got := h.wait(); got != tt.want {
				t.Fatalf("exit code = %d, want %d", got, tt.want)
			}
		})
	}
}

func TestPositionEncodingNegotiation(t *testing.T) {
	for _, utf8 := range []bool{true, false} {
		opts, _, _ := testOptions(t)
		h := newHarness(t, opts)
		res := h.initialize(initOptions{utf8: utf8})
		want := "utf-16"
		if utf8 {
			want = "utf-8"
		}
		if res.Capabilities.PositionEncoding != want {
			t.Errorf("offered utf-8=%v: positionEncoding %q, want %q", utf8, res.Capabilities.PositionEncoding, want)
		}
		if !res.Capabilities.CompletionProvider.ResolveProvider || res.Capabilities.CompletionProvider.TriggerCharacters[0] != "@" {
			t.Errorf("completion capability = %+v", res.Capabilities.CompletionProvider)
		}
	}
}

func TestInvalidConfig(t *testing.T) {
	tests := []struct {
		name     string
		settings map[string]any
		field    string
	}{
		{"too many references", map[string]any{"maxReferences": 4}, "maxReferences"},
		{"zero references", map[string]any{"maxReferences": 0}, "maxReferences"},
		{"string budget", map[string]any{"maxReferenceBytes": "big"}, "maxReferenceBytes"},
		{"fraction above one", map[string]any{"referenceContextFraction": 1.5}, "referenceContextFraction"},
		{"fraction zero", map[string]any{"referenceContextFraction": 0}, "referenceContextFraction"},
		{"context window", map[string]any{"contextWindow": -1}, "contextWindow"},
		{"candidate limit", map[string]any{"candidateLimit": 0}, "candidateLimit"},
		{"file results", map[string]any{"fileMaxResults": 1.5}, "fileMaxResults"},
		{"file results huge", map[string]any{"fileMaxResults": 1e10}, "fileMaxResults"},
		{"excluded dirs", map[string]any{"excludedDirectories": "node_modules"}, "excludedDirectories"},
		{"watch mode", map[string]any{"watch": "inotify"}, "watch"},
		{"session id type", map[string]any{"sessionId": 7}, "sessionId"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts, _, _ := testOptions(t)
			h := newHarness(t, opts)
			err := h.call("initialize", initParams(initOptions{settings: tt.settings}), nil)
			code, scode := rpcError(t, err)
			if code != CodeInvalidConfig || scode != "SESSION_REFERENCE_INVALID_CONFIG" {
				t.Fatalf("code %d/%s, want %d/INVALID_CONFIG", code, scode, CodeInvalidConfig)
			}
			var e *lsptest.Error
			_ = asRPC(err, &e)
			var data ErrorData
			_ = json.Unmarshal(e.Data, &data)
			if data.Field != tt.field || !strings.Contains(e.Message, tt.field) {
				t.Errorf("error names field %q (%q), want %q", data.Field, e.Message, tt.field)
			}
		})
	}
}

func TestDidChangeConfiguration(t *testing.T) {
	opts, _, ws := testOptions(t)
	h := newHarness(t, opts)
	h.initialize(initOptions{root: ws})
	// A valid change applies.
	h.notify("workspace/didChangeConfiguration", map[string]any{"settings": map[string]any{"dsh": map[string]any{"candidateLimit": 1}}})
	var cands []json.RawMessage
	h.mustCall(MethodCandidates, map[string]any{"query": ""}, &cands)
	if len(cands) != 1 {
		t.Fatalf("candidateLimit 1 gave %d candidates", len(cands))
	}
	// An invalid one is reported and changes nothing.
	h.notify("workspace/didChangeConfiguration", map[string]any{"settings": map[string]any{"dsh": map[string]any{"candidateLimit": -3}}})
	n := h.waitNote(func(n notification) bool { return n.Method == "window/showMessage" })
	// A person reads it: the field and that nothing changed, no code.
	if !strings.Contains(string(n.Params), "not applied") || !strings.Contains(string(n.Params), "candidateLimit") ||
		strings.Contains(string(n.Params), "SESSION_REFERENCE_") {
		t.Errorf("showMessage %s does not say in words which setting was not applied", n.Params)
	}
	h.mustCall(MethodCandidates, map[string]any{"query": ""}, &cands)
	if len(cands) != 1 {
		t.Errorf("after an invalid change: %d candidates, want the previous limit 1", len(cands))
	}
	var st statusResult
	h.mustCall(MethodStatus, nil, &st)
	if len(st.Degraded) == 0 || !strings.Contains(st.Degraded[0], "candidateLimit") {
		t.Errorf("status degraded = %q, want the rejected configuration", st.Degraded)
	}
}

// TestConfigurationReplaces checks that each settings section replaces the
// options before it: an option the client stops sending returns to its
// default, whether it came from initializationOptions or earlier settings.
func TestConfigurationReplaces(t *testing.T) {
	opts, _, ws := testOptions(t)
	h := newHarness(t, opts)
	count := func() int {
		t.Helper()
		var cands []json.RawMessage
		h.mustCall(MethodCandidates, map[string]any{"query": ""}, &cands)
		return len(cands)
	}
	change := func(dsh map[string]any) {
		h.notify("workspace/didChangeConfiguration", map[string]any{"settings": map[string]any{"dsh": dsh}})
	}
	h.initialize(initOptions{root: ws, settings: map[string]any{"candidateLimit": 1}})
	if n := count(); n != 1 {
		t.Fatalf("initializationOptions candidateLimit 1 gave %d candidates", n)
	}
	all := 0
	change(map[string]any{"fileMaxResults": 5})
	if all = count(); all <= 1 {
		t.Fatalf("after settings without candidateLimit: %d candidates, want the default limit (more than 1)", all)
	}
	change(map[string]any{"candidateLimit": 1})
	if n := count(); n != 1 {
		t.Fatalf("settings candidateLimit 1 gave %d candidates", n)
	}
	change(map[string]any{})
	if n := count(); n != all {
		t.Errorf("after empty settings: %d candidates, want %d (the default limit)", n, all)
	}
	var st statusResult
	h.mustCall(MethodStatus, nil, &st)
	if !samePath(st.WorkspaceRoot, ws) {
		t.Errorf("workspace root %q changed with the settings, want %q", st.WorkspaceRoot, ws)
	}
}

func TestPanicIsRecovered(t *testing.T) {
	opts, fake, _ := testOptions(t)
	h := newHarness(t, opts)
	// Without the recall index, whose background sync would take the
	// next snapshot (and its panic) before the request does.
	h.initialize(initOptions{settings: map[string]any{"recallSearch": false}})
	fake.panicNext.Store(true)
	err := h.call(MethodCandidates, map[string]any{"query": "parser"}, nil)
	if code, _ := rpcError(t, err); code != jsonrpc2.InternalError {
		t.Fatalf("code %d, want InternalError", code)
	}
	var cands []json.RawMessage
	h.mustCall(MethodCandidates, map[string]any{"query": "parser"}, &cands)
	if len(cands) != 1 {
		t.Fatalf("after a panic: %d candidates, want 1", len(cands))
	}
}

func TestSetTraceSendsLogTrace(t *testing.T) {
	opts, _, _ := testOptions(t)
	h := newHarness(t, opts)
	h.initialize(initOptions{})
	h.notify("$/setTrace", map[string]any{"value": "verbose"})
	h.mustCall(MethodStatus, nil, nil)
	n := h.waitNote(func(n notification) bool { return n.Method == "$/logTrace" })
	if !strings.Contains(string(n.Params), MethodStatus) {
		t.Errorf("logTrace %s does not name the method", n.Params)
	}
	h.notify("$/setTrace", map[string]any{"value": "off"})
	before := len(h.notesOf("$/logTrace"))
	h.mustCall(MethodStatus, nil, nil)
	h.mustCall(MethodStatus, nil, nil)
	if after := len(h.notesOf("$/logTrace")); after != before {
		t.Errorf("trace off still sent %d logTrace", after-before)
	}
}

func TestWorkDoneProgressWhileIndexing(t *testing.T) {
	for _, supported := range []bool{true, false} {
		opts, fake, _ := testOptions(t)
		// The build is still running when initialized arrives.
		fake.holdBuild = make(chan struct{})
		h := newHarness(t, opts)
		h.initialize(initOptions{progress: supported})
		if supported {
			h.waitNote(func(n notification) bool {
				return n.Method == "$/progress" && strings.Contains(string(n.Params), `"kind":"begin"`)
			})
			close(fake.holdBuild)
			h.waitNote(func(n notification) bool {
				return n.Method == "$/progress" && strings.Contains(string(n.Params), `"kind":"end"`)
			})
			calls := h.serverCalls()
			if len(calls) == 0 || calls[0].Method != "window/workDoneProgress/create" {
				t.Error("progress sent without window/workDoneProgress/create")
			}
			if begin := h.notesOf("$/progress"); !strings.Contains(string(begin[0].Params), `"kind":"begin"`) {
				t.Errorf("first progress = %s, want begin", begin[0].Params)
			}
		} else {
			// Wait for the build to run and a round trip after it, then
			// check nothing was asked.
			close(fake.holdBuild)
			fake.waitBuilt(t)
			h.mustCall(MethodStatus, nil, nil)
			if n := len(h.serverCalls()); n != 0 || len(h.notesOf("$/progress")) != 0 {
				t.Errorf("client without workDoneProgress got %d requests and progress", n)
			}
		}
	}
}

func TestRPCTrace(t *testing.T) {
	opts, _, _ := testOptions(t)
	path := filepath.Join(t.TempDir(), "trace.jsonl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	opts.Trace = f
	h := newHarness(t, opts)
	h.initialize(initOptions{})
	if code := h.shutdownExit(); code != 0 {
		t.Fatalf("exit code %d", code)
	}
	_ = f.Close()
	data, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer data.Close()
	types := map[string]int{}
	sc := bufio.NewScanner(data)
	for sc.Scan() {
		var line struct { // a line of the trace LSP inspectors load (§4.3)
			IsLSPMessage bool            `json:"isLSPMessage"`
			Type         string          `json:"type"`
			Message      json.RawMessage `json:"message"`
			Timestamp    int64           `json:"timestamp"`
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatalf("trace line %q: %v", sc.Text(), err)
		}
		if !line.IsLSPMessage || line.Timestamp == 0 || len(line.Message) == 0 {
			t.Errorf("incomplete trace line %q", sc.Text())
		}
		types[line.Type]++
	}
	for _, want := range []string{"receive-request", "send-response", "receive-notification"} {
		if types[want] == 0 {
			t.Errorf("no %s in trace: %v", want, types)
		}
	}
}

func TestBadInputKeepsServing(t *testing.T) {
	opts, _, _ := testOptions(t)
	c := newWireClient(t, opts)
	c.initializeWith(nil)
	steps := []struct {
		msg  map[string]any
		code int // expected error code of the response, 0 for none sent
	}{
		{map[string]any{"method": "$/cancelRequest", "params": map[string]any{"id": map[string]any{"not": "an id"}}}, 0},
		{map[string]any{"method": "textDocument/didChange", "params": map[string]any{"textDocument": map[string]any{"uri": "file:///never-opened.md", "version": 2}, "contentChanges": []any{}}}, 0},
		{map[string]any{"method": "textDocument/didOpen", "params": "not an object"}, 0},
		{map[string]any{"id": 2, "method": "textDocument/completion", "params": "not an object"}, -32602},
		{map[string]any{"id": 3, "method": "textDocument/references", "params": map[string]any{}}, -32601},
		{map[string]any{"id": 4, "method": MethodPrepare, "params": map[string]any{"text": "a", "content": []any{}}}, -32602},
		{map[string]any{"id": 5, "method": MethodPrepare, "params": map[string]any{"text": "a", "mode": "rewrite"}}, -32602},
		{map[string]any{"id": 6, "method": MethodFiles, "params": map[string]any{"query": "", "limit": -1}}, -32602},
	}
	for _, s := range steps {
		c.send(s.msg)
		if s.code == 0 {
			continue
		}
		id := strconv.Itoa(int(s.msg["id"].(int)))
		m := c.readResponse(id)
		if m.Error == nil || m.Error.Code != s.code {
			t.Errorf("%v: answered %+v, want code %d", s.msg["method"], m.Error, s.code)
		}
	}
	// Still serving.
	c.send(map[string]any{"id": 9, "method": MethodStatus, "params": map[string]any{}})
	if m := c.readResponse("9"); m.Error != nil || len(m.Result) == 0 {
		t.Fatalf("status after bad input: %+v", m.Error)
	}
}

// TestIndexBuildsWithoutInitialized covers hosts that skip the initialized
// notification: the index builds anyway.
func TestIndexBuildsWithoutInitialized(t *testing.T) {
	opts, _, _ := testOptions(t)
	h := newHarness(t, opts)
	if err := h.call("initialize", initParams(initOptions{}), nil); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, h, func(st statusResult) bool { return !st.Building && st.SessionsIndexed == 5 })
	var cands []json.RawMessage
	h.mustCall(MethodCandidates, map[string]any{"query": ""}, &cands)
	if len(cands) == 0 {
		t.Fatal("no candidates without initialized")
	}
}
