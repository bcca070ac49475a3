package server

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/dsh-refls/dsh-refls/internal/dshgen"
	"github.com/dsh-refls/dsh-refls/internal/lsptest"
	"github.com/dsh-refls/dsh-refls/sessionref"
	"github.com/dsh-refls/dsh-refls/sessionref/titles"
)

// stillWaiting is how long a test watches a request that must wait for the
// first build; long enough that an answer given at once would have
// arrived.
const stillWaiting = 200 * time.Millisecond

// callResult is the outcome of a request run in the background.
type callResult struct {
	raw json.RawMessage
	err error
}

// callAsync sends a request in the background.
func (h *harness) callAsync(method string, params any) <-chan callResult {
	ch := make(chan callResult, 1)
	go func() {
		var raw json.RawMessage
		err := h.call(method, params, &raw)
		ch <- callResult{raw, err}
	}()
	return ch
}

// TestRequestsWaitForFirstBuild holds the first index build: prepare,
// hover and dsh/candidates wait for it and then answer from the built
// index, while completion answers at once, marked incomplete.
func TestRequestsWaitForFirstBuild(t *testing.T) {
	opts, fake, ws := testOptions(t)
	fake.holdBuild = make(chan struct{})
	h := newHarness(t, opts)
	h.initialize(initOptions{root: ws, settings: map[string]any{"sessionId": "s-target", "cwd": "/home/dev/proj"}})

	mention := sessionref.Mention("Fix the parser", "s-alpha")
	prepare := h.callAsync(MethodPrepare, map[string]any{"text": "see " + mention})
	candidates := h.callAsync(MethodCandidates, map[string]any{"query": "parser"})
	pos := h.open("file:///w.md", "see @[Fix"+cursor+mention[len("@[Fix"):], EncodingUTF16)
	hover := h.callAsync("textDocument/hover", map[string]any{"textDocument": map[string]any{"uri": "file:///w.md"}, "position": pos})

	cpos := h.open("file:///c.md", "@par"+cursor, EncodingUTF16)
	var list wireList
	h.mustCall("textDocument/completion", map[string]any{"textDocument": map[string]any{"uri": "file:///c.md"}, "position": cpos}, &list)
	if !list.IsIncomplete {
		t.Error("completion during the first build is not marked incomplete")
	}

	select {
	case r := <-prepare:
		t.Fatalf("prepare answered before the first build finished: %s %v", r.raw, r.err)
	case r := <-hover:
		t.Fatalf("hover answered before the first build finished: %s %v", r.raw, r.err)
	case r := <-candidates:
		t.Fatalf("dsh/candidates answered before the first build finished: %s %v", r.raw, r.err)
	case <-time.After(stillWaiting):
	}
	close(fake.holdBuild)

	r := <-prepare
	if r.err != nil {
		t.Fatalf("prepare after the build: %v", r.err)
	}
	var prep PrepareResult
	if err := json.Unmarshal(r.raw, &prep); err != nil {
		t.Fatal(err)
	}
	if len(prep.References) != 1 || prep.References[0].SessionID != "s-alpha" || prep.AdditionalContext == nil {
		t.Errorf("prepare = %s, want one reference to s-alpha with context", r.raw)
	}
	r = <-hover
	if r.err != nil || !strings.Contains(string(r.raw), "all 4 messages kept") {
		t.Errorf("hover after the build = %s %v, want the recall facts", r.raw, r.err)
	}
	r = <-candidates
	if r.err != nil || !strings.Contains(string(r.raw), `"sessionId":"s-alpha"`) {
		t.Errorf("candidates after the build = %s %v", r.raw, r.err)
	}
	h.mustCall("textDocument/completion", map[string]any{"textDocument": map[string]any{"uri": "file:///c.md"}, "position": cpos}, &list)
	if !slices.Contains(labelsOf(list), "Fix the parser") {
		t.Errorf("completion after the build lacks the built session: %v", labelsOf(list))
	}
}

