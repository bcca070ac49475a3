package editors

import (
	"strings"
	"testing"
	"time"

	"github.com/dsh-refls/dsh-refls/internal/dshgen"
)

// TestNeovimRedactedRecall shows redactSecrets (issue 14 item 8) in
// Neovim: with the setting on, a session whose user message holds a GitHub
// token and a password is hovered and previewed; the hover counts the
// redactions and the preview shows "[redacted: <kind>]" where the secrets
// were, never the secrets. -v prints the screens.
func TestNeovimRedactedRecall(t *testing.T) {
	n := startNvimScreen(t, "redactSecrets = true", nil)
	const (
		title = "Deploy the staging server"
		token = "ghp_" + "0123456789abcdefghijABCDEFGHIJklmnopqr"
	)
	s := dshgen.NewSession("0f6a2b1c-7d3e-4c5b-9a8f-1e2d3c4b5a69").Cwd(n.demo.workspace).
		CreatedAt(time.Now().Add(-time.Hour).UnixMilli())
	s.Turn(func(t *dshgen.Turn) {
		t.UserText("Deploy with GITHUB_TOKEN=" + token + " and password=hunter22 please.")
		t.Title(title, "provider")
		t.AssistantText("Deployed to staging.")
	})
	if _, err := s.Save(n.demo.root, dshgen.Raw); err != nil {
		t.Fatal(err)
	}
	// The watcher adds the new log: wait until the server lists it.
	listed := "vim.wait(20000, function() local r = vim.lsp.buf_request_sync(0, 'dsh/candidates', { query = 'staging server' }, 2000); " +
		"local _, v = next(r or {}); return v ~= nil and v.result ~= nil and #v.result > 0 end, 100)"
	if got := n.echo(t, "LISTED", listed); got != "true" {
		t.Fatalf("the server never listed the new session: %s", got)
	}

	n.keys("G", "o")
	n.text("Read " + sessionMention(t, title, s.ID()) + " first.")
	n.keys("Escape", "0", "f@")
	n.text(":lua vim.lsp.buf.hover()")
	n.keys("Enter")
	hover := n.wait(t, "the hover with the redaction count", func(s string) bool {
		return strings.Contains(s, "2 secrets redacted")
	})
	t.Logf("hover on the mention:\n%s", hover)
	n.keys("0") // moving closes the hover window

	n.keys("f@", ":DshRecall", "Enter")
	preview := n.wait(t, "the recall preview", func(s string) bool {
		return strings.Contains(s, "dsh://recall/") && strings.Contains(s, "[redacted: github-token]")
	})
	t.Logf(":DshRecall on the mention:\n%s", preview)
	for _, want := range []string{"[redacted: password]", "2 secrets redacted"} {
		if !strings.Contains(preview, want) {
			t.Errorf("the preview lacks %q:\n%s", want, preview)
		}
	}
	for _, secret := range []string{token, "hunter22"} {
		if strings.Contains(hover, secret) || strings.Contains(preview, secret) {
			t.Errorf("a secret (%s) is on the screen:\nhover:\n%s\npreview:\n%s", secret, hover, preview)
		}
	}
	// The cleanup ends tmux and Neovim, then waits for the server to save
	// the index it grew by the new session and exit before the temporary
	// directory is removed.
}
