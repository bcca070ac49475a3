package prepare

import "github.com/dsh-refls/dsh-refls/sessionref/internal/secrets"

// RedactSecrets replaces the credentials secrets recognises in text by
// "[redacted: <kind>]" and returns the text and how many it replaced (the
// rules: docs/editor-features.md, "Secret redaction").
func RedactSecrets(text string) (string, int) { return secrets.Redact(text) }

// redactProjected is the one hook of redaction in preparation: when on, it
// replaces the secrets of every projected message in place, before
// retention sizes them, and returns how many it replaced; off, it touches
// nothing and returns nil.
func redactProjected(msgs []projectedMessage, on bool) *int {
	if !on {
		return nil
	}
	total := 0
	for i := range msgs {
		text, n := RedactSecrets(msgs[i].original)
		msgs[i].original = text
		total += n
	}
	return &total
}
