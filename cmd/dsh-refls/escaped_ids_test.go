package main

import (
	"testing"
	"time"

	"github.com/dsh-refls/dsh-refls/internal/lsptest"
)

// maxExitAfterEOF bounds how long the server may take to exit once stdin
// ends with every request answered; the drain timeout it must not wait
// for is 30 s.
const maxExitAfterEOF = 3 * time.Second

// TestBinaryEscapedIDsExitAtEOF sends requests whose ids jsonrpc2 answers
// re-encoded ("\u0061" comes back as "a", -0 as 0, 1e0 as 1), then ends
// stdin: every request is answered, so the server exits at once instead of
// waiting for answers it already wrote under another spelling.
func TestBinaryEscapedIDsExitAtEOF(t *testing.T) {
	p := startWire(t, "--sessions-root", t.TempDir(), "--watch", "off")
	raw := func(body string) {
		p.write(lsptest.Frame([]byte(body)))
	}
	raw(`{"jsonrpc":"2.0","id":"\u0069nit","method":"initialize","params":{"processId":null,"capabilities":{}}}`)
	p.expectResult("initialize with an escaped id", `"init"`)
	raw(`{"jsonrpc":"2.0","method":"initialized","params":{}}`)
	for _, id := range []string{`"\u0061"`, `-0`, `"\/x"`} {
		raw(`{"jsonrpc":"2.0","id":` + id + `,"method":"dsh/status","params":{}}`)
		if a := p.response(); a.Error != nil {
			t.Errorf("dsh/status with id %s: %+v", id, a.Error)
		}
	}
	start := time.Now()
	_, code := p.finish()
	if took := time.Since(start); took > maxExitAfterEOF {
		t.Errorf("exit after stdin EOF took %v, want under %v (it waited for answers it had written)", took, maxExitAfterEOF)
	}
	if code != 1 {
		t.Errorf("exit code %d after EOF without shutdown, want 1", code)
	}
}
