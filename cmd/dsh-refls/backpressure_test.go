//go:build unix

package main

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/dsh-refls/dsh-refls/internal/dshgen"
	"github.com/dsh-refls/dsh-refls/internal/longtest"
)

// Bounds of TestBinaryClientNotReadingIsBackpressured.
const (
	// backpressureRequests is how many requests the client writes without
	// reading an answer.
	backpressureRequests = 20000
	// backpressurePeakLimit is the resident peak allowed meanwhile; before
	// the bound the server held every answer and its goroutine.
	backpressurePeakLimit = 100 << 20
	// stallQuiet is how long the writer must make no progress to count as
	// blocked by the server.
	stallQuiet = time.Second
)

// TestBinaryClientNotReadingIsBackpressured: a client that keeps writing
// requests but stops reading stdout is stopped by the server (it stops
// reading new requests while its answers wait), and memory stays bounded.
// Once the client reads again, every request is answered.
func TestBinaryClientNotReadingIsBackpressured(t *testing.T) {
	longtest.Require(t)
	store, ws := t.TempDir(), t.TempDir()
	if _, err := dshgen.DemoStoreFor(store, ws, time.Now()); err != nil {
		t.Fatal(err)
	}
	p := startWire(t, "--sessions-root", store, "--watch", "off")
	p.send(map[string]any{"id": "init", "method": "initialize", "params": map[string]any{
		"processId": nil, "rootUri": "file://" + ws, "capabilities": map[string]any{}}})
	p.expectResult("initialize", `"init"`)
	p.send(map[string]any{"method": "initialized", "params": map[string]any{}})
	p.send(map[string]any{"id": "warm", "method": "dsh/candidates", "params": map[string]any{"query": ""}})
	p.expectResult("first candidates", `"warm"`)

	frames := make([][]byte, backpressureRequests)
	for i := range frames {
		frames[i] = frame(t, map[string]any{"id": i, "method": "dsh/candidates", "params": map[string]any{"query": ""}})
	}
	// From here the client reads nothing until the writer stalled.
	p.editor.PauseReading()
	var written atomic.Int64
	writeErr := make(chan error, 1)
	go func() {
		for _, f := range frames {
			if err := p.editor.WriteRaw(f); err != nil {
				writeErr <- err
				return
			}
			written.Add(1)
		}
		writeErr <- nil
	}()
	deadline := time.Now().Add(abuseTimeout)
	last, quietSince := int64(-1), time.Now()
	for {
		n := written.Load()
		if n == backpressureRequests {
			t.Fatalf("the server read all %d requests while their answers were not read", n)
		}
		if n != last {
			last, quietSince = n, time.Now()
		} else if time.Since(quietSince) >= stallQuiet {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the writer never stalled (%d written)", n)
		}
		time.Sleep(10 * time.Millisecond)
	}
	peak := p.peakRSS()
	t.Logf("writer blocked after %d of %d requests; resident peak %.1f MiB", last, backpressureRequests, float64(peak)/(1<<20))
	if peak > backpressurePeakLimit {
		t.Errorf("resident peak %d MiB while the client was not reading, want under %d MiB", peak>>20, backpressurePeakLimit>>20)
	}
	p.editor.ResumeReading()
	for i := 0; i < backpressureRequests; i++ {
		if a := p.response(); a.Error != nil {
			t.Fatalf("request %s: %+v", a.ID, a.Error)
		}
	}
	if err := <-writeErr; err != nil {
		t.Fatalf("writing requests: %v", err)
	}
	if _, code := p.finish(); code != 1 {
		t.Errorf("exit code %d, want 1", code)
	}
}
