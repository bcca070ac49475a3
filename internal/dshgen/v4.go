package dshgen

import (
	"fmt"
)

// NewV4Session starts a session of format v4 (dsh 0.2.x), saved as
// session.v4.jsonl[.zstd].
func NewV4Session(id string) *Session {
	return NewSession(id).Generation(4)
}

// MigratedBody makes the first zstd save write all events as one large
// frame without a declared content size, after the header frame, as dsh's
// migration to v4 writes a session it resumes (SPEC §1.7). Later appends
// are ordinary frames.
func (s *Session) MigratedBody() *Session {
	s.migratedBody = true
	return s
}

// takeStream is the stream of a v4 assistant message: its text as one
// text-chunks record, with no seq of its own (§1.7).
func (s *Session) takeStream(texts []string) []any {
	if len(texts) == 0 {
		return []any{}
	}
	dt := make([]int, len(texts))
	for i := range dt {
		dt[i] = 1 + s.rng.IntN(9)
	}
	return []any{obj{{"type", "text-chunks"}, {"time0", s.clock}, {"index", 0}, {"dt", dt}, {"texts", texts}}}
}

// seqRanges writes sourceEventSeqs as dsh's v4 writer does: every run of
// three or more consecutive seqs becomes a [start, end] pair.
func seqRanges(seqs []int64) []any {
	out := []any{}
	for i := 0; i < len(seqs); {
		j := i
		for j+1 < len(seqs) && seqs[j+1] == seqs[j]+1 {
			j++
		}
		if j-i >= 2 {
			out = append(out, []int64{seqs[i], seqs[j]})
		} else {
			for k := i; k <= j; k++ {
				out = append(out, seqs[k])
			}
		}
		i = j + 1
	}
	return out
}

// UserSource writes a user message with a producer-owned source kind of v4
// (runtime-context, agent-instructions, goal, plugin:<name>, …). Only kind
// "user" is kept by projection; compaction checkpoints use Checkpoint.
func (s *Session) UserSource(kind, text string) *Session {
	seq := s.userMessage(obj{{"kind", kind}}, kind == "user", text)
	if kind == "user" {
		s.lastUserSeq = seq
	}
	return s
}

// DeveloperMessage writes a v4 developer/message announcing a tool;
// projection skips it.
func (s *Session) DeveloperMessage(toolName string) *Session {
	if s.version < 4 {
		s.fail("developer/message needs version 4, the log is v%d", s.version)
	}
	msg := obj{{"role", "developer"}, {"content", []any{obj{{"type", "tool-addition"}, {"toolName", toolName}}}},
		{"source", obj{{"kind", "tool-registry"}}}, {"id", s.newID()}}
	seq := s.emit("developer/message", obj{{"turn", s.turnNumber()}, {"step", s.stepNumber()}, {"message", msg}}, appendOp)
	s.proj.appendItem(surfaceItem{seq: seq, kept: false, role: "developer"})
	return s
}

// Catalog writes the subagent/catalog fact a parent records for a child;
// the label is the child's display title when the child's own log gives
// none (§1.7). An empty label is left out.
func (s *Session) Catalog(childID string, childCreatedAt int64, label string) *Session {
	data := obj{{"version", 0}, {"childId", childID}, {"childCreatedAt", childCreatedAt}, {"mode", "one-shot"}}
	if label != "" {
		data = data.with("label", label)
	}
	s.emit("subagent/catalog", data)
	return s
}

// The rules a refused v4 log breaks, as the READ_FAILED message names them.
const (
	RefusalPluginSource  = `kind "plugin"`
	RefusalToolResult    = `"tool-result"`
	RefusalHeaderSystem  = "data.header.system"
	RefusalUnknownSurace = "carries a surfaceOp"
)

// RefusedPluginSource writes a user message with the retired kind "plugin"
// into a v4 log: dsh refuses the log (§1.7).
func (s *Session) RefusedPluginSource(text string) *Session {
	s.userMessage(obj{{"kind", "plugin"}, {"plugin", "compact"}, {"compactionId", "c-retired"}}, false, text)
	s.refusal = RefusalPluginSource
	return s
}

