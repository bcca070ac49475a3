package server

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/dsh-refls/dsh-refls/internal/dshgen"
	"github.com/dsh-refls/dsh-refls/sessionref"
)

// leakyToken is a GitHub-style token assembled at run time, so that no
// secret scanner takes this file for a leak.
var leakyToken = "gh" + "p_" + strings.Repeat("aZ3kQ9", 6)

// redactOpts serves the test store plus a session whose messages hold a
// token and a password.
func redactOpts(t *testing.T) (Options, string) {
	t.Helper()
	opts, fake, ws := testOptions(t)
	fake.add(t, dshgen.NewSession("s-leaky").Cwd(testCwd).CreatedAt(time.Now().Add(-6*time.Hour).UnixMilli()).
		Turn(func(tt *dshgen.Turn) {
			tt.UserText("Deploy with GITHUB_TOKEN=" + leakyToken)
			tt.Title("Deploy notes", "provider")
			tt.AssistantText("Done; the database password=hunter22 is in the vault now.")
		}))
	return opts, ws
}

// TestRedactSecretsOverWire: with redactSecrets on, dsh/prepare, hover
// and the recall preview show "[redacted: <kind>]" where the secrets were
// and count them; off (the default), they show the text as dsh does and
// the reference record has no "redactions".
func TestRedactSecretsOverWire(t *testing.T) {
	if DefaultConfig().RedactSecrets {
		t.Fatal("redactSecrets is on by default")
	}
	mention := sessionref.Mention("Deploy notes", "s-leaky")
	for _, on := range []bool{false, true} {
		opts, ws := redactOpts(t)
		h := newHarness(t, opts)
		settings := map[string]any{"sessionId": "s-target"}
		if on {
			settings["redactSecrets"] = true
		}
		h.initialize(initOptions{root: ws, markdown: true, settings: settings})

		var raw json.RawMessage
		h.mustCall(MethodPrepare, map[string]any{"text": "Recall " + mention}, &raw)
		var res PrepareResult
		if err := json.Unmarshal(raw, &res); err != nil || res.AdditionalContext == nil {
			t.Fatalf("prepare %s: %v", raw, err)
		}
		prompt := res.AdditionalContext.Content[0].Text
		facts := res.AdditionalContext.Source.References[0]

		pos := h.open("file:///r.md", "see "+mention[:4]+cursor+mention[4:], EncodingUTF16)
		var hv hoverResult
		h.mustCall("textDocument/hover", map[string]any{"textDocument": map[string]any{"uri": "file:///r.md"}, "position": pos}, &hv)
		var pv PreviewResult
		h.mustCall(MethodPreview, map[string]any{"sessionId": "s-leaky"}, &pv)

		if !on {
			if strings.Contains(string(raw), "redactions") || facts.Redactions != nil {
				t.Errorf("off: the record carries redactions: %s", raw)
			}
			for name, text := range map[string]string{"prompt": prompt, "hover": hv.Contents.Value, "preview": pv.Markdown} {
				if !strings.Contains(text, "hunter22") || strings.Contains(text, "redacted") {
					t.Errorf("off: the %s should show the text as said:\n%s", name, text)
				}
			}
			continue
		}
		if facts.Redactions == nil || *facts.Redactions != 2 {
			t.Errorf("on: record %s, want redactions 2", raw)
		}
		for name, text := range map[string]string{"prompt": prompt, "hover": hv.Contents.Value, "preview": pv.Markdown} {
			if strings.Contains(text, "hunter22") || strings.Contains(text, leakyToken) {
				t.Errorf("on: the %s still holds a secret:\n%s", name, text)
			}
			if name != "prompt" && !strings.Contains(text, "· 2 secrets redacted ·") {
				t.Errorf("on: the %s lacks the count:\n%s", name, text)
			}
		}
		for _, want := range []string{"GITHUB_TOKEN=[redacted: github-token]", "password=[redacted: password]"} {
			if !strings.Contains(prompt, want) {
				t.Errorf("on: the prompt lacks %q:\n%s", want, prompt)
			}
		}
	}
}

// TestRedactSecretsSettingIsBoolean: anything but true, false or null
// fails with INVALID_CONFIG, at initialize and in a later change.
func TestRedactSecretsSettingIsBoolean(t *testing.T) {
	for _, bad := range []any{"yes", 1, []any{true}} {
		opts, ws := redactOpts(t)
		h := newHarness(t, opts)
		err := h.call("initialize", initParams(initOptions{root: ws, settings: map[string]any{"redactSecrets": bad}}), nil)
		_, code := rpcError(t, err)
		if code != "SESSION_REFERENCE_INVALID_CONFIG" || !strings.Contains(err.Error(), "redactSecrets") || !strings.Contains(err.Error(), "true or false") {
			t.Errorf("redactSecrets %v: %v (code %q), want INVALID_CONFIG naming the field", bad, err, code)
		}
	}
	if _, _, err := applyConfig(DefaultConfig(), json.RawMessage(`{"redactSecrets": "true"}`)); err == nil {
		t.Error(`the string "true" was accepted`)
	}
	c, _, err := applyConfig(DefaultConfig(), json.RawMessage(`{"redactSecrets": true}`))
	if err != nil || !c.RedactSecrets || !c.Limits().RedactSecrets {
		t.Errorf("true: %+v, %v", c, err)
	}
	c, _, err = applyConfig(c, json.RawMessage(`{"redactSecrets": null}`))
	if err != nil || !c.RedactSecrets {
		t.Errorf("null must leave the setting as it was: %+v, %v", c, err)
	}
}
