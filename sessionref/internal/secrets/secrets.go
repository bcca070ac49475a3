// Package secrets recognises credentials in text (private key blocks,
// AWS, GitHub, Slack and OpenAI-style keys, password=/token=-style
// values) and replaces each by "[redacted: <kind>]", in one linear pass
// that keeps every other byte: the redactSecrets setting of preparation.
package secrets

import (
	"strings"
)

// The rules are written out in docs/editor-features.md, "Secret redaction".
//
// The recogniser is one forward pass over the bytes of a text. Every rule
// starts at a trigger byte and reads a bounded window or a run of its own
// characters, and a token rule fires only at the start of a word, so the
// whole pass is linear in the text (an 8 MB line takes one pass; see
// TestRedactEightMegabyteLine). Only ASCII bytes are matched and replaced:
// the bytes of multi-byte UTF-8 (and WTF-8) sequences are never ASCII, so
// text around a secret is kept byte for byte.

// Kind names a kind of recognised credential; it is what the
// replacement "[redacted: <kind>]" says.
type Kind string

// The kinds of secret the recogniser knows.
const (
	PrivateKey     Kind = "private-key"
	AWSAccessKeyID Kind = "aws-access-key-id"
	AWSSecretKey   Kind = "aws-secret-access-key"
	GitHubToken    Kind = "github-token"
	SlackToken     Kind = "slack-token"
	SlackWebhook   Kind = "slack-webhook"
	OpenAIKey      Kind = "openai-key"
	Password       Kind = "password"
	GenericSecret  Kind = "secret"
	APIKey         Kind = "api-key"
	GenericToken   Kind = "token"
)

// The replacement's text around the kind: "[redacted: <kind>]".
const (
	redactionOpen  = "[redacted: "
	redactionClose = "]"
)

// The bounds of the rules: how far each reads, which keeps the pass linear,
// and the shortest assigned value it replaces.
const (
	maxTokenRun        = 255       // longest token body read
	maxAssignmentKey   = 64        // longest key looked back over
	maxQuotedValue     = 1024      // longest quoted value looked for
	maxPEMBlock        = 64 * 1024 // longest private key block
	maxPEMLabel        = 64        // longest "-----BEGIN <label>-----" label
	minAssignmentValue = 4         // shorter values are kept
)

// Redaction is one recognised secret: the bytes [Start, End) of the text.
type Redaction struct {
	Start, End int
	Kind       Kind
}

// Replacement is the text a redaction of kind writes.
func (k Kind) Replacement() string {
	return redactionOpen + string(k) + redactionClose
}

// Redact returns text with every recognised credential replaced by
// "[redacted: <kind>]", and how many were replaced. Without a secret it
// returns text itself.
func Redact(text string) (string, int) {
	found := Find(text)
	if len(found) == 0 {
		return text, 0
	}
	var b strings.Builder
	b.Grow(len(text))
	last := 0
	for _, r := range found {
		b.WriteString(text[last:r.Start])
		b.WriteString(r.Kind.Replacement())
		last = r.End
	}
	b.WriteString(text[last:])
	return b.String(), len(found)
}

// Find lists the recognised credentials of text in order; they do
// not overlap.
func Find(text string) []Redaction {
	sc := secretScanner{s: text, nextEnd: -1}
	var out []Redaction
	for i := 0; i < len(text); {
		if !secretTrigger[text[i]] {
			i++
			continue
		}
		r, ok, next := sc.at(i)
		if ok {
			out = append(out, r)
		}
		i = next
	}
	return out
}

// secretTrigger marks the bytes a rule can start at.
var secretTrigger = func() (t [256]bool) {
	for _, c := range "-Aghxs=:" {
		t[c] = true
	}
	return t
}()

// secretScanner holds what one pass has learnt about what lies ahead, so
// that no byte is searched again by each of many triggers before it: where
// the next "-----END " is, and the next quote and line break.
type secretScanner struct {
	s string
	// nextEnd is the offset of the first "-----END " at or after the
	// offset it was searched from, len(s) when there is none; -1 before
	// the first search.
	nextEnd int
	ahead   [3]nextByte // '"', '\'', '`'
	lf, cr  nextByte
	// valueEnd is the end of the last unquoted value read and not
	// redacted: no assignment is looked for before it, so no byte is read
	// as a value twice (tokens inside it still are).
	valueEnd int
}