// RefusedToolResultBlock writes a v0-shaped tool result (a tool-result
// block) into a v4 log: dsh refuses the log.
func (s *Session) RefusedToolResultBlock(callID, text string) *Session {
	block := obj{{"type", "tool-result"}, {"toolCallId", callID}, {"content", textBlocks(text)}, {"isError", false}}
	msg := obj{{"id", s.newID()}, {"role", "tool"}, {"toolCallId", callID}, {"content", []any{block}}, {"source", obj{{"kind", "tool"}, {"callId", callID}}}}
	seq := s.emit("tool/result", obj{{"turn", s.turnNumber()}, {"step", s.stepNumber()}, {"message", msg}}, appendOp)
	s.proj.appendItem(surfaceItem{seq: seq, kept: false, role: "tool"})
	s.open.settle(callID)
	s.refusal = RefusalToolResult
	return s
}

// RefusedHeaderSystem writes a request/header with a system field into a
// v4 log: dsh refuses the log.
func (s *Session) RefusedHeaderSystem() *Session {
	s.emit("request/header", obj{{"header", obj{{"system", "You are a helpful agent."}, {"config", obj{{"provider", defaultProvider}}}}}, {"reason", "initial"}})
	s.refusal = RefusalHeaderSystem
	return s
}

// RefusedUnknownSurface writes an event of an unknown type that carries a
// surfaceOp: the surface cannot be folded, so the log is refused.
func (s *Session) RefusedUnknownSurface(typ string) *Session {
	s.emit(typ, obj{{"note", "written by a newer dsh"}}, appendOp)
	s.refusal = RefusalUnknownSurace
	return s
}

// MigratedPair writes a session dsh 0.2 resumed: the untouched v0 original
// (session.jsonl[.zstd], title "<title> (before the upgrade)") and beside it
// the migrated session.v4.jsonl[.zstd] with renumbered events, a further
// turn and a different title; the zstd v4 body is one large frame without
// a declared size. Expected describes the v4 file, the one a reader uses.
func MigratedPair(root, id, cwd string, enc Encoding, title string) (Expected, error) {
	old := NewSession(id).Cwd(cwd).Turn(func(t *Turn) {
		t.UserText("Plan the release of the parser rewrite.")
		t.TextChunks("First ", "freeze ", "the grammar.")
		t.AssistantText("First freeze the grammar.")
		t.Title(title+" (before the upgrade)", "fallback")
	})
	if _, err := old.Save(root, enc); err != nil {
		return Expected{}, err
	}
	mig := NewV4Session(id).Cwd(cwd).CreatedAt(old.createdAt).MigratedBody().Turn(func(t *Turn) {
		t.Step(func() {
			t.SystemMessage("")
			t.UserText("Plan the release of the parser rewrite.")
			t.AssistantText("First freeze the grammar.")
			t.Title(title+" (before the upgrade)", "fallback")
		})
	}).Turn(func(t *Turn) {
		t.Step(func() {
			t.UserText("And after the freeze?")
			t.UserSource("runtime-context", "Current runtime context.")
			t.AssistantText("Then cut a release candidate and run the corpus.")
			t.Title(title, "provider")
		})
	})
	path, err := mig.Save(root, enc)
	if err != nil {
		return Expected{}, err
	}
	e := mig.Expected()
	e.Path = path
	return e, nil
}

