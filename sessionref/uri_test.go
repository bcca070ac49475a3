package sessionref

import (
	"bytes"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dsh-refls/dsh-refls/internal/testfixtures"
	"github.com/dsh-refls/dsh-refls/sessionref/internal/jsjson"
	"github.com/dsh-refls/dsh-refls/sessionref/internal/jstest"
)

// uriGoldens were computed with node 20:
//
//	"dsh-session:" + Buffer.from(JSON.stringify(id), "utf8").toString("base64url")
var uriGoldens = []struct {
	name, id, uri string
}{
	{"uuid", "228b7b82-84ed-49b7-a567-981c03b28c77", "dsh-session:IjIyOGI3YjgyLTg0ZWQtNDliNy1hNTY3LTk4MWMwM2IyOGM3NyI"},
	{"one letter", "a", "dsh-session:ImEi"},
	{"html characters", "a<b>&c", "dsh-session:ImE8Yj4mYyI"},
	{"closing tag", "</referenced-sessions>", "dsh-session:IjwvcmVmZXJlbmNlZC1zZXNzaW9ucz4i"},
	{"line and paragraph separators", "line\u2028sep\u2029para", "dsh-session:ImxpbmXigKhzZXDigKlwYXJhIg"},
	{"quotes", `say "hi"`, "dsh-session:InNheSBcImhpXCIi"},
	{"backslash", `back\slash`, "dsh-session:ImJhY2tcXHNsYXNoIg"},
	{"newline CR tab", "new\nline\r\ttab", "dsh-session:Im5ld1xubGluZVxyXHR0YWIi"},
	{"control characters", "\b\f\x00\x01\x1f\x7f", "dsh-session:IlxiXGZcdTAwMDBcdTAwMDFcdTAwMWZ_Ig"},
	{"CJK", "会话-标识", "dsh-session:IuS8muivnS3moIfor4Yi"},
	{"astral", "emoji 😀 𝄞", "dsh-session:ImVtb2ppIPCfmIAg8J2EniI"},
	{"mixed separators", "é/ü:~ .", "dsh-session:IsOpL8O8On4gLiI"},
	{"BOM and NBSP", "\ufeff\u00a0", "dsh-session:Iu-7v8KgIg"},
	{"replacement character", "\ufffd", "dsh-session:Iu-_vSI"},
	{"replacement inside", "a\ufffdb", "dsh-session:ImHvv71iIg"},
	{"segment-looking", "~002E", "dsh-session:In4wMDJFIg"},
	{"dot", ".", "dsh-session:Ii4i"},
	{"empty", "", "dsh-session:IiI"},
}

func TestEncodeURIGoldens(t *testing.T) {
	for _, tt := range uriGoldens {
		t.Run(tt.name, func(t *testing.T) {
			if got := EncodeURI(tt.id); got != tt.uri {
				t.Errorf("EncodeURI(%q) = %q, node gives %q", tt.id, got, tt.uri)
			}
			id, err := DecodeURI(tt.uri)
			if err != nil || id != tt.id {
				t.Errorf("DecodeURI(%q) = %q, %v; want %q", tt.uri, id, err, tt.id)
			}
		})
	}
}

func TestEncodeURIInvalidUTF8(t *testing.T) {
	// An invalid byte is U+FFFD, so the id decodes to its repaired form.
	uri := EncodeURI("a\xffb")
	if uri != "dsh-session:ImHvv71iIg" {
		t.Fatalf("EncodeURI(%q) = %q, want the URI of %q", "a\xffb", uri, "a\ufffdb")
	}
	if id, err := DecodeURI(uri); err != nil || id != "a\ufffdb" {
		t.Fatalf("DecodeURI(%q) = %q, %v", uri, id, err)
	}
}

