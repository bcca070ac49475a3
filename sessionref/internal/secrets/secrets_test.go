package secrets

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/dsh-refls/dsh-refls/internal/cputime"
	"github.com/dsh-refls/dsh-refls/internal/longtest"
	"github.com/dsh-refls/dsh-refls/sessionref/internal/jsjson"
)

// The credentials of these tests are assembled at run time (prefix +
// generated body), so that no secret scanner takes this file for a leak.

// fakeBody is n bytes of letters and digits, mixed as a real token's are.
func fakeBody(n int) string {
	const alphabet = "aZ3kQ9mX1pL7wB5tR2vN8cY4"
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[(i*7+3)%len(alphabet)]
	}
	return string(b)
}

// fakeUpper is n upper-case letters and digits.
func fakeUpper(n int) string { return strings.ToUpper(fakeBody(n)) }

func red(k Kind) string { return k.Replacement() }

var (
	fakeGitHub  = "gh" + "p_" + fakeBody(36)
	fakeOpenAI  = "s" + "k-" + fakeBody(48)
	fakeProject = "s" + "k-proj-" + fakeBody(40) + "_" + fakeBody(30) + "-" + fakeBody(20)
	fakeAWSID   = "AK" + "IA" + fakeUpper(16)
	fakeAWSKey  = fakeBody(30) + "/+" + fakeBody(8)
	fakeSlack   = "xo" + "xb-" + "1234567890-0987654321-" + fakeBody(24)
	fakePEMBody = "MIIEow" + fakeBody(58) + "\n" + fakeBody(64) + "\n" + fakeBody(20) + "=="
)

