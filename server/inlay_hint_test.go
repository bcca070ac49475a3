package server

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/dsh-refls/dsh-refls/internal/dshgen"
	"github.com/dsh-refls/dsh-refls/internal/lsptest"
	"github.com/dsh-refls/dsh-refls/sessionref"
	"github.com/dsh-refls/dsh-refls/sessionref/prepare"
)

// hintsOf asks for the inlay hints of the whole document uri.
func hintsOf(t *testing.T, h *harness, uri string) []inlayHint {
	t.Helper()
	var out []inlayHint
	h.mustCall("textDocument/inlayHint", map[string]any{"textDocument": map[string]any{"uri": uri},
		"range": Range{Start: Position{0, 0}, End: Position{100, 0}}}, &out)
	return out
}

// TestInlayHintsShowRecallAndRefresh: after each known session mention, a
// hint says what it would recall; when the session log grows the server
// asks the client to refresh, and the hint follows.
func TestInlayHintsShowRecallAndRefresh(t *testing.T) {
	opts, fake, ws := testOptions(t)
	opts.Watch = "fsnotify"
	h := newHarness(t, opts)
	res := featureInit(t, h, initOptions{root: ws})
	if res.Capabilities.InlayHintProvider == nil {
		t.Fatal("inlayHintProvider not advertised to a client with inlay hints")
	}
	fake.waitBuilt(t)
	mention := sessionref.Mention("p", "s-alpha")
	text := "😀 " + mention + " and " + sessionref.Mention("x", "s-ghost") + " and @[bad](dsh-session:%%%)"
	const uri = "file:///hints.md"
	h.open(uri, text, EncodingUTF16)
	texts := []string{"please fix ```the``` parser", "Done.", "and its tests", "Done too."}
	size := 0
	for _, s := range texts {
		size += len(s)
	}
	hints := hintsOf(t, h, uri)
	wantPos := Position{0, colOf(text, mention, EncodingUTF16) + colOf(mention+"\x00", "\x00", EncodingUTF16)}
	if len(hints) != 1 || hints[0].Label != fmt.Sprintf("· 4 msgs · %d B", size) || hints[0].Position != wantPos || !hints[0].PaddingLeft {
		t.Fatalf("hints = %+v, want one \"· 4 msgs · %d B\" at %+v", hints, size, wantPos)
	}

	// The session grows: one more turn.
	grown := dshgen.NewSession("s-alpha").Cwd(testCwd).CreatedAt(time.Now().Add(-time.Hour).UnixMilli()).
		Turn(func(t *dshgen.Turn) {
			t.UserText(texts[0])
			t.Title("Fix the parser", "provider")
			t.AssistantText(texts[1])
		}).
		Turn(func(t *dshgen.Turn) { t.UserText(texts[2]); t.AssistantText(texts[3]) }).
		Turn(func(t *dshgen.Turn) { t.UserText("more"); t.AssistantText("ok") })
	mark := h.editor.Mark()
	fake.add(t, grown)
	// The server asks for a refresh after the growth...
	h.awaitFrom(mark, lsptest.ServerCall("workspace/inlayHint/refresh"))
	// ...and the hints follow. The log is written in more than one write,
	// so the first refresh can come from a partial read: ask again after
	// each later message (or watch round) until the deadline.
	deadline := time.Now().Add(testTimeout)
	want := fmt.Sprintf("· 6 msgs · %d B", size+len("more")+len("ok"))
	for {
		next := h.editor.Mark()
		hints = hintsOf(t, h, uri)
		if len(hints) == 1 && hints[0].Label == want {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("hints after growth and refresh = %+v, want %q", hints, want)
		}
		h.awaitAnyFrom(next, 50*time.Millisecond)
	}
}

func TestHintText(t *testing.T) {
	cases := []struct {
		p    prepare.Preview
		want string
	}{
		{prepare.Preview{Stats: prepare.Stats{OriginalMessages: 12, RetainedMessages: 12}, RetainedTextBytes: 3482}, "· 12 msgs · 3.4 KB"},
		{prepare.Preview{Stats: prepare.Stats{OriginalMessages: 1, RetainedMessages: 1}, RetainedTextBytes: 9}, "· 1 msg · 9 B"},
		{prepare.Preview{Stats: prepare.Stats{OriginalMessages: 48, RetainedMessages: 9}}, "· truncated: 9 of 48 msgs kept"},
		{prepare.Preview{Stats: prepare.Stats{OriginalMessages: 3, RetainedMessages: 3, Truncated: true}}, "· truncated: 3 of 3 msgs kept"},
	}
	for _, c := range cases {
		if got := hintText(&c.p); got != c.want {
			t.Errorf("hintText(%+v) = %q, want %q", c.p.Stats, got, c.want)
		}
	}
	if !strings.HasSuffix(hintBytes(3<<20), " MB") {
		t.Errorf("hintBytes(3 MiB) = %q", hintBytes(3<<20))
	}
}