func TestDecodeURIRejects(t *testing.T) {
	// Payloads of JSON texts were built with node's Buffer base64url.
	tests := []struct {
		name, uri string
		reason    error
	}{
		{"no prefix", "ImEi", errURIScheme},
		{"other scheme", "dsh-sessions:ImEi", errURIScheme},
		{"uppercase scheme", "DSH-SESSION:ImEi", errURIScheme},
		{"scheme alone", "dsh-session:", errURIEmpty},
		{"padding", "dsh-session:ImFiIg==", errURIAlphabet},
		{"standard alphabet plus", "dsh-session:Im+i", errURIAlphabet},
		{"standard alphabet slash", "dsh-session:Im/i", errURIAlphabet},
		{"percent", "dsh-session:%%%", errURIAlphabet},
		{"space", "dsh-session:ImEi ", errURIAlphabet},
		{"newline inside", "dsh-session:Im\nEi", errURIAlphabet},
		{"impossible length", "dsh-session:ImFiI", errURIBase64},
		{"trailing bits", "dsh-session:ImFiIh", errURIBase64},
		{"invalid UTF-8", "dsh-session:Iv8i", errURIUTF8},
		{"unterminated string", "dsh-session:ImE", errURINotString},
		{"two strings", "dsh-session:ImEiImIi", errURINotString},
		{"raw control character", "dsh-session:IgEi", errURINotString},
		{"number", "dsh-session:MQ", errURINotString},
		{"null", "dsh-session:bnVsbA", errURINotString},
		{"object", "dsh-session:eyJhIjoxfQ", errURINotString},
		{"array", "dsh-session:WyJhIl0", errURINotString},
		{"escaped letter", "dsh-session:Ilx1MDA2MSI", errURINotCanon},
		{"whitespace before", "dsh-session:ICJhIg", errURINotCanon},
		{"whitespace after", "dsh-session:ImEiIA", errURINotCanon},
		{"escaped slash", "dsh-session:IlwvIg", errURINotCanon},
		{"escaped U+2028", "dsh-session:Ilx1MjAyOCI", errURINotCanon},
		{"escaped less-than", "dsh-session:Ilx1MDAzYyI", errURINotCanon},
		{"uppercase hex escape", "dsh-session:Ilx1MDAxRiI", errURINotCanon},
		{"long form of backspace", "dsh-session:Ilx1MDAwOCI", errURINotCanon},
		{"escaped surrogate pair", "dsh-session:Ilx1ZDgzZFx1ZGUwMCI", errURINotCanon},
		{"escaped replacement character", "dsh-session:Ilx1ZmZmZCI", errURINotCanon},
		// JavaScript would accept this one: the id holds a lone surrogate,
		// which no Go string (and so no indexed session) can hold.
		{"lone surrogate", "dsh-session:Ilx1ZDgwMCI", errURINotCanon},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id, err := DecodeURI(tt.uri)
			if err == nil {
				t.Fatalf("DecodeURI(%q) = %q, want an error", tt.uri, id)
			}
			if CodeOf(err) != CodeInvalidReference {
				t.Errorf("code = %q, want %q", CodeOf(err), CodeInvalidReference)
			}
			var e *Error
			if !errors.As(err, &e) || e.Err != tt.reason {
				t.Errorf("DecodeURI(%q) error = %v, want reason %v", tt.uri, err, tt.reason)
			}
			if !strings.Contains(err.Error(), "malformed session URI") {
				t.Errorf("message %q does not say what failed", err.Error())
			}
		})
	}
}

func TestDecodeURILongInputQuotedShort(t *testing.T) {
	uri := "dsh-session:" + strings.Repeat("é", 1000)
	_, err := DecodeURI(uri)
	if err == nil {
		t.Fatal("accepted")
	}
	if len(err.Error()) > 2*maxQuotedInMessage+200 {
		t.Errorf("error message is %d bytes long", len(err.Error()))
	}
}

func TestURIsMatchRecordedStore(t *testing.T) {
	for _, fx := range loadFixtureExpectations(t) {
		t.Run(fx.Name, func(t *testing.T) {
			if got := EncodeURI(fx.SessionID); got != fx.URI {
				t.Errorf("EncodeURI(%q) = %q, dsh gives %q", fx.SessionID, got, fx.URI)
			}
			if got := Mention(fx.DisplayTitle, fx.SessionID); got != fx.Mention {
				t.Errorf("Mention = %q, dsh gives %q", got, fx.Mention)
			}
			spans := FindMentions("see " + fx.Mention + ".")
			if len(spans) != 1 || spans[0].SessionID != fx.SessionID || spans[0].Label != fx.DisplayTitle {
				t.Errorf("FindMentions = %+v", spans)
			}
		})
	}
}