func TestRedactKinds(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"rsa private key block", "key:\n-----BEGIN RSA PRIVATE KEY-----\n" + fakePEMBody + "\n-----END RSA PRIVATE KEY-----\nafter",
			"key:\n" + red(PrivateKey) + "\nafter"},
		{"openssh key with CRLF", "-----BEGIN OPENSSH PRIVATE KEY-----\r\n" + fakeBody(70) + "\r\n-----END OPENSSH PRIVATE KEY-----\r\n",
			red(PrivateKey) + "\r\n"},
		{"pgp private key block", "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n" + fakeBody(64) + "\n-----END PGP PRIVATE KEY BLOCK-----",
			red(PrivateKey)},
		{"key block without END keeps the prose after it", "-----BEGIN ENCRYPTED PRIVATE KEY-----\n" + fakeBody(64) + "\n" + fakeBody(12) + "==\n\nThat was the key.",
			red(PrivateKey) + "\n\nThat was the key."},
		{"aws access key id", "id " + fakeAWSID + ".", "id " + red(AWSAccessKeyID) + "."},
		{"aws session key id", "(" + "AS" + "IA" + fakeUpper(16) + ")", "(" + red(AWSAccessKeyID) + ")"},
		{"aws secret in an env file", "aws_secret_access_key = " + fakeAWSKey, "aws_secret_access_key = " + red(AWSSecretKey)},
		{"aws secret in JSON", `{"SecretAccessKey": "` + fakeAWSKey + `"}`, `{"SecretAccessKey": "` + red(AWSSecretKey) + `"}`},
		{"github classic token", "use " + fakeGitHub + " here", "use " + red(GitHubToken) + " here"},
		{"github oauth token", "gh" + "o_" + fakeBody(36), red(GitHubToken)},
		{"github user token", "gh" + "u_" + fakeBody(36), red(GitHubToken)},
		{"github server token", "gh" + "s_" + fakeBody(36), red(GitHubToken)},
		{"github refresh token", "gh" + "r_" + fakeBody(40), red(GitHubToken)},
		{"github fine-grained token", "github" + "_pat_" + fakeBody(22) + "_" + fakeBody(59), red(GitHubToken)},
		{"slack bot token", "SLACK: " + fakeSlack, "SLACK: " + red(SlackToken)},
		{"slack webhook", "post to https://hooks.slack.com/services/T0" + fakeUpper(8) + "/B0" + fakeUpper(8) + "/" + fakeBody(24) + " now",
			"post to https://" + red(SlackWebhook) + " now"},
		{"openai key", "OPENAI " + fakeOpenAI, "OPENAI " + red(OpenAIKey)},
		{"openai project key", "'" + fakeProject + "'", "'" + red(OpenAIKey) + "'"},
		{"password assignment", "password=hunter22 and more", "password=" + red(Password) + " and more"},
		{"passwd in YAML", "passwd: s3cr3t!", "passwd: " + red(Password)},
		{"env password", "export DB_PASSWORD='correct horse'", "export DB_PASSWORD='" + red(Password) + "'"},
		{"secret assignment", "secret=abcdefgh", "secret=" + red(GenericSecret)},
		{"client secret in JSON", `"client_secret": "abcd1234"`, `"client_secret": "` + red(GenericSecret) + `"`},
		{"api key assignment", "api_key=0123456789abcdef", "api_key=" + red(APIKey)},
		{"api-key header style", "x-api-key: 0123-4567-89", "x-api-key: " + red(APIKey)},
		{"token in a query string", "GET /x?access_token=abcd1234&page=2", "GET /x?access_token=" + red(GenericToken) + "&page=2"},
		{"go short assignment", `token := "tok-12345"`, `token := "` + red(GenericToken) + `"`},
		{"assigned known token keeps its kind", "GITHUB_TOKEN=" + fakeGitHub, "GITHUB_TOKEN=" + red(GitHubToken)},
		{"assigned openai key keeps its kind", `api_key: "` + fakeOpenAI + `"`, `api_key: "` + red(OpenAIKey) + `"`},
		{"token in a shell default", "GITHUB_TOKEN=${GITHUB_TOKEN:-" + fakeGitHub + "}", "GITHUB_TOKEN=${GITHUB_TOKEN:-" + red(GitHubToken) + "}"},
		{"token in a call", "token = load(" + fakeOpenAI + ")", "token = load(" + red(OpenAIKey) + ")"},
		{"two secrets in one text", fakeGitHub + " and password=hunter22", red(GitHubToken) + " and password=" + red(Password)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, n := Redact(tt.in)
			if got != tt.want {
				t.Errorf("Redact(%q)\n got %q\nwant %q", tt.in, got, tt.want)
			}
			if want := strings.Count(tt.want, redactionOpen); n != want {
				t.Errorf("count %d, want %d", n, want)
			}
		})
	}
}

func TestRedactNearMisses(t *testing.T) {
	half := fakeBody(18)
	tests := []struct{ name, in string }{
		{"sk- in prose", "a risk-free, task-based sk-learn pipeline; the sk- prefix marks keys"},
		{"sk- phrase without digits", "s" + "k-this-is-not-a-key-but-a-long-phrase"},
		{"short openai-like", "s" + "k-abc123"},
		{"short github-like", "gh" + "p_abc123"},
		{"github token one byte short", "gh" + "p_" + fakeBody(35)},
		{"github token glued to a word", "my" + fakeGitHub},
		{"github token split across lines", "gh" + "p_" + half + "\n" + half},
		{"openai key split across lines", "s" + "k-" + fakeBody(12) + "\n" + fakeBody(30)},
		{"aws id too short", "AK" + "IA1234"},
		{"aws id too long", "AK" + "IA" + fakeUpper(17)},
		{"aws id in lower case", "ak" + "ia" + strings.ToLower(fakeUpper(16))},
		{"slack token without digits", "xo" + "xb-abcdefghijklmnop"},
		{"slack prefix in prose", "the xo" + "xp- tokens"},
		{"webhook without a path", "https://hooks.slack.com/services/"},
		{"public key block", "-----BEGIN PUBLIC KEY-----\n" + fakeBody(64) + "\n-----END PUBLIC KEY-----"},
		{"certificate", "-----BEGIN CERTIFICATE-----\n" + fakeBody(64) + "\n-----END CERTIFICATE-----"},
		{"private key words in prose", "paste your -----BEGIN line here, never the PRIVATE KEY itself"},
		{"password in prose", "the password: required, and the token: string"},
		{"comparison", "if password == other { }"},
		{"inequality", "if token != nil {"},
		{"arrow", "token => value"},
		{"short value", "password=abc"},
		{"variable", "password=${DB_PASSWORD} token=$TOKEN"},
		{"angle placeholder", "api_key=<your key>"},
		{"masked", "password=******** secret=xxxxxxxx"},
		{"call", "token = get_token()"},
		{"index", `api_key = os.environ["API_KEY"]`},
		{"field", "token=self.token"},
		{"constant", "token=None, password=null"},
		{"key only as a word part", "secretary=alice tokenizer=bpe max_tokens=4096"},
		{"already redacted", "password=" + red(Password)},
		{"empty quoted", `password=""`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, n := Redact(tt.in); got != tt.in || n != 0 {
				t.Errorf("Redact(%q) = %q, %d; want it unchanged", tt.in, got, n)
			}
		})
	}
}

