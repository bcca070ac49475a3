package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dsh-refls/dsh-refls/internal/longtest"
	"github.com/dsh-refls/dsh-refls/server/internal/lspwire"
)

// oversizedRequest is a request whose body is just over lspwire.MaxMessageBytes,
// with its id after the huge member so the id has to be found by scanning.
func oversizedRequest(id string, isNotification bool) []byte {
	pad := strings.Repeat("a", lspwire.MaxMessageBytes)
	idPart := `,"id":` + strconv.Quote(id)
	if isNotification {
		idPart = ""
	}
	body := `{"jsonrpc":"2.0","method":"textDocument/hover","params":{"text":"` + pad + `\"}"}` + idPart + `}`
	return rawFrame(body)
}

// TestAbuseFramesKeepTheConnection sends frames that are well framed but
// not acceptable messages: each is answered (or, for a notification, only
// logged) with the JSON-RPC error that fits, and the connection keeps
// serving.
func TestAbuseFramesKeepTheConnection(t *testing.T) {
	opts, _, ws := testOptions(t)
	c := newWireClient(t, opts)
	c.initialize(ws)
	tests := []struct {
		name   string
		input  []byte
		code   int    // 0: no answer expected
		id     string // expected id, raw JSON
		logged string // expected in a Warn log entry
	}{
		{"invalid JSON", rawFrame(`{"jsonrpc":"2.0","id":1,"method":`), -32700, "null", "invalid JSON"},
		{"empty body", rawFrame(""), -32700, "null", "invalid JSON"},
		{"JSON that is not an object", rawFrame(`42`), -32600, "null", "not a JSON-RPC message"},
		{"wrong jsonrpc version", rawFrame(`{"jsonrpc":"1.0","id":"v1","method":"dsh/status"}`), -32600, `"v1"`, "not a JSON-RPC message"},
		{"missing jsonrpc member", rawFrame(`{"id":"v2","method":"dsh/status"}`), -32600, `"v2"`, "not a JSON-RPC message"},
		{"method and result together", rawFrame(`{"jsonrpc":"2.0","id":"v3","method":"dsh/status","result":1}`), -32600, `"v3"`, "not a JSON-RPC message"},
		{"id that is an object", rawFrame(`{"jsonrpc":"2.0","id":{"a":1},"method":"dsh/status"}`), -32600, "null", "not a JSON-RPC message"},
		{"method that is a number", rawFrame(`{"jsonrpc":"2.0","id":"v4","method":7}`), -32600, `"v4"`, "not a JSON-RPC message"},
		{"batch that is not JSON", rawFrame(`[{"jsonrpc":"2.0",`), -32700, "null", "not a JSON-RPC batch"},
		{"empty batch", rawFrame(`[]`), -32600, "null", ""},
		{"unknown method", frameBytes(t, map[string]any{"id": "u1", "method": "dsh/nonesuch"}), -32601, `"u1"`, ""},
		{"unknown notification", frameBytes(t, map[string]any{"method": "dsh/nonesuch"}), 0, "", ""},
		{"malformed $/cancelRequest", frameBytes(t, map[string]any{"method": "$/cancelRequest", "params": "x"}), 0, "", ""},
		{"request before it is complete, then the rest", append(rawFrame(`{"jsonrpc":"2.0","id":"late","method":"dsh/nonesuch"}`)[:10:10], rawFrame(`{"jsonrpc":"2.0","id":"late","method":"dsh/nonesuch"}`)[10:]...), -32601, `"late"`, ""},
		{"oversized request, id after the body", nil, -32600, `"big"`, "exceeds the maximum"},
		{"oversized notification", nil, 0, "", "exceeds the maximum"},
	}
	// The two 64 MiB frames are built in their subtests, which run in the
	// long step only (building them alone takes seconds under -race).
	oversized := map[string]func() []byte{
		"oversized request, id after the body": func() []byte { return oversizedRequest("big", false) },
		"oversized notification":               func() []byte { return oversizedRequest("", true) },
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if build, ok := oversized[tt.name]; ok {
				longtest.Require(t)
				tt.input = build()
			}
			c.t = t
			c.write(tt.input)
			if tt.code != 0 {
				m := c.response()
				if m.Error == nil || m.Error.Code != tt.code || string(m.ID) != tt.id {
					t.Fatalf("answered id %s error %+v, want id %s code %d", m.ID, m.Error, tt.id, tt.code)
				}
			}
			c.statusProbe(fmt.Sprintf("probe-%d", i))
			if tt.logged != "" && !c.hasLog(tt.logged) {
				t.Errorf("no warning mentioning %q was logged", tt.logged)
			}
		})
	}
	c.t = t
}