// nextByte caches where a byte occurs next: at, the first occurrence at or
// after from (len(s) when there is none). Queries come with offsets that
// never decrease, so each byte of the text is searched at most once.
type nextByte struct {
	from, at int
	valid    bool
}

// next is the offset of the first c in s at or after from, len(s) when
// there is none.
func (n *nextByte) next(s string, c byte, from int) int {
	if n.valid && n.from <= from && from <= n.at {
		return n.at
	}
	n.from, n.valid = from, true
	if k := strings.IndexByte(s[from:], c); k >= 0 {
		n.at = from + k
	} else {
		n.at = len(s)
	}
	return n.at
}

// at tries every rule whose trigger is s[i]; next is where the pass goes on.
func (sc *secretScanner) at(i int) (r Redaction, ok bool, next int) {
	s := sc.s
	switch s[i] {
	case '-':
		r, ok = sc.privateKey(i)
	case '=', ':':
		if i < sc.valueEnd {
			return Redaction{}, false, i + 1
		}
		return sc.assignment(i)
	default:
		// Tokens start a word; a "-" may precede those that hold none
		// (GitHub, AWS), as in a shell default "${TOKEN:-ghp_…}".
		if i > 0 && isWordByte(s[i-1]) && !(s[i-1] == '-' && (s[i] == 'g' || s[i] == 'A')) {
			return Redaction{}, false, i + 1
		}
		if kind, end := tokenAt(s, i); end > i {
			r, ok = Redaction{Start: i, End: end, Kind: kind}, true
		}
	}
	if ok {
		return r, true, r.End
	}
	return Redaction{}, false, i + 1
}

// tokenAt recognises a credential token starting at s[i] (whose previous
// byte is not a word byte) and returns its kind and end, or end 0.
func tokenAt(s string, i int) (Kind, int) {
	rest := s[i:]
	switch {
	case strings.HasPrefix(rest, "AKIA") || strings.HasPrefix(rest, "ASIA"):
		// An access key id: 4 + 16 upper-case letters and digits, exactly.
		n := runOf(rest[4:], isUpperOrDigit, 17)
		if n == 16 && wordEnds(s, i+20) {
			return AWSAccessKeyID, i + 20
		}
	case strings.HasPrefix(rest, "github_pat_"):
		n := runOf(rest[11:], isTokenByte, maxTokenRun+1)
		if n >= 22 && n <= maxTokenRun && wordEnds(s, i+11+n) {
			return GitHubToken, i + 11 + n
		}
	case len(rest) > 4 && rest[0] == 'g' && rest[1] == 'h' && strings.IndexByte("pousr", rest[2]) >= 0 && rest[3] == '_':
		n := runOf(rest[4:], isAlnum, maxTokenRun+1)
		if n >= 36 && n <= maxTokenRun && wordEnds(s, i+4+n) {
			return GitHubToken, i + 4 + n
		}
	case len(rest) > 5 && strings.HasPrefix(rest, "xox") && strings.IndexByte("abprs", rest[3]) >= 0 && rest[4] == '-':
		n := runOf(rest[5:], isSlackByte, maxTokenRun+1)
		if n >= 10 && n <= maxTokenRun && wordEnds(s, i+5+n) && hasDigit(rest[5:5+n]) {
			return SlackToken, i + 5 + n
		}
	case strings.HasPrefix(rest, "sk-"):
		n := runOf(rest[3:], isWordByte, maxTokenRun+1)
		if n >= 20 && n <= maxTokenRun && wordEnds(s, i+3+n) && hasDigit(rest[3:3+n]) && hasLetter(rest[3:3+n]) {
			return OpenAIKey, i + 3 + n
		}
	case strings.HasPrefix(rest, "hooks.slack.com/"):
		after := rest[len("hooks.slack.com/"):]
		for _, p := range []string{"services/", "workflows/", "triggers/"} {
			if strings.HasPrefix(after, p) {
				start := len("hooks.slack.com/") + len(p)
				n := runOf(rest[start:], isWebhookByte, maxTokenRun+1)
				if n >= 20 && n <= maxTokenRun {
					return SlackWebhook, i + start + n
				}
			}
		}
	}
	return "", 0
}

