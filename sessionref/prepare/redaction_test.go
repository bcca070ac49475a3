package prepare

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dsh-refls/dsh-refls/sessionref/internal/jsjson"
	"github.com/dsh-refls/dsh-refls/sessionref/internal/secrets"
	"github.com/dsh-refls/dsh-refls/sessionref/titles"

	"github.com/dsh-refls/dsh-refls/sessionref"
	"github.com/dsh-refls/dsh-refls/sessionref/internal/logtest"
)

// The credentials of these tests are assembled at run time (prefix +
// generated body), so that no secret scanner takes this file for a leak.

// fakeBody is n bytes of letters and digits, as a token's body is.
func fakeBody(n int) string { return strings.Repeat("aZ3kQ9mX", n/8+1)[:n] }

// fakeGitHub is a GitHub token of the shape the recogniser knows.
var fakeGitHub = "gh" + "p_" + fakeBody(36)

// redactStore writes one session whose messages hold secrets: a key block
// larger than the budget, a token and a password.
func redactStore(t *testing.T) *titles.Snapshot {
	s := logtest.NewStore(t)
	pem := "-----BEGIN RSA PRIVATE KEY-----\n" + strings.Repeat(fakeBody(64)+"\n", 40) + "-----END RSA PRIVATE KEY-----"
	s.Simple("leaky", "/home/u/proj", logtest.FixtureTime,
		logtest.UserMsg(0, "Here is the deploy key:\n"+pem),
		logtest.AssistantMsg(1, "Thanks. I set GITHUB_TOKEN="+fakeGitHub+" and password=hunter22 in the env file."),
		logtest.TurnEnd(2))
	return buildIndex(s).Snapshot()
}

func TestPrepareRedactsBeforeRetention(t *testing.T) {
	snap := redactStore(t)
	text := "Recall " + sessionref.Mention("Leaky", "leaky")
	budget := 1200 // the key block alone is over 2.6 KB
	for _, on := range []bool{false, true} {
		spillDir := filepath.Join(t.TempDir(), "spill")
		res, err := PrepareText(context.Background(), snap, "target", text, ModeReplace, nil,
			Limits{MaxReferenceBytes: budget, SpillDir: spillDir, RedactSecrets: on})
		if err != nil {
			t.Fatal(err)
		}
		prompt := res.AdditionalContext.Content[0].Text
		facts := res.AdditionalContext.Source.References[0]
		raw, err := jsjson.Marshal(res.AdditionalContext.Source)
		if err != nil {
			t.Fatal(err)
		}
		if !on {
			if facts.Redactions != nil || strings.Contains(string(raw), "redactions") {
				t.Errorf("off: the record carries redactions: %s", raw)
			}
			// The key block does not fit: it is dropped; the token is recalled as said.
			if !facts.Truncated || facts.OmittedMessages != 1 || !strings.Contains(prompt, fakeGitHub) {
				t.Errorf("off: want the key block dropped and the token kept; stats %+v", facts.Stats)
			}
			continue
		}
		if facts.Redactions == nil || *facts.Redactions != 3 || !strings.Contains(string(raw), `"inputIndex":0,"redactions":3`) {
			t.Errorf("on: record %s, want redactions 3 after inputIndex", raw)
		}
		// Budgets count the redacted text: the key block no longer pushes
		// the source over its budget.
		if facts.Truncated || facts.OmittedBytes != 0 {
			t.Errorf("on: stats %+v: the redacted source fits its budget whole", facts.Stats)
		}
		for _, secret := range []string{fakeGitHub, "hunter22", fakeBody(64), "BEGIN RSA"} {
			if strings.Contains(prompt, secret) {
				t.Errorf("on: the prompt still holds %q", secret)
			}
		}
		for _, k := range []secrets.Kind{secrets.PrivateKey, secrets.GitHubToken, secrets.Password} {
			if !strings.Contains(prompt, k.Replacement()) {
				t.Errorf("on: the prompt lacks %q:\n%s", k.Replacement(), prompt)
			}
		}
		if strings.Count(prompt, "</referenced-sessions>") != 1 {
			t.Errorf("on: the prompt closes its element %d times", strings.Count(prompt, "</referenced-sessions>"))
		}
	}
}

func TestSpilledSnapshotIsRedacted(t *testing.T) {
	snap := redactStore(t)
	spillDir := filepath.Join(t.TempDir(), "spill")
	// 300 bytes: too small even for the redacted source, so it is spilled.
	res, err := PrepareText(context.Background(), snap, "target", "Recall "+sessionref.Mention("Leaky", "leaky"), ModeReplace, nil,
		Limits{MaxReferenceBytes: 300, SpillDir: spillDir, RedactSecrets: true})
	if err != nil {
		t.Fatal(err)
	}
	if !res.AdditionalContext.Source.References[0].Truncated {
		t.Fatalf("want a truncated source, got %+v", res.AdditionalContext.Source.References[0])
	}
	files := spillFiles(spillDir)
	if len(files) != 1 {
		t.Fatalf("spill files %v", files)
	}
	body, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"hunter22", fakeBody(64), fakeGitHub[:20]} {
		if strings.Contains(string(body), secret) {
			t.Errorf("the spill file holds %q", secret)
		}
	}
	if !strings.Contains(string(body), "redacted: private-key") {
		t.Errorf("the spill file lacks the replacement:\n%s", body)
	}
}

func TestPreviewCountsRedactions(t *testing.T) {
	snap := redactStore(t)
	for _, on := range []bool{false, true} {
		p, err := PreviewSession(context.Background(), snap, "leaky", Limits{RedactSecrets: on})
		if err != nil || p.Err != nil {
			t.Fatal(err, p.Err)
		}
		joined, _ := json.Marshal(p.Excerpt)
		switch {
		case !on && (p.Redactions != nil || !strings.Contains(string(joined), "hunter22")):
			t.Errorf("off: redactions %v, excerpt %s", p.Redactions, joined)
		case on && (p.Redactions == nil || *p.Redactions != 3 || strings.Contains(string(joined), "hunter22")):
			t.Errorf("on: redactions %v, excerpt %s", p.Redactions, joined)
		}
	}
}