// TestAbuseBatchMixesAnswersAndErrors: a batch with a valid call and a
// member that is not a request is answered with one array holding both.
func TestAbuseBatchMixesAnswersAndErrors(t *testing.T) {
	opts, _, ws := testOptions(t)
	c := newWireClient(t, opts)
	c.initialize(ws)
	c.write(rawFrame(`[{"jsonrpc":"2.0","id":"b1","method":"dsh/status"},5,{"jsonrpc":"2.0","method":"dsh/nonesuch"}]`))
	var arr []rawMessage
	raw := c.next()
	if err := json.Unmarshal(raw, &arr); err != nil {
		t.Fatalf("batch answer is not an array: %v", err)
	}
	if len(arr) != 2 {
		t.Fatalf("batch answered with %d members, want 2: %s", len(arr), raw)
	}
	var gotResult, gotError bool
	for _, m := range arr {
		t.Logf("batch member answer: id %s error %+v", m.ID, m.Error)
		switch {
		case string(m.ID) == `"b1"` && m.Error == nil && len(m.Result) > 0:
			gotResult = true
		// JSON-RPC 2.0 §6 answers a member that is not an object with
		// -32600; jsonrpc2 v1.0.1 answers -32700. Either keeps the batch.
		case string(m.ID) == "null" && m.Error != nil && (m.Error.Code == -32600 || m.Error.Code == -32700):
			gotError = true
		}
	}
	if !gotResult || !gotError {
		t.Fatalf("batch answer %s, want b1's result and a null-id error", raw)
	}
	c.statusProbe("after-batch")
}

// TestAbuseDuplicateIDs: two requests in flight under one id are both
// answered, and the drain at end of input waits for both.
func TestAbuseDuplicateIDs(t *testing.T) {
	opts, fake, ws := testOptions(t)
	fake.snapshotDelay = 100 * time.Millisecond
	c := newWireClient(t, opts)
	c.initialize(ws)
	for range 3 {
		c.send(map[string]any{"id": "dup", "method": MethodCandidates, "params": map[string]any{"query": ""}})
	}
	frames, res := c.rest()
	answers := 0
	for _, f := range frames {
		var m rawMessage
		if json.Unmarshal(f, &m) == nil && string(m.ID) == `"dup"` {
			if m.Error != nil {
				t.Errorf("a duplicate-id request failed: %+v", m.Error)
			}
			answers++
		}
	}
	if answers != 3 {
		t.Fatalf("3 requests with id \"dup\" got %d answers", answers)
	}
	if res.code != 1 {
		t.Errorf("exit code at end of input without shutdown = %d, want 1", res.code)
	}
}

// TestAbuseRequestsAfterShutdown: after shutdown every request gets
// InvalidRequest, notifications are ignored, and exit ends with code 0.
func TestAbuseRequestsAfterShutdown(t *testing.T) {
	opts, _, ws := testOptions(t)
	c := newWireClient(t, opts)
	c.initialize(ws)
	c.send(map[string]any{"id": "down", "method": "shutdown"})
	if m := c.response(); m.Error != nil {
		t.Fatalf("shutdown: %+v", m.Error)
	}
	for i, method := range []string{MethodStatus, "textDocument/completion", "shutdown", "initialize", "dsh/nonesuch"} {
		c.send(map[string]any{"id": i, "method": method, "params": map[string]any{}})
		m := c.response()
		if string(m.ID) != strconv.Itoa(i) || m.Error == nil || m.Error.Code != -32600 {
			t.Errorf("%s after shutdown answered id %s error %+v, want -32600", method, m.ID, m.Error)
		}
	}
	c.send(map[string]any{"method": "textDocument/didOpen", "params": map[string]any{"textDocument": map[string]any{"uri": "file:///x.md", "version": 1, "text": "@"}}})
	c.send(map[string]any{"method": "exit"})
	frames, res := c.rest()
	if len(frames) != 0 {
		t.Errorf("frames after exit: %s", frames)
	}
	if res.code != 0 {
		t.Errorf("exit code after shutdown and exit = %d, want 0", res.code)
	}
}