// privateKey recognises a PEM private key block starting at s[i]: the
// "-----BEGIN … PRIVATE KEY…-----" line through the matching
// "-----END …-----", or, without an END within maxPEMBlock bytes, the
// header and the base64 lines that follow it.
func (sc *secretScanner) privateKey(i int) (Redaction, bool) {
	s := sc.s
	const begin, dashes, end = "-----BEGIN ", "-----", "-----END "
	if !strings.HasPrefix(s[i:], begin) {
		return Redaction{}, false
	}
	labelStart := i + len(begin)
	window := s[labelStart:min(len(s), labelStart+maxPEMLabel+len(dashes))]
	k := strings.Index(window, dashes)
	if k < 0 || strings.ContainsAny(window[:k], "\r\n") || !strings.Contains(window[:k], "PRIVATE KEY") {
		return Redaction{}, false
	}
	headerEnd := labelStart + k + len(dashes)
	if sc.nextEnd < headerEnd {
		if j := strings.Index(s[headerEnd:], end); j >= 0 {
			sc.nextEnd = headerEnd + j
		} else {
			sc.nextEnd = len(s)
		}
	}
	if sc.nextEnd < len(s) && sc.nextEnd-i <= maxPEMBlock {
		e := sc.nextEnd + len(end)
		line := s[e:min(len(s), e+maxPEMLabel+len(dashes))]
		if k := strings.Index(line, dashes); k >= 0 && !strings.ContainsAny(line[:k], "\r\n") {
			return Redaction{Start: i, End: e + k + len(dashes), Kind: PrivateKey}, true
		}
	}
	// No END: the header and the base64 lines after it.
	pos := headerEnd
	for pos < len(s) && pos-i < maxPEMBlock {
		nl := pos
		if s[nl] == '\r' {
			nl++
		}
		if nl >= len(s) || s[nl] != '\n' {
			break
		}
		n := runOf(s[nl+1:], isBase64Byte, maxPEMBlock)
		if n == 0 {
			break
		}
		pos = nl + 1 + n
	}
	return Redaction{Start: i, End: pos, Kind: PrivateKey}, true
}

// assignment recognises the value of "<key>=<value>" or "<key>: <value>"
// whose separator is s[i], for a key that names a secret. Inside an
// unquoted value that is not redacted no assignment is looked for
// (valueEnd); tokens are.
func (sc *secretScanner) assignment(i int) (Redaction, bool, int) {
	s := sc.s
	fail := func() (Redaction, bool, int) { return Redaction{}, false, i + 1 }
	kind, ok := assignedKind(s, i)
	if !ok {
		return fail()
	}
	colon := s[i] == ':'
	j := i + 1
	if colon && j < len(s) && s[j] == '=' {
		colon = false // ":="
		j++
	} else if j < len(s) && (s[j] == '=' || s[j] == '>' || s[j] == ':') {
		return fail() // "==", "=>", "::"
	}
	for n := 0; j < len(s) && (s[j] == ' ' || s[j] == '\t') && n < 16; n++ {
		j++
	}
	if j >= len(s) {
		return fail()
	}
	start, end := j, j
	quoted := false
	if q := strings.IndexByte("\"'`", s[j]); q >= 0 {
		k := sc.ahead[q].next(s, s[j], j+1)
		if k == len(s) || k-(j+1) > maxQuotedValue || sc.lf.next(s, '\n', j+1) < k || sc.cr.next(s, '\r', j+1) < k {
			return fail()
		}
		start, end, quoted = j+1, k, true
	} else {
		for end < len(s) && !valueStop[s[end]] {
			end++
		}
	}
	value := s[start:end]
	if !secretValue(value, quoted, colon) {
		if quoted {
			return fail()
		}
		sc.valueEnd = end
		return fail()
	}
	if k, e := tokenAt(s, start); e == end {
		kind = k // the value is itself a known token
	}
	return Redaction{Start: start, End: end, Kind: kind}, true, end
}

