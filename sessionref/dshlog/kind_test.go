package dshlog_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/dsh-refls/dsh-refls/internal/dshgen"
	"github.com/dsh-refls/dsh-refls/sessionref/dshlog"
	"github.com/dsh-refls/dsh-refls/sessionref/titles"
)

// kindCase is one generated log and the kind the index must give it.
type kindCase struct {
	s      *dshgen.Session
	enc    dshgen.Encoding
	want   dshlog.Kind
	seeded bool
}

// kindCases are logs of every kind, in the formats dsh writes them
// (kind.go cites the rules).
func kindCases() []kindCase {
	const created = 1_700_000_000_000
	v0 := func(id string) *dshgen.Session { return dshgen.NewSession(id).Cwd("/w").CreatedAt(created) }
	v4 := func(id string) *dshgen.Session { return dshgen.NewV4Session(id).Cwd("/w").CreatedAt(created) }
	prompt := func(t *dshgen.Turn) { t.UserText("Fix the build."); t.AssistantText("Fixed.") }
	return []kindCase{
		{s: v0("person-v0").Turn(prompt), enc: dshgen.Zstd, want: dshlog.KindInteractive},
		{s: v4("person-v4").Turn(func(t *dshgen.Turn) {
			t.SystemMessage("")
			t.UserSource("runtime-context", "Current working directory.") // injected first: not a prompt
			t.UserText("Fix the build.")
			t.AssistantText("Fixed.")
		}), enc: dshgen.Raw, want: dshlog.KindInteractive},
		{s: v0("steering-v0").Turn(func(t *dshgen.Turn) {
			t.AssistantLegacy("Ready.")
			t.SteeringFlat("Check the order summary too.")
		}), enc: dshgen.Raw, want: dshlog.KindInteractive},
		{s: v0("child-v0").Parent("person-v0").Descriptor("Audit call sites").Turn(prompt), enc: dshgen.Raw, want: dshlog.KindSubagent},
		{s: v4("child-v4").Parent("person-v4").DescriptorVersion(3, "Lint the docs").Turn(prompt), enc: dshgen.Zstd, want: dshlog.KindSubagent},
		// A delegation depth alone, or a descriptor alone, says child too.
		{s: v0("deep-v0").DelegationDepth(2).Turn(prompt), enc: dshgen.Raw, want: dshlog.KindSubagent},
		{s: v0("described-v0").Descriptor("Lone descriptor").Turn(prompt), enc: dshgen.Raw, want: dshlog.KindSubagent},
		{s: v0("fork-v0").ForkOf("person-v0", 3).Turn(prompt), enc: dshgen.Raw, want: dshlog.KindInteractive, seeded: true},
		{s: v4("fork-v4").ForkOf("person-v4", 0).Turn(prompt), enc: dshgen.Raw, want: dshlog.KindInteractive, seeded: true},
		{s: v4("webhook-v4").Turn(func(t *dshgen.Turn) {
			t.Webhook("Review pull request #12.")
			t.AssistantText("Reviewed.")
		}).Turn(prompt), enc: dshgen.Raw, want: dshlog.KindAutomation}, // the first prompt decides
		{s: v0("webhook-v0").Turn(func(t *dshgen.Turn) {
			t.Webhook("Review pull request #13.")
			t.AssistantText("Reviewed.")
		}), enc: dshgen.Zstd, want: dshlog.KindAutomation},
		{s: v0("blank-v0"), enc: dshgen.Raw, want: dshlog.KindNoPrompt},
		{s: v4("plugin-only-v4").Turn(func(t *dshgen.Turn) {
			t.UserPlugin("session-archive", "Summarise the archived session.")
			t.AssistantText("Summary.")
		}), enc: dshgen.Raw, want: dshlog.KindNoPrompt},
		// v4 keeps only messages that say they are the user's: a plugin's
		// v0 form read as v4 is no prompt.
		{s: v4("v4-plugin-kind").Turn(func(t *dshgen.Turn) {
			t.UserSource("webhook-ish", "not a delivery")
			t.AssistantText("ok")
		}), enc: dshgen.Raw, want: dshlog.KindNoPrompt},
	}
}

// TestIndexClassifiesSessions builds an index over logs of every kind and
// checks each session's kind and fork mark, then again from the cache the
// index saved: the classification is kept, not recomputed from logs.
func TestIndexClassifiesSessions(t *testing.T) {
	root := t.TempDir()
	cases := kindCases()
	for _, c := range cases {
		if _, err := c.s.Save(root, c.enc); err != nil {
			t.Fatal(err)
		}
	}
	ix := titles.NewIndex(root, titles.IndexOptions{})
	if err := ix.Build(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	check := func(what string, snap *titles.Snapshot) {
		t.Helper()
		for _, c := range cases {
			e, ok := snap.Locate(c.s.ID())
			if !ok {
				t.Errorf("%s: %s is not listed", what, c.s.ID())
				continue
			}
			if got := e.Kind(); got != c.want || e.Seeded != c.seeded {
				t.Errorf("%s: %s is %v (seeded %v), want %v (seeded %v)", what, c.s.ID(), got, e.Seeded, c.want, c.seeded)
			}
			if e.Kind().Hidden() != (c.want != dshlog.KindInteractive) {
				t.Errorf("%s: %s hidden = %v", what, c.s.ID(), e.Kind().Hidden())
			}
		}
	}
	check("built", ix.Snapshot())
	cache := filepath.Join(t.TempDir(), "index.cache")
	if err := ix.SaveCache(cache); err != nil {
		t.Fatal(err)
	}
	again := titles.NewIndex(root, titles.IndexOptions{})
	if err := again.LoadCache(cache); err != nil {
		t.Fatal(err)
	}
	if err := again.Build(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if again.BytesRead() != 0 {
		t.Errorf("the restart read %d bytes of unchanged logs", again.BytesRead())
	}
	check("restored", again.Snapshot())
}

// TestPromptFoundInAnAppendedTail: a session with no prompt yet is
// classified again when its log grows, from the appended lines alone.
func TestPromptFoundInAnAppendedTail(t *testing.T) {
	root := t.TempDir()
	s := dshgen.NewSession("growing").Cwd("/w").CreatedAt(1_700_000_000_000).
		Turn(func(t *dshgen.Turn) { t.UserPlugin("agent-instructions", "Read AGENTS.md first.") })
	if _, err := s.Save(root, dshgen.Raw); err != nil {
		t.Fatal(err)
	}
	ix := titles.NewIndex(root, titles.IndexOptions{})
	if err := ix.Build(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	kind := func() dshlog.Kind {
		t.Helper()
		e, ok := ix.Snapshot().Locate("growing")
		if !ok {
			t.Fatal("growing is not listed")
		}
		return e.Kind()
	}
	if k := kind(); k != dshlog.KindNoPrompt {
		t.Fatalf("before its prompt the session is %v", k)
	}
	before := ix.BytesRead()
	path, err := s.Turn(func(t *dshgen.Turn) { t.UserText("Now fix the build."); t.AssistantText("Fixed.") }).Save(root, dshgen.Raw)
	if err != nil {
		t.Fatal(err)
	}
	if err := ix.Build(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if k := kind(); k != dshlog.KindInteractive {
		t.Errorf("after its prompt the session is %v", k)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if read := ix.BytesRead() - before; read <= 0 || read >= st.Size() {
		t.Errorf("the refresh read %d bytes of a %d-byte log, want the appended tail only", read, st.Size())
	}
}