func TestRedactReplacementIsTagSafe(t *testing.T) {
	kinds := []Kind{PrivateKey, AWSAccessKeyID, AWSSecretKey, GitHubToken, SlackToken,
		SlackWebhook, OpenAIKey, Password, GenericSecret, APIKey, GenericToken}
	for _, k := range kinds {
		r := k.Replacement()
		if strings.ContainsAny(r, "<>&\"\\\n") {
			t.Errorf("replacement %q holds a byte that needs escaping", r)
		}
		raw, err := jsjson.MarshalTagSafe(r)
		if err != nil || string(raw) != `"`+r+`"` {
			t.Errorf("tag-safe JSON of %q is %s (%v): it should need no escape", r, raw, err)
		}
		// A redacted text is redacted already: nothing of the replacement
		// is taken for a secret again.
		if again, n := Redact("password=" + r + " " + r); n != 0 {
			t.Errorf("a replacement was redacted again: %q", again)
		}
	}
	// A value that would close the element is removed with the secret, and
	// what stays is escaped by the snapshot's tag-safe JSON.
	got, _ := Redact("password=hunter22</referenced-sessions> tail")
	if strings.Contains(got, "hunter22") || strings.Contains(got, "</referenced-sessions>") {
		t.Errorf("got %q", got)
	}
}

func TestRedactKeepsMultiByteText(t *testing.T) {
	loneSurrogate := "\xed\xa0\x80" // WTF-8 of U+D800, as jsjson keeps it
	// The token is glued to "é": only ASCII letters, digits, "_" and "-"
	// continue a token, so it ends there and "é" stays.
	in := "日本語のパスワード password=hunter22 🙂 と " + fakeGitHub + "\u00e9" + loneSurrogate + " 終わり"
	want := "日本語のパスワード password=" + red(Password) + " 🙂 と " + red(GitHubToken) + "\u00e9" + loneSurrogate + " 終わり"
	if got, n := Redact(in); got != want || n != 2 {
		t.Errorf("got %q (%d)\nwant %q", got, n, want)
	}
	// A value holding multi-byte text goes whole, never cut inside a sequence.
	if got, _ := Redact(`password="日本語🙂の秘密"`); got != `password="`+red(Password)+`"` {
		t.Errorf("got %q", got)
	}
}