// assignedKind is the kind of secret the key before the separator s[i]
// names: the identifier ending there (after spaces and one closing quote)
// whose letters, lower-cased and without "_", "-" and ".", end with
// password, passwd, secret, apikey, token or secretaccesskey.
func assignedKind(s string, i int) (Kind, bool) {
	j := i
	for n := 0; j > 0 && (s[j-1] == ' ' || s[j-1] == '\t') && n < 16; n++ {
		j--
	}
	if j > 0 && (s[j-1] == '"' || s[j-1] == '\'') {
		j--
	}
	keyEnd := j
	for j > 0 && keyEnd-j <= maxAssignmentKey && isKeyByte(s[j-1]) {
		j--
	}
	if keyEnd == j || keyEnd-j > maxAssignmentKey || (j > 0 && isKeyByte(s[j-1])) {
		return "", false
	}
	var key [maxAssignmentKey]byte
	n := 0
	for _, c := range []byte(s[j:keyEnd]) {
		switch {
		case c == '_' || c == '-' || c == '.':
		case 'A' <= c && c <= 'Z':
			key[n] = c + ('a' - 'A')
			n++
		default:
			key[n] = c
			n++
		}
	}
	norm := string(key[:n])
	switch {
	case strings.HasSuffix(norm, "secretaccesskey"):
		return AWSSecretKey, true
	case strings.HasSuffix(norm, "password") || strings.HasSuffix(norm, "passwd"):
		return Password, true
	case strings.HasSuffix(norm, "secret"):
		return GenericSecret, true
	case strings.HasSuffix(norm, "apikey"):
		return APIKey, true
	case strings.HasSuffix(norm, "token"):
		return GenericToken, true
	}
	return "", false
}

// valueStop ends an unquoted value.
var valueStop = func() (t [256]bool) {
	for _, c := range " \t\r\n\v\f\"'`,;&)]}" {
		t[c] = true
	}
	return t
}()

// placeholderWords are values that name no secret.
var placeholderWords = []string{"null", "none", "nil", "true", "false", "undefined", "string", "str", "bytes",
	"number", "boolean", "bool", "object", "optional", "required", "redacted"}

// secretValue reports whether an assigned value is worth redacting: at
// least minAssignmentValue bytes, not a placeholder ($VAR, ${…}, <…>, {{…}},
// %s, [redacted: …], ****, a type or constant word), not code (a call, an
// index, a dotted name), and, unquoted after a colon, not a plain word
// (which is prose or a type annotation: "password: required").
func secretValue(v string, quoted, colon bool) bool {
	if len(v) < minAssignmentValue {
		return false
	}
	switch v[0] {
	case '$', '<', '{', '%', '[':
		return false
	}
	if strings.Trim(v, "*xX.#-_") == "" {
		return false
	}
	for _, w := range placeholderWords {
		if strings.EqualFold(v, w) {
			return false
		}
	}
	if quoted {
		return true
	}
	if strings.ContainsAny(v, "([{") || dottedName(v) {
		return false
	}
	if colon {
		for k := 0; k < len(v); k++ {
			if !isLetter(v[k]) {
				return true
			}
		}
		return false
	}
	return true
}

// dottedName reports whether v is a.b(.c…) of identifiers starting with a
// letter: a field or module path in code, not a secret.
func dottedName(v string) bool {
	parts := strings.Split(v, ".")
	if len(parts) < 2 {
		return false
	}
	for _, p := range parts {
		if p == "" || !(isLetter(p[0]) || p[0] == '_') || runOf(p, func(c byte) bool { return isAlnum(c) || c == '_' }, len(p)+1) != len(p) {
			return false
		}
	}
	return true
}

// runOf is the number of leading bytes of s for which ok holds, at most limit.
func runOf(s string, ok func(byte) bool, limit int) int {
	n := 0
	for n < len(s) && n < limit && ok(s[n]) {
		n++
	}
	return n
}

// wordEnds reports whether offset i of s ends a word.
func wordEnds(s string, i int) bool { return i >= len(s) || !isWordByte(s[i]) }

func hasDigit(s string) bool {
	return strings.ContainsAny(s, "0123456789")
}

func hasLetter(s string) bool {
	for k := 0; k < len(s); k++ {
		if isLetter(s[k]) {
			return true
		}
	}
	return false
}

func isLetter(c byte) bool       { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
func isDigit(c byte) bool        { return '0' <= c && c <= '9' }
func isAlnum(c byte) bool        { return isLetter(c) || isDigit(c) }
func isUpperOrDigit(c byte) bool { return 'A' <= c && c <= 'Z' || isDigit(c) }
func isWordByte(c byte) bool     { return isAlnum(c) || c == '_' || c == '-' }
func isTokenByte(c byte) bool    { return isAlnum(c) || c == '_' }
func isSlackByte(c byte) bool    { return isAlnum(c) || c == '-' }
func isWebhookByte(c byte) bool  { return isAlnum(c) || c == '/' || c == '_' || c == '-' }
func isKeyByte(c byte) bool      { return isAlnum(c) || c == '_' || c == '-' || c == '.' }
func isBase64Byte(c byte) bool   { return isAlnum(c) || c == '+' || c == '/' || c == '=' }
