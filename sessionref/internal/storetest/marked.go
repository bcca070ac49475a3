package storetest

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/dsh-refls/dsh-refls/internal/dshgen"
	"github.com/dsh-refls/dsh-refls/sessionref/dshlog/layout"
	"github.com/dsh-refls/dsh-refls/sessionref/titles"
)

// BodyMarker is a string only message bodies hold in MarkedStore.
const BodyMarker = "BODY-MARKER-7f3a9c"

// MarkedIDs are the sessions of MarkedStore, the healthy one first.
var MarkedIDs = []string{"marked-healthy", "marked-corrupt", "marked-corrupt-zstd", "marked-bad-surface",
	"marked-bad-surface-zstd", "marked-trailing", "marked-trailing-zstd", "marked-misplaced", "marked-headerless"}

// MarkedStore writes a store whose messages (healthy, corrupt, misplaced
// and unparsable alike) carry BodyMarker and indexes it with opts; then it
// appends a turn to the healthy session and refreshes the index with that
// log and the headerless one. It returns the snapshot after the refresh.
func MarkedStore(t *testing.T, opts titles.IndexOptions) *titles.Snapshot {
	t.Helper()
	root := filepath.Join(t.TempDir(), "sessions")
	body := func(who string) string { return who + " says " + BodyMarker }
	healthy := dshgen.NewSession("marked-healthy").Cwd(TargetCwd).Turn(func(t *dshgen.Turn) {
		t.UserText(body("user"))
		t.Title("Healthy", "user")
		t.AssistantText(body("assistant"))
	})
	healthyPath, err := healthy.Save(root, dshgen.Raw)
	if err != nil {
		t.Fatal(err)
	}
	// Damaged sessions, each written raw and as zstd with the same damage.
	damaged := map[string]func(id string) *dshgen.Session{
		"marked-corrupt": func(id string) *dshgen.Session {
			return dshgen.NewSession(id).Cwd(TargetCwd).Turn(func(t *dshgen.Turn) {
				t.UserText(body("user"))
				t.RawLine(`{"type":"assistant/message","seq":2,"data":{"content":"` + BodyMarker + ` cut`)
				t.RawLine(BodyMarker + " is not JSON at all")
				t.AssistantText(body("assistant"))
			}).MarkCorrupt()
		},
		"marked-bad-surface": func(id string) *dshgen.Session {
			return dshgen.NewSession(id).Cwd(TargetCwd).Turn(func(t *dshgen.Turn) {
				t.UserText(body("user"))
			}).NewBatch().
				RawLine(`{"type":"user/message","seq":4,"time":1,"data":{"content":[{"type":"text","text":"` + BodyMarker + `"}],"source":{"kind":"user"}},"surfaceOp":{"op":"replace","start":90,"end":91}}`).
				RawLine(`{"type":"turn/end","seq":5,"time":2,"data":{"turn":2}}`)
		},
		"marked-trailing": func(id string) *dshgen.Session {
			return dshgen.NewSession(id).Cwd(TargetCwd).Turn(func(t *dshgen.Turn) {
				t.UserText(body("user"))
			}).NewBatch().RawLine(`{"type":"user/message","seq":9,"data":"` + BodyMarker)
		},
	}
	for id, build := range damaged {
		if _, err := build(id).Save(root, dshgen.Raw); err != nil {
			t.Fatal(err)
		}
		if _, err := build(id+"-zstd").Save(root, dshgen.Zstd); err != nil {
			t.Fatal(err)
		}
	}
	misplaced := dshgen.NewSession("marked-misplaced").Cwd(TargetCwd).Turn(func(t *dshgen.Turn) {
		t.UserText(body("user"))
	})
	if err := misplaced.SaveAs(filepath.Join(root, layout.ProjectDir("/elsewhere", true), "marked-misplaced", "session.jsonl"), dshgen.Raw); err != nil {
		t.Fatal(err)
	}
	headerless := filepath.Join(root, layout.ProjectDir(TargetCwd, true), "marked-headerless", "session.jsonl")
	if err := os.MkdirAll(filepath.Dir(headerless), 0o755); err != nil {
		t.Fatal(err)
	}
	line := `{"type":"user/message","seq":0,"data":{"content":[{"type":"text","text":"` + BodyMarker + `"}]}}` + "\n"
	if err := os.WriteFile(headerless, []byte(line), 0o644); err != nil {
		t.Fatal(err)
	}

	ix := BuildIndex(t, root, opts)
	healthy.Turn(func(t *dshgen.Turn) {
		t.UserText(body("later user"))
		t.Title("Healthy, later", "user")
	})
	if err := healthy.Append(healthyPath); err != nil {
		t.Fatal(err)
	}
	if err := ix.Refresh(context.Background(), []string{healthyPath, headerless}); err != nil {
		t.Fatal(err)
	}
	snap := ix.Snapshot()
	if e, ok := snap.Locate("marked-healthy"); !ok || e.Title != "Healthy, later" {
		t.Fatalf("the refresh was not applied: %+v", e)
	}
	return snap
}
