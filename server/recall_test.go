package server

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/dsh-refls/dsh-refls/internal/dshgen"
)

// searchOpts serves the test store plus a session whose body holds text a
// title never does.
func searchOpts(t *testing.T) (Options, string) {
	t.Helper()
	opts, fake, ws := testOptions(t)
	fake.add(t, dshgen.NewSession("s-bucket").Cwd(testCwd).CreatedAt(time.Now().Add(-6*time.Hour).UnixMilli()).
		Turn(func(tt *dshgen.Turn) {
			tt.UserText("How should the token bucket refill? <script>alert(1)</script>")
			tt.Title("Rate limiting", "provider")
			tt.AssistantText("Refill lazily, per request.")
		}))
	return opts, ws
}

// TestSearchOverWire: dsh/search answers with recallSearch left at its
// default, which is on (issue 13).
func TestSearchOverWire(t *testing.T) {
	opts, ws := searchOpts(t)
	h := newHarness(t, opts)
	h.initialize(initOptions{root: ws, settings: map[string]any{"sessionId": "s-target"}})

	var res []searchResult
	h.mustCall(MethodSearch, map[string]any{"query": "Token Bucket"}, &res)
	if len(res) != 1 || res[0].SessionID != "s-bucket" || res[0].Label != "Rate limiting" || res[0].Cwd == nil || *res[0].Cwd != testCwd {
		t.Fatalf("search = %+v", res)
	}
	m := res[0].Matches
	if len(m) != 1 || m[0].Role != "user" || !strings.Contains(m[0].Excerpt, "<script>") || len(m[0].Ranges) != 2 {
		t.Fatalf("matches = %+v", m)
	}
	u := []rune(m[0].Excerpt) // ASCII before the hits: UTF-16 units are runes
	for i, want := range []string{"token", "bucket"} {
		if got := string(u[m[0].Ranges[i][0]:m[0].Ranges[i][1]]); got != want {
			t.Errorf("range %d holds %q, want %q", i, got, want)
		}
	}
	// Words in different messages of one session; newest first.
	h.mustCall(MethodSearch, map[string]any{"query": "please fix"}, &res)
	if len(res) != 2 || res[0].SessionID != "s-alpha" || res[1].SessionID != "s-beta" {
		t.Errorf("please fix = %+v", res)
	}
	h.mustCall(MethodSearch, map[string]any{"query": "please fix", "limit": 1}, &res)
	if len(res) != 1 || res[0].SessionID != "s-alpha" {
		t.Errorf("limit 1 = %+v", res)
	}
	h.mustCall(MethodSearch, map[string]any{"query": "please fix", "sessionId": "s-beta"}, &res)
	if len(res) != 1 || res[0].SessionID != "s-beta" {
		t.Errorf("sessionId = %+v", res)
	}
	// A one-letter query scans; it is never an error.
	h.mustCall(MethodSearch, map[string]any{"query": "q"}, &res)
	if len(res) != 1 || res[0].SessionID != "s-bucket" {
		t.Errorf("q = %+v", res)
	}
	for _, tt := range []struct {
		name   string
		params map[string]any
		rpc    int
		code   string
	}{
		{"no query", map[string]any{}, -32011, "SESSION_REFERENCE_INVALID_REFERENCE"},
		{"empty query", map[string]any{"query": "  "}, -32011, "SESSION_REFERENCE_INVALID_REFERENCE"},
		{"bad limit", map[string]any{"query": "x", "limit": 0}, -32011, "SESSION_REFERENCE_INVALID_REFERENCE"},
		{"NUL", map[string]any{"query": "a\x00b"}, -32011, "SESSION_REFERENCE_INVALID_REFERENCE"},
	} {
		err := h.call(MethodSearch, tt.params, nil)
		if code, scode := rpcError(t, err); int(code) != tt.rpc || scode != tt.code {
			t.Errorf("%s: got %d/%s (%v)", tt.name, code, scode, err)
		}
	}
}

