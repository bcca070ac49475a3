package server

import (
	"strings"
	"testing"
)

// TestCandidateOrderSetting: "active" (the default) and "created" are
// accepted; anything else fails initialize with INVALID_CONFIG.
func TestCandidateOrderSetting(t *testing.T) {
	if DefaultConfig().CandidateOrder != candidateOrderActive {
		t.Errorf("default candidateOrder %q, want %q", DefaultConfig().CandidateOrder, candidateOrderActive)
	}
	for _, v := range []string{"active", "created"} {
		opts, _, ws := testOptions(t)
		h := newHarness(t, opts)
		h.initialize(initOptions{root: ws, settings: map[string]any{"candidateOrder": v}})
		if list := completeAt(t, h, "file:///o.md", "@"+cursor); len(list.Items) == 0 {
			t.Errorf("candidateOrder %q: no completion items", v)
		}
	}
	opts, _, ws := testOptions(t)
	h := newHarness(t, opts)
	err := h.call("initialize", initParams(initOptions{root: ws, settings: map[string]any{"candidateOrder": "newest"}}), nil)
	_, code := rpcError(t, err)
	if code != "SESSION_REFERENCE_INVALID_CONFIG" || err == nil || !strings.Contains(err.Error(), `"active" or "created"`) {
		t.Errorf("candidateOrder \"newest\": %v (code %q), want INVALID_CONFIG", err, code)
	}
}