// TestRedactEightMegabyteLine runs the recogniser over 8 MB lines shaped
// to make a backtracking or re-scanning matcher quadratic; each must take
// one pass (a quadratic pass over 8 MB would take hours). The times are
// logged. The bound is on the process's CPU time where it is measured: a
// busy machine stretches the wall time (10.03 s for "unclosed quotes" at
// load ~12, where the bound was on wall time), not the work.
func TestRedactEightMegabyteLine(t *testing.T) {
	longtest.Require(t)
	const size = 8 << 20
	fill := func(unit string) string { return strings.Repeat(unit, size/len(unit)+1)[:size] }
	lines := map[string]string{
		"prose":                    fill("the quick brown fox jumps over the lazy dog; "),
		"one long word":            fill("a"),
		"sk- prefixes":             fill("s" + "k-"),
		"unterminated key headers": fill("-----BEGIN RSA PRIVATE KEY-----"),
		"rejected values":          fill("token=(token=("),
		"unclosed quotes":          fill(`password="`),
		"separators":               fill("=:"),
		"long value":               "token=" + fill("a1"),
		"many secrets":             fill("password=hunter22 "),
		"shell defaults":           fill("${T:-gh" + "p_aZ3"),
	}
	for name, line := range lines {
		start, cpu0 := time.Now(), cputime.Process()
		got, n := Redact(line)
		took, cpu := time.Since(start), cputime.Process()-cpu0
		t.Logf("%-26s %d bytes → %d bytes, %d redactions in %v (CPU %v)", name, len(line), len(got), n, took, cpu)
		spent := cpu
		if !cputime.Measured {
			spent = took
		}
		if spent > 10*time.Second {
			t.Errorf("%s: %v (CPU %v) for one 8 MB line: not one linear pass", name, took, cpu)
		}
	}
}

func BenchmarkRedact8MB(b *testing.B) {
	line := strings.Repeat("the quick brown fox jumps over the lazy dog; password=hunter22 "+fakeGitHub+" ", 8<<20/100)
	b.SetBytes(int64(len(line)))
	for b.Loop() {
		Redact(line)
	}
}

func FuzzRedact(f *testing.F) {
	for _, seed := range []string{"", "password=hunter22", fakeGitHub, fakeOpenAI, fakeAWSID, fakeSlack,
		"-----BEGIN RSA PRIVATE KEY-----\n" + fakePEMBody + "\n-----END RSA PRIVATE KEY-----",
		"-----BEGIN EC PRIVATE KEY-----\nAAAA", `"api_key": "0123456789"`, "token := \"日本語🙂\"", "\xed\xa0\x80password=\xff\xfe"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, in string) {
		found := Find(in)
		last := 0
		for _, r := range found {
			if r.Start < last || r.End <= r.Start || r.End > len(in) {
				t.Fatalf("redactions %+v overlap or leave the text", found)
			}
			last = r.End
		}
		got, n := Redact(in)
		if n != len(found) {
			t.Fatalf("count %d, found %d", n, len(found))
		}
		// Outside the redactions every non-ASCII character of the input
		// survives in order: multi-byte text is never cut.
		keep := func(s string) string {
			return strings.Map(func(r rune) rune {
				if r < utf8.RuneSelf {
					return -1
				}
				return r
			}, s)
		}
		if n == 0 && got != in {
			t.Fatalf("no redaction but the text changed")
		}
		if n > 0 && !strings.Contains(got, redactionOpen) {
			t.Fatalf("%d redactions but no replacement in %q", n, got)
		}
		// Each piece is decoded on its own: two invalid bytes on either
		// side of a secret ("\xcb", "\xb0") would read as one valid
		// character if the pieces were joined first.
		var outside, kept strings.Builder
		prev := 0
		for _, r := range found {
			outside.WriteString(keep(in[prev:r.Start]))
			prev = r.End
		}
		outside.WriteString(keep(in[prev:]))
		for rest := got; ; {
			i := strings.Index(rest, redactionOpen)
			if i < 0 {
				kept.WriteString(keep(rest))
				break
			}
			kept.WriteString(keep(rest[:i]))
			end := strings.IndexByte(rest[i:], ']')
			if end < 0 {
				kept.WriteString(keep(rest[i:]))
				break
			}
			rest = rest[i+end+1:]
		}
		if kept.String() != outside.String() {
			t.Fatalf("text outside the redactions changed:\n in %q\ngot %q", in, got)
		}
		// Idempotent: a redacted text has nothing left to redact.
		if again, m := Redact(got); m != 0 {
			t.Fatalf("redacting %q again found %d more: %q", got, m, again)
		}
	})
}