// TestPrepareWaitIsCancellable cancels a prepare that waits for the first
// build: it is answered RequestCancelled, and the server keeps serving.
func TestPrepareWaitIsCancellable(t *testing.T) {
	opts, fake, _ := testOptions(t)
	fake.holdBuild = make(chan struct{})
	c := newWireClient(t, opts)
	c.initializeWith(map[string]any{"sessionId": "s-target"})
	text := "see " + sessionref.Mention("Fix the parser", "s-alpha")
	c.send(map[string]any{"id": "waiting", "method": MethodPrepare, "params": map[string]any{"text": text}})
	// The wire is read in order: once a later dsh/status is answered, the
	// prepare has been read and is waiting for the held build.
	c.send(map[string]any{"id": "st", "method": MethodStatus, "params": map[string]any{}})
	c.readResponse(`"st"`)
	c.send(map[string]any{"method": "$/cancelRequest", "params": map[string]any{"id": "waiting"}})
	if m := c.readResponse(`"waiting"`); m.Error == nil || m.Error.Code != -32800 || len(m.Result) != 0 {
		t.Fatalf("cancelled wait answered %+v %s, want -32800 and no result", m.Error, m.Result)
	}
	close(fake.holdBuild)
	c.send(map[string]any{"id": "after", "method": MethodPrepare, "params": map[string]any{"text": text}})
	if m := c.readResponse(`"after"`); m.Error != nil || !strings.Contains(string(m.Result), "s-alpha") {
		t.Fatalf("prepare after the build: %+v %s", m.Error, m.Result)
	}
}

// TestDiagnosticsWaitForFirstBuild opens a document during the first
// build: its diagnostics come from the built index (no false "unknown
// session"), and only once it is built.
func TestDiagnosticsWaitForFirstBuild(t *testing.T) {
	opts, fake, _ := testOptions(t)
	fake.holdBuild = make(chan struct{})
	h := newHarness(t, opts)
	h.initialize(initOptions{settings: map[string]any{"sessionId": "s-target"}})
	text := sessionref.Mention("Fix the parser", "s-alpha") + " and " + sessionref.Mention("ghost", "no-such-session")
	h.notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{
		"uri": "file:///d.md", "languageId": "markdown", "version": 1, "text": text}})
	// A document without session mentions, opened after d.md, is
	// diagnosed without the index: once its diagnostics are out, d.md's
	// (scheduled first, with the same debounce) were due as well, and
	// must still be waiting for the build.
	h.notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{
		"uri": "file:///plain.md", "languageId": "markdown", "version": 1, "text": "no mentions here"}})
	h.diagnosticsFor("file:///plain.md", 1)
	for _, n := range h.notesOf("textDocument/publishDiagnostics") {
		if strings.Contains(string(n.Params), "file:///d.md") {
			t.Fatalf("diagnostics published before the first build: %s", n.Params)
		}
	}
	close(fake.holdBuild)
	p := h.diagnosticsFor("file:///d.md", 1)
	if len(p.Diagnostics) != 1 || p.Diagnostics[0].Code != string(sessionref.CodeReadFailed) ||
		!strings.Contains(p.Diagnostics[0].Message, "no-such-session") {
		t.Errorf("diagnostics %+v, want one READ_FAILED for the unknown session only", p.Diagnostics)
	}
}

// heldRun is a session index whose Run starts only once release is
// closed: its first build cannot finish before then.
type heldRun struct {
	Sessions
	release <-chan struct{}
}

// Run implements Sessions.
func (h *heldRun) Run(ctx context.Context) error {
	select {
	case <-h.release:
	case <-ctx.Done():
		return nil
	}
	return h.Sessions.Run(ctx)
}

