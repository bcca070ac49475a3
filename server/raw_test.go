package server

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// testCancelOverWire sends a dsh/prepare that blocks, cancels it with
// $/cancelRequest, and expects RequestCancelled with the CANCELLED code.
func testCancelOverWire(t *testing.T, opts Options) {
	c := newWireClient(t, opts)
	c.initializeWith(map[string]any{"sessionId": "s-target"})
	c.send(map[string]any{"id": "slow", "method": MethodPrepare, "params": map[string]any{"text": "@[a](dsh-session:" + strings.TrimPrefix(uriOf("s-alpha"), "dsh-session:") + ")"}})
	// The wire is read in order: once a later dsh/status is answered, the
	// prepare has been read, and it waits for the build the caller holds.
	c.send(map[string]any{"id": "st", "method": MethodStatus, "params": map[string]any{}})
	c.readResponse(`"st"`)
	c.send(map[string]any{"method": "$/cancelRequest", "params": map[string]any{"id": "slow"}})
	m := c.readResponse(`"slow"`)
	if m.Error == nil || m.Error.Code != -32800 || m.Error.Data.Code != "SESSION_REFERENCE_CANCELLED" {
		t.Fatalf("cancelled request answered %+v, want -32800 with SESSION_REFERENCE_CANCELLED", m.Error)
	}
}

func TestResponsesFlushedAtEOF(t *testing.T) {
	opts, fake, ws := testOptions(t)
	// Slow enough that every request is still running when input ends.
	fake.snapshotDelay = 200 * time.Millisecond
	c := newWireClient(t, opts)
	c.initializeWith(map[string]any{"sessionId": "s-target", "cwd": ws})
	// Several requests, then the client closes its end at once.
	for i := 0; i < 5; i++ {
		c.send(map[string]any{"id": 10 + i, "method": MethodCandidates, "params": map[string]any{"query": ""}})
	}
	c.closeInput()
	for i := 0; i < 5; i++ {
		m := c.readResponse(strconv.Itoa(10 + i))
		if m.Error != nil || len(m.Result) == 0 {
			t.Errorf("request %d: %+v", 10+i, m.Error)
		}
	}
	if r := c.exit(); r.code != 1 {
		t.Errorf("exit code after EOF without shutdown = %d, want 1", r.code)
	}
}