// V4Cases writes one session per v4 reading rule into root, in enc, and
// returns what a reader must report for each.
func V4Cases(root string, enc Encoding) ([]Expected, error) {
	cwd := "/work/cases/v4"
	var out []Expected
	add := func(s *Session) error {
		path, err := s.Save(root, enc)
		if err != nil {
			return err
		}
		e := s.Expected()
		e.Path = path
		out = append(out, e)
		return nil
	}
	base := func(name string) *Session {
		return NewV4Session("v4-" + name + "-" + enc.String()).Cwd(cwd)
	}
	sessions := []*Session{
		// Projection: only "user" and "compact-checkpoint" user messages and
		// assistant text; a range-pair checkpoint.
		base("projection").Turn(func(t *Turn) {
			t.Step(func() {
				t.SystemMessage("")
				t.DeveloperMessage("read_file")
				t.UserText("Find the flaky test.")
				t.UserSource("agent-instructions", "Follow AGENTS.md.")
				t.UserSource("plugin:acme-context", "Injected context.")
				t.UserPlugin("notes", "More injected context.")
				t.AssistantToolCall("call-1", "read_file", `{"path":"ci.log"}`)
				t.ToolResult("call-1", "FAIL TestTimeout", true)
			})
			t.Step(func() {
				t.AssistantText("TestTimeout races on the clock.")
				t.Title("Flaky test hunt", "provider")
			})
		}).Turn(func(t *Turn) {
			t.Step(func() {
				t.Checkpoint("Summary: TestTimeout is flaky because of the clock.", 3, 13)
				t.UserText("Fix it.")
				t.AssistantText("Injected a fake clock.")
			})
		}),
		// Open last turn: a started and an unstarted tool call in the open step.
		base("open-turn").Turn(func(t *Turn) {
			t.UserText("Deploy to staging.")
			t.AssistantText("Deploying.")
			t.Title("Staging deploy", "fallback")
		}).TurnStart().StepStart().UserText("Now production.").
			AssistantToolRequest("call-a", "deploy", `{"env":"prod"}`).
			AssistantToolCall("call-b", "notify", `{}`),
		// Titles: the last title wins; a version-3 descriptor labels a child.
		base("child").Parent("v4-parent-"+enc.String()).DescriptorVersion(3, "Lint the docs").Turn(func(t *Turn) {
			t.UserText("Lint docs/.")
			t.Title("First title", "fallback")
			t.AssistantText("Two broken links.")
			t.Title("Docs lint", "provider")
		}),
		base("child-v2-descriptor").Parent("v4-parent-"+enc.String()).DescriptorVersion(2, "Version two is not read in v4").Turn(func(t *Turn) {
			t.UserText("Count the TODOs.")
			t.AssistantText("Seventeen.")
		}),
		base("parent").Turn(func(t *Turn) {
			t.UserText("Delegate the chores.")
			t.Catalog("v4-child-v2-descriptor-"+enc.String(), DefaultCreatedAt, "TODO counter")
			t.AssistantText("Delegated.")
			t.Title("Chores", "fallback")
		}),
		// Unknown log-only types are skipped.
		base("unknown-log-only").Turn(func(t *Turn) {
			t.UserText("Hello.")
			t.Plain("future/log-only", map[string]any{"note": "newer dsh"})
			t.AssistantText("Hi.")
		}),
		// Refusals.
		base("refused-plugin").Turn(func(t *Turn) { t.UserText("a"); t.RefusedPluginSource("summary") }).Title("Refused: plugin source", "fallback"),
		base("refused-tool-result").Turn(func(t *Turn) {
			t.UserText("a")
			t.AssistantToolCall("c", "read", "{}")
			t.RefusedToolResultBlock("c", "out")
		}).Title("Refused: tool-result block", "fallback"),
		base("refused-header-system").Turn(func(t *Turn) { t.UserText("a"); t.RefusedHeaderSystem() }).Title("Refused: header system", "fallback"),
		base("refused-unknown-surface").Turn(func(t *Turn) { t.UserText("a"); t.RefusedUnknownSurface("future/message") }).Title("Refused: unknown surface", "fallback"),
	}
	for _, s := range sessions {
		if err := add(s); err != nil {
			return nil, fmt.Errorf("writing v4 case %s: %w", s.id, err)
		}
	}
	// The child whose version-2 descriptor gives nothing in v4 takes the
	// label its indexed parent's catalog records.
	for i := range out {
		if out[i].ID == "v4-child-v2-descriptor-"+enc.String() {
			out[i].DisplayTitle = "TODO counter"
		}
	}
	return out, nil
}