// TestPrepareRightAfterInitializeRealStore sends dsh/prepare while the
// first build of a live index over a real store has not finished (its Run
// is held until a dsh/status sent after the prepare says it is building):
// the answer is the prepared message, not READ_FAILED.
func TestPrepareRightAfterInitializeRealStore(t *testing.T) {
	store := t.TempDir()
	exp, err := dshgen.DemoStoreFor(store, dshgen.DefaultDemoWorkspace, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	var ref dshgen.Expected
	for _, e := range exp {
		if e.HasTitle && e.Title != "" {
			ref = e
			break
		}
	}
	release := make(chan struct{})
	open := func(cfg SessionsConfig) (Sessions, error) {
		sess, err := NewLiveSessionsFactory(false)(cfg)
		if err != nil {
			return nil, err
		}
		return &heldRun{Sessions: sess, release: release}, nil
	}
	h := newHarness(t, Options{Logger: zap.NewNop(), SessionsRoot: store, OpenSessions: open})
	h.initialize(initOptions{settings: map[string]any{"sessionId": "prepare-target", "spillDir": t.TempDir()}})
	// The prepare goes out first, then dsh/status, from one goroutine: the
	// wire is read in order, so the status answer (while the build is
	// held) says the prepare came during the first build.
	if err := h.editor.Send(map[string]any{"id": "prep", "method": MethodPrepare,
		"params": map[string]any{"text": "continue " + sessionref.Mention(ref.Title, ref.ID)}}); err != nil {
		t.Fatal(err)
	}
	var st statusResult
	h.mustCall(MethodStatus, nil, &st)
	if !st.Building {
		t.Fatalf("status %+v: the first build is not held", st)
	}
	if n := h.editor.Count(lsptest.Response(`"prep"`)); n != 0 {
		t.Fatalf("prepare answered during the first build (%d answers)", n)
	}
	close(release)
	m := h.await(lsptest.Response(`"prep"`))
	var prep PrepareResult
	if err := m.DecodeResult(&prep); err != nil {
		t.Fatalf("prepare: %v", err)
	}
	if len(prep.References) != 1 || prep.References[0].SessionID != ref.ID || prep.AdditionalContext == nil {
		t.Fatalf("prepare = %+v, want the one reference %s with its snapshot", prep, ref.ID)
	}
}

// TestCandidatesAnswerFromTheRestoredIndex restarts over a stored index
// with the first build held: dsh/candidates answers at once with every
// session the stored index lists (a clean shutdown leaves it current),
// and a session written while no server ran shows once the build has
// checked the logs. Prepare still waits for the build.
func TestCandidatesAnswerFromTheRestoredIndex(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	opts, fake, ws := testOptions(t)
	ix := titles.NewIndex(fake.root, titles.IndexOptions{})
	if err := ix.Build(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	path, err := titles.DefaultCachePath(fake.root)
	if err != nil {
		t.Fatal(err)
	}
	if err := ix.SaveCache(path); err != nil {
		t.Fatal(err)
	}
	fake.add(t, dshgen.NewSession("s-later").Cwd(testCwd).CreatedAt(time.Now().UnixMilli()).
		Turn(func(t *dshgen.Turn) {
			t.UserText("written while no server ran")
			t.Title("Written later", "provider")
		}))
	fake.useCache = true
	fake.holdReading = make(chan struct{})
	h := newHarness(t, opts)
	h.initialize(initOptions{root: ws, settings: map[string]any{"sessionId": "s-target"}})

	prepare := h.callAsync(MethodPrepare, map[string]any{"text": "see " + sessionref.Mention("Fix the parser", "s-alpha")})
	var before []titles.Candidate
	select {
	case r := <-h.callAsync(MethodCandidates, map[string]any{"query": ""}):
		if r.err != nil {
			t.Fatal(r.err)
		}
		if err := json.Unmarshal(r.raw, &before); err != nil {
			t.Fatal(err)
		}
	case <-time.After(testTimeout):
		close(fake.holdReading)
		t.Fatal("dsh/candidates waited for the first build over a restored index")
	}
	ids := func(cs []titles.Candidate) []string {
		var out []string
		for _, c := range cs {
			out = append(out, c.SessionID)
		}
		slices.Sort(out)
		return out
	}
	if got, want := ids(before), []string{"s-alpha", "s-beta", "s-delta", "s-gamma"}; !slices.Equal(got, want) {
		t.Errorf("candidates from the restored index = %v, want the %v it stored", got, want)
	}
	select {
	case r := <-prepare:
		t.Fatalf("prepare answered before the first build finished: %s %v", r.raw, r.err)
	case <-time.After(stillWaiting):
	}
	close(fake.holdReading)
	fake.waitBuilt(t)
	if r := <-prepare; r.err != nil {
		t.Fatalf("prepare after the build: %v", r.err)
	}
	var after []titles.Candidate
	h.mustCall(MethodCandidates, map[string]any{"query": ""}, &after)
	if got := ids(after); !slices.Contains(got, "s-later") || len(got) != 5 {
		t.Errorf("candidates after the build = %v, want the stored four and s-later", got)
	}
}