func TestCandidatesAndCompletionGainBodyMatches(t *testing.T) {
	opts, ws := searchOpts(t)
	h := newHarness(t, opts)
	h.initialize(initOptions{root: ws, labelDetails: true, markdown: true, settings: map[string]any{"sessionId": "s-target", "recallSearch": true}})
	var res []searchResult
	h.mustCall(MethodSearch, map[string]any{"query": "lazily"}, &res) // waits for the body index

	candidates := func(q string) []bodyCandidate {
		var cands []bodyCandidate // fresh: decoding into a used slice keeps old pointers
		h.mustCall(MethodCandidates, map[string]any{"query": q}, &cands)
		return cands
	}
	cands := candidates("rate")
	if len(cands) != 1 || cands[0].SessionID != "s-bucket" || cands[0].Match != nil {
		t.Errorf("title match = %+v", cands)
	}
	// "written" is in s-beta's answer and s-target's, never in a title;
	// the target itself is never offered.
	cands = candidates("written")
	if len(cands) != 1 || cands[0].SessionID != "s-beta" || cands[0].Match == nil || cands[0].Match.Role != "assistant" {
		t.Fatalf("body match = %+v", cands)
	}
	// Title matches first, then body matches of other sessions.
	cands = candidates("parser")
	if len(cands) != 1 || cands[0].SessionID != "s-alpha" || cands[0].Match != nil {
		t.Errorf("parser = %+v", cands)
	}
	cands = candidates("fix")
	if len(cands) != 2 || cands[0].SessionID != "s-alpha" || cands[0].Match != nil || cands[1].SessionID != "s-beta" || cands[1].Match == nil {
		t.Errorf("fix = %+v", cands)
	}

	pos := h.open("file:///c.md", "see @refill"+cursor, EncodingUTF16)
	var list completionList
	h.mustCall("textDocument/completion", map[string]any{"textDocument": map[string]any{"uri": "file:///c.md"}, "position": pos}, &list)
	// A body match's label is the text that matched (so that a client
	// highlighting the typed word highlights why the row is there), the
	// title follows it.
	var found *completionItem
	for i := range list.Items {
		if d := list.Items[i].LabelDetails; d != nil && d.Detail == " in Rate limiting" {
			found = &list.Items[i]
		}
	}
	if found == nil || found.Label != "“…token bucket refill? <script>alert(1)</script>”" {
		t.Fatalf("completion items = %+v", list.Items)
	}
	if doc := found.Documentation; doc == nil || doc.Kind != "markdown" || !strings.Contains(doc.Value, "**refill**") || strings.Contains(doc.Value, "<script>") {
		t.Errorf("documentation = %+v", found.Documentation)
	}
}