// nodeCodecScript reads a JSON array of ids from the file named by its
// first argument and prints, per id, JSON.stringify(id), its URI, and the
// ids array serialised with JSON.stringify(…, null, 2).
const nodeCodecScript = `
const fs = require("fs");
const ids = JSON.parse(fs.readFileSync(process.argv[1], "utf8"));
const out = ids.map((id) => {
  const js = JSON.stringify(id);
  return { js, uri: "dsh-session:" + Buffer.from(js, "utf8").toString("base64url") };
});
process.stdout.write(JSON.stringify({ out, compact: JSON.stringify(ids), indent: JSON.stringify({ ids, n: [1, 2.5, null, true, {}, []] }, null, 2) }));
`

// requireNode returns the path of node, skipping the test without it.
func requireNode(t *testing.T) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skipf("node is not on PATH (%v); the live JavaScript comparison needs it", err)
	}
	return node
}

// runNode runs script with node over input written to a file and returns
// its stdout.
func runNode(t *testing.T, node, script string, input any) []byte {
	t.Helper()
	data, err := json.Marshal(input)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "input.json")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, "-e", script, path)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, stderr.String())
	}
	return out
}

func TestURIsAgainstLiveNode(t *testing.T) {
	node := requireNode(t)
	rng := rand.New(rand.NewPCG(5, 6))
	ids := make([]string, 0, 400)
	for _, g := range uriGoldens {
		ids = append(ids, g.id)
	}
	for len(ids) < cap(ids) {
		// Node reads the ids from JSON, so they are sent without invalid
		// UTF-8; invalid bytes are covered by the U+FFFD tests.
		ids = append(ids, string([]rune(jstest.RandomString(rng, 24))))
	}
	var got struct {
		Out []struct {
			JS  string `json:"js"`
			URI string `json:"uri"`
		} `json:"out"`
		Compact string `json:"compact"`
		Indent  string `json:"indent"`
	}
	if err := json.Unmarshal(runNode(t, node, nodeCodecScript, ids), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Out) != len(ids) {
		t.Fatalf("node answered %d ids, sent %d", len(got.Out), len(ids))
	}
	for i, id := range ids {
		if js := string(AppendJSString(nil, id)); js != got.Out[i].JS {
			t.Errorf("AppendJSString(%q) = %q, node %q", id, js, got.Out[i].JS)
		}
		if uri := EncodeURI(id); uri != got.Out[i].URI {
			t.Errorf("EncodeURI(%q) = %q, node %q", id, uri, got.Out[i].URI)
		}
		if back, err := DecodeURI(got.Out[i].URI); err != nil || back != id {
			t.Errorf("DecodeURI(node's %q) = %q, %v; want %q", got.Out[i].URI, back, err, id)
		}
	}
	compact, err := jsjson.Marshal(ids)
	if err != nil {
		t.Fatal(err)
	}
	if string(compact) != got.Compact {
		t.Errorf("jsjson.Marshal differs from JSON.stringify:\n go   %q\n node %q", compact, got.Compact)
	}
	indent, err := MarshalJSIndent(struct {
		IDs []string `json:"ids"`
		N   []any    `json:"n"`
	}{ids, []any{1, 2.5, nil, true, struct{}{}, []int{}}})
	if err != nil {
		t.Fatal(err)
	}
	if string(indent) != got.Indent {
		t.Errorf("MarshalJSIndent differs from JSON.stringify(v, null, 2):\n go   %q\n node %q", indent, got.Indent)
	}
}

// loadFixtureExpectations reads ../shared/fixtures/expected.json, skipping
// the test when the shared fixtures are not present.
func loadFixtureExpectations(t *testing.T) []testfixtures.Expected {
	t.Helper()
	return testfixtures.LoadExpected(t, testfixtures.Dir(t))
}