// TestAbuseLostFramingEndsCleanly: input whose framing is lost ends the
// connection with an error naming the cause, after the requests read
// before it are answered; nothing but frames reaches the output.
func TestAbuseLostFramingEndsCleanly(t *testing.T) {
	tests := []struct {
		name  string
		input []byte
		want  string
	}{
		{"garbage without a newline", bytes.Repeat([]byte("garbage "), 2000), "not an LSP header"},
		{"binary garbage", []byte("\x00\x01\x02\xff\xfe\r\n\r\n"), "is not a header field"},
		{"HTTP request", []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"), "is not a header field"},
		{"missing Content-Length", []byte("Content-Type: application/json\r\n\r\n{}"), "no Content-Length field"},
		{"negative Content-Length", []byte("Content-Length: -5\r\n\r\n{}"), "invalid Content-Length"},
		{"non-numeric Content-Length", []byte("Content-Length: 12abc\r\n\r\n{}"), "invalid Content-Length"},
		{"huge Content-Length", []byte("Content-Length: 99999999999999999999999\r\n\r\n{}"), "invalid Content-Length"},
		{"disagreeing Content-Length fields", []byte("Content-Length: 2\r\nContent-Length: 3\r\n\r\n{}"), "disagree"},
		{"too many header lines", bytes.Repeat([]byte("X-Pad: 1\r\n"), lspwire.MaxHeaderLines+1), "more than 32 header lines"},
		{"body shorter than declared", []byte("Content-Length: 100\r\n\r\n{}"), "unexpected EOF"},
		{"header cut off", []byte("Content-Length: 10\r\n"), "unexpected EOF"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts, fake, ws := testOptions(t)
			fake.snapshotDelay = 100 * time.Millisecond
			c := newWireClient(t, opts)
			c.initialize(ws)
			c.send(map[string]any{"id": "inflight", "method": MethodCandidates, "params": map[string]any{"query": ""}})
			// The server may stop reading before it has taken all of the
			// input; a write error then is expected.
			_ = c.editor.WriteRaw(tt.input)
			frames, res := c.rest()
			answered := false
			for _, f := range frames {
				var m rawMessage
				if json.Unmarshal(f, &m) == nil && string(m.ID) == `"inflight"` && m.Error == nil {
					answered = true
				}
			}
			if !answered {
				t.Errorf("the request in flight was not answered; frames: %s", frames)
			}
			if res.code != 1 {
				t.Errorf("exit code = %d, want 1", res.code)
			}
			if res.err == nil || !strings.Contains(res.err.Error(), tt.want) {
				t.Errorf("Serve returned %v, want an error mentioning %q", res.err, tt.want)
			}
			if !strings.Contains(tt.want, "EOF") && !c.hasLog(tt.want) {
				t.Errorf("the cause %q was not logged", tt.want)
			}
		})
	}
}

// completionLoad is the size of the cancellation storm: 5,000 requests,
// half of them cancelled, twice. A leak of even a few requests shows in
// the goroutine count (slack 3), so the size is there for interleavings
// of cancellations and answers; 10,000 took 54 s of the long step under
// -race for the same checks.
const completionLoad = 5000

// stormResult is what one storm observed.
type stormResult struct {
	cancelled, finishedFirst int
}

// storm sends n completion requests with ids from..from+n-1, cancelling
// every other one right after sending it, and reads their n answers. It
// fails unless every answer is a result, or -32800 for a cancelled one; it
// counts answers per id into counts.
func (c *wireClient) storm(n, from int, counts map[int]int) stormResult {
	c.t.Helper()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var buf bytes.Buffer
		for i := from; i < from+n; i++ {
			buf.Write(rawFrame(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"textDocument/completion","params":{"textDocument":{"uri":"file:///storm.md"},"position":{"line":0,"character":15}}}`, i)))
			if i%2 == 1 {
				buf.Write(rawFrame(fmt.Sprintf(`{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":%d}}`, i)))
			}
			if buf.Len() > 64<<10 || i == from+n-1 {
				if err := c.editor.WriteRaw(buf.Bytes()); err != nil {
					c.t.Errorf("writing: %v", err)
					return
				}
				buf.Reset()
			}
		}
	}()
	defer wg.Wait()
	var r stormResult
	for range n {
		m := c.response()
		id, err := strconv.Atoi(string(m.ID))
		if err != nil || id < from || id >= from+n {
			c.t.Fatalf("answer with unexpected id %s", m.ID)
		}
		counts[id]++
		switch {
		case m.Error != nil && m.Error.Code == -32800 && id%2 == 1:
			r.cancelled++
		case m.Error != nil:
			c.t.Fatalf("request %d answered %+v", id, m.Error)
		case len(m.Result) == 0 || string(m.Result) == "null":
			c.t.Fatalf("request %d answered without a result", id)
		case id%2 == 1:
			r.finishedFirst++
		}
	}
	return r
}

