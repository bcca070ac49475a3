package main

import (
	"encoding/json"
	"testing"
)

// TestCLISearchStderrIsQuietWhenNotATerminal: with stderr a pipe (a
// script), `search` draws no progress at all, so that stderr holds only
// the JSON error of a failure; stdout is the JSON result alone.
func TestCLISearchStderrIsQuietWhenNotATerminal(t *testing.T) {
	root := searchStore(t)
	out, errOut, code := runCLI(t, nil, "search", "--sessions-root", root, "token", "bucket")
	var hits []cliHit
	if code != 0 || errOut != "" {
		t.Errorf("exit %d, stderr %q: want 0 and nothing", code, errOut)
	}
	if err := json.Unmarshal([]byte(out), &hits); err != nil || len(hits) != 1 {
		t.Errorf("stdout is not the JSON result: %v\n%q", err, out)
	}
}