// TestRecallSearchOffBuildsNothing: off when configured so, on when asked, off again
// when set to false. Off, nothing is stored: the stored index appears
// (0600) only once it is on, and switching off removes it.
func TestRecallSearchOffBuildsNothing(t *testing.T) {
	opts, ws := searchOpts(t)
	stored := filepath.Join(t.TempDir(), "cache", "recall-test.idx")
	opts.RecallPath = func(string) (string, error) { return stored, nil }
	h := newHarness(t, opts)
	h.initialize(initOptions{root: ws, settings: map[string]any{"sessionId": "s-target", "recallSearch": false}})
	var st statusResult
	h.mustCall(MethodStatus, nil, &st)
	if st.Recall != nil {
		t.Errorf("status with recallSearch off = %+v", st.Recall)
	}
	err := h.call(MethodSearch, map[string]any{"query": "token"}, nil)
	if code, scode := rpcError(t, err); code != CodeInvalidConfig || scode != "SESSION_REFERENCE_INVALID_CONFIG" {
		t.Errorf("search while off: %d/%s", code, scode)
	}
	var cands []bodyCandidate
	h.mustCall(MethodCandidates, map[string]any{"query": "lazily"}, &cands)
	if len(cands) != 0 {
		t.Errorf("candidates while off = %+v", cands)
	}
	if _, err := os.Lstat(filepath.Dir(stored)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("recallSearch off, yet the store directory exists (%v)", err)
	}
	// Switched on, the index is built and searched; off again, it is gone.
	h.notify("workspace/didChangeConfiguration", map[string]any{"settings": map[string]any{"dsh": map[string]any{"sessionId": "s-target", "recallSearch": true}}})
	var res []searchResult
	deadline := time.Now().Add(testTimeout)
	for {
		err := h.call(MethodSearch, map[string]any{"query": "lazily"}, &res)
		if err == nil && len(res) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("search after switching on: %v %+v", err, res)
		}
		time.Sleep(10 * time.Millisecond)
	}
	for {
		_, err := os.Stat(stored)
		if err == nil {
			// The index and its text file, both private.
			names, _ := filepath.Glob(filepath.Join(filepath.Dir(stored), "recall-test*"))
			if len(names) != 2 {
				t.Errorf("stored recall files %v, want the index and its text file", names)
			}
			for _, n := range names {
				if info, err := os.Stat(n); err != nil || runtime.GOOS != "windows" && info.Mode().Perm() != 0o600 {
					t.Errorf("stored recall file %s: %v, want mode 0600", n, err)
				}
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("recall index not stored after switching on: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	h.notify("workspace/didChangeConfiguration", map[string]any{"settings": map[string]any{"dsh": map[string]any{"recallSearch": false}}})
	for {
		h.mustCall(MethodStatus, nil, &st)
		left, _ := os.ReadDir(filepath.Dir(stored))
		if st.Recall == nil && len(left) == 0 {
			break
		}
		if time.Now().After(deadline) {
			raw, _ := json.Marshal(st.Recall)
			t.Fatalf("recall index kept after switching off: %s", raw)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestRecallSyncsWhileItsSaveIsPutOff: after the first build, while
// requests keep coming (someone typing), the save of the stored index is
// put off, yet a session that grows is synced and searchable at once (the
// loop does not wait for the save); once the requests stop, the index is
// stored.
func TestRecallSyncsWhileItsSaveIsPutOff(t *testing.T) {
	opts, fake, ws := testOptions(t)
	opts.Watch = "fsnotify"
	created := time.Now().Add(-6 * time.Hour).UnixMilli()
	bucket := func(extra string) *dshgen.Session { // the same session, grown by extra
		s := dshgen.NewSession("s-bucket").Cwd(testCwd).CreatedAt(created).
			Turn(func(tt *dshgen.Turn) {
				tt.UserText("How should the token bucket refill?")
				tt.Title("Rate limiting", "provider")
				tt.AssistantText("Refill lazily, per request.")
			})
		if extra != "" {
			s = s.Turn(func(tt *dshgen.Turn) { tt.UserText(extra); tt.AssistantText("ok") })
		}
		return s
	}
	fake.add(t, bucket(""))
	stored := filepath.Join(t.TempDir(), "cache", "recall-test.idx")
	opts.RecallPath = func(string) (string, error) { return stored, nil }
	h := newHarness(t, opts)
	h.initialize(initOptions{root: ws, settings: map[string]any{"sessionId": "s-target"}})
	// gap is the longest time between two requests since the first: a
	// machine stalled for longer than recallSaveQuiet lets the save run.
	var last time.Time
	var gap time.Duration
	search := func(q string) []searchResult {
		if !last.IsZero() {
			gap = max(gap, time.Since(last))
		}
		var res []searchResult
		h.mustCall(MethodSearch, map[string]any{"query": q}, &res)
		last = time.Now()
		return res
	}
	deadline := time.Now().Add(testTimeout)
	for len(search("lazily")) != 1 {
		if time.Now().After(deadline) {
			t.Fatal("the first build never made s-bucket searchable")
		}
	}
	// Typing: a search at least every 20 ms from here on, well within
	// recallSaveQuiet of each other.
	built := time.Now()
	fake.add(t, bucket("the zebrafish question"))
	for len(search("zebrafish")) != 1 {
		if time.Since(built) > recallSaveMostDelay/2 {
			t.Fatalf("the grown session was not searchable %v after it grew, while requests kept coming", time.Since(built))
		}
		time.Sleep(20 * time.Millisecond) // the typing's pace, not a synchronisation
	}
	if _, err := os.Stat(stored); err == nil && gap < recallSaveQuiet {
		t.Errorf("the index was stored while requests kept coming (at most %v apart)", gap)
	}
	// The typing stops: the save runs once it has been quiet.
	for {
		if _, err := os.Stat(stored); err == nil {
			break
		}
		if time.Since(built) > recallSaveMostDelay+testTimeout {
			t.Fatal("the recall index was never stored after the requests stopped")
		}
		time.Sleep(50 * time.Millisecond)
	}
}