// TestAbuseCancellationStorm sends 5,000 completion requests and cancels
// every other one at once, twice: every request is answered exactly once
// (cancelled ones with -32800 or their result, if they finished first);
// afterwards the goroutines are back to their idle count, and the second
// storm leaves the heap where the first left it — what the first adds is
// capacity sized by the peak of requests in flight (the runtime's cache of
// goroutine descriptors, maps of in-flight ids), not memory per request.
func TestAbuseCancellationStorm(t *testing.T) {
	// The main test run storms with a fifth (1,000); the long step
	// (longtest) with the full load.
	n := completionLoad
	if testing.Short() || !longtest.Enabled() {
		n = completionLoad / 5
	}
	opts, fake, ws := testOptions(t)
	opts.MaxConcurrency = 2
	// A little work per completion, so requests queue behind the two
	// running ones and a cancellation can still find them unanswered.
	fake.snapshotDelay = 100 * time.Microsecond
	goroutinesBefore := runtime.NumGoroutine()
	c := newWireClient(t, opts)
	c.initialize(ws)
	c.send(map[string]any{"method": "textDocument/didOpen", "params": map[string]any{"textDocument": map[string]any{
		"uri": "file:///storm.md", "languageId": "markdown", "version": 1, "text": "see @src/ and @"}}})
	c.statusProbe("warm")
	// The session index is built before the idle state is measured.
	c.waitBuilt()
	idleGoroutines := runtime.NumGoroutine()
	idleHeap := heapInuse()

	counts := map[int]int{}
	first := c.storm(n, 0, counts)
	c.statusProbe("after-first-storm")
	goroutinesFirst, heapFirst := settle(idleGoroutines)
	second := c.storm(n, n, counts)
	c.statusProbe("after-second-storm")
	goroutinesSecond, heapSecond := settle(idleGoroutines)

	frames, res := c.rest()
	for _, f := range frames {
		var m rawMessage
		if json.Unmarshal(f, &m) == nil && m.Method == "" {
			if id, err := strconv.Atoi(string(m.ID)); err == nil {
				counts[id]++
			}
		}
	}
	for id := range 2 * n {
		if counts[id] != 1 {
			t.Errorf("request %d answered %d times", id, counts[id])
		}
	}
	if res.code != 1 {
		t.Errorf("exit code = %d", res.code)
	}
	t.Logf("2 × %d requests: cancelled ones answered -32800 %d and %d times (finished first %d and %d); goroutines idle %d → %d → %d; heap in use idle %d KiB → %d KiB → %d KiB",
		n, first.cancelled, second.cancelled, first.finishedFirst, second.finishedFirst,
		idleGoroutines, goroutinesFirst, goroutinesSecond, idleHeap>>10, heapFirst>>10, heapSecond>>10)
	if first.cancelled+second.cancelled == 0 {
		t.Errorf("no cancellation took effect")
	}
	for _, g := range []int{goroutinesFirst, goroutinesSecond} {
		if g > idleGoroutines+goroutineSlack {
			t.Errorf("goroutines after a storm: %d, idle before: %d (slack %d)", g, idleGoroutines, goroutineSlack)
		}
	}
	if heapFirst > idleHeap+peakCapacitySlack {
		t.Errorf("heap in use after the first storm: %d KiB, idle before: %d KiB (slack %d KiB)", heapFirst>>10, idleHeap>>10, peakCapacitySlack>>10)
	}
	if heapSecond > heapFirst+heapSlack {
		t.Errorf("heap in use after the second storm: %d KiB, after the first: %d KiB (slack %d KiB)", heapSecond>>10, heapFirst>>10, heapSlack>>10)
	}
	if g, _ := settle(goroutinesBefore); g > goroutinesBefore {
		t.Errorf("goroutines after Serve returned: %d, before it started: %d", g, goroutinesBefore)
	}
}

// Bounds for "back to baseline" after the storm.
const (
	// goroutineSlack allows for the few goroutines the runtime and the
	// test's pipes start and end on their own schedule.
	goroutineSlack = 3
	// heapSlack bounds what a second storm may add to the heap the first
	// left: caches that grow with use, collector timing — far below the
	// megabytes 10,000 leaked requests held (a leak shows in the goroutine count too).
	heapSlack = 3 << 20
	// peakCapacitySlack bounds what the first storm may add: capacity kept
	// for the peak of requests in flight (every queued request is a
	// goroutine, and the runtime keeps the descriptors of dead goroutines
	// for reuse; maps of in-flight ids keep their size).
	peakCapacitySlack = 16 << 20
	// settleTimeout bounds the wait for goroutines to end.
	settleTimeout = 5 * time.Second
)

// heapInuse returns the heap in use after a full collection.
func heapInuse() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

// settle waits until at most target goroutines run (or the timeout), then
// returns the goroutine count and the heap in use.
func settle(target int) (int, uint64) {
	deadline := time.Now().Add(settleTimeout)
	for runtime.NumGoroutine() > target && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	return runtime.NumGoroutine(), heapInuse()
}
