package dshgen

import (
	"fmt"
	"strconv"
)

// Logs of dsh 0.2.1 (dsh-v0.2.1-alpha.2, a public tree at
// zq0929/deepseek-harness@5593cc250aae228449197efd2413192165e3377f): the
// same-version additions of its docs/persistence-changes/ and the edge
// cases of format v4 that its own code decides (issue 28).

// The rules a refused log breaks, as the READ_FAILED message names them.
const (
	RefusalNotSurface = "not surface-eligible"
	RefusalShadowed   = "must include every shadowed surface node"
	RefusalTime       = "event time is not a safe integer"
)

// ChangeDirectory writes dsh 0.2.1's working-directory/change {cwd} and the
// notice it injects, a user message of source kind "working-directory"
// that projection skips (packages/session/working-directory/src/index.ts):
// the session's effective directory becomes cwd; header.cwd stays.
func (s *Session) ChangeDirectory(cwd string) *Session {
	previous := s.cwd
	if s.workDir != "" {
		previous = s.workDir
	}
	s.emit("working-directory/change", obj{{"cwd", cwd}})
	s.workDir = cwd
	return s.UserSource("working-directory", "The working directory changed from "+strconv.Quote(previous)+" to "+strconv.Quote(cwd)+".")
}

// DeveloperNotice writes a v4 developer/message whose source has the given
// kind (e.g. "working-directory" for `Current working directory: "…".`);
// projection skips it.
func (s *Session) DeveloperNotice(kind, text string) *Session {
	msg := obj{{"role", "developer"}, {"content", textBlocks(text)}, {"source", obj{{"kind", kind}}}, {"id", s.newID()}}
	seq := s.emit("developer/message", obj{{"turn", s.turnNumber()}, {"step", s.stepNumber()}, {"message", msg}}, appendOp)
	s.proj.appendItem(surfaceItem{seq: seq, kept: false, role: "developer"})
	return s
}

// CatalogFact writes a subagent/catalog fact of any payload version and
// mode: version 2 with mode "external" names a child with no local session
// (docs/persistence-changes/2026-09-19-external-subagent-catalog.md); an
// empty label is left out.
func (s *Session) CatalogFact(version int, childID, mode, label string) *Session {
	data := obj{{"version", version}, {"childId", childID}, {"childCreatedAt", DefaultCreatedAt}, {"mode", mode}}
	if label != "" {
		data = data.with("label", label)
	}
	s.emit("subagent/catalog", data)
	return s
}

// TitleRequest writes a session/title-llm-request with the optional
// reasoningEffort dsh 0.2.1 records
// (docs/persistence-changes/2026-10-07-title-reasoning-effort.md).
func (s *Session) TitleRequest(effort string) *Session {
	msg := obj{{"role", "user"}, {"content", textBlocks("Name this session.")}, {"source", obj{{"kind", "session-title"}}}, {"id", s.newID()}}
	s.emit("session/title-llm-request", obj{{"provider", defaultProvider}, {"model", defaultModel}, {"messages", []any{msg}}, {"reasoningEffort", effort}})
	return s
}

// PTCDispatch writes a tool/ptc-dispatch with the optional meta of dsh
// 0.2.1 (docs/persistence-changes/2026-10-05-ptc-operation-metadata.md).
func (s *Session) PTCDispatch(callID string) *Session {
	s.emit("tool/ptc-dispatch", obj{{"turn", s.turnNumber()}, {"step", s.stepNumber()}, {"callId", callID},
		{"content", textBlocks("ok")}, {"meta", obj{{"cwd", "/work/cases/v021"}, {"target", "src/main.go"}}}})
	return s
}

// IgnorableSurface writes an event of an unknown type marked ignorable that
// also carries a surfaceOp: dsh keeps it and it never touches the surface
// (SPEC §1.7).
func (s *Session) IgnorableSurface(typ string) *Session {
	s.emit(typ, obj{{"note", "written by a newer dsh"}}, kv{"ignorable", true}, appendOp)
	return s
}

// Row defects InvalidRow writes.
const (
	DefectExtraKey        = "extra-key"        // a key outside the v4 envelope
	DefectIgnorableFalse  = "ignorable-false"  // "ignorable": false
	DefectIgnorableString = "ignorable-string" // "ignorable": "true"
	DefectUpperSeq        = "upper-seq"        // "SEQ" instead of "seq"
)

// InvalidRow writes a user message whose envelope dsh does not admit
// (defect, one of the Defect constants) with the next seq: the row ends the
// readable prefix like an unparsable line, so Expected stays what it is
// now; a later turn/end makes the log corrupt, and in a zstd log the row is
// inside a complete frame, which makes it corrupt too (SaveCase).
func (s *Session) InvalidRow(defect string) *Session {
	e := s.Expected()
	s.frozen = &e
	seqKey, extra := `"seq"`, ""
	switch defect {
	case DefectExtraKey:
		extra = `,"note":"not an envelope key"`
	case DefectIgnorableFalse:
		extra = `,"ignorable":false`
	case DefectIgnorableString:
		extra = `,"ignorable":"true"`
	case DefectUpperSeq:
		seqKey = `"SEQ"`
	default:
		s.fail("unknown row defect %q", defect)
	}
	seq := s.nextSeq
	s.nextSeq++
	s.addLine([]byte(`{"type":"user/message",` + seqKey + `:` + strconv.FormatInt(seq, 10) + `,"time":` +
		strconv.FormatInt(s.nextTime(), 10) + `,"data":` + s.userData("after the invalid row") + `,"surfaceOp":"append"` + extra + `}`))
	return s
}

// userData is the data of a direct human prompt.
func (s *Session) userData(text string) string {
	return string(appendJSON(nil, obj{{"content", textBlocks(text)}, {"source", obj{{"kind", "user"}}}, {"role", "user"}, {"id", s.newID()}}))
}

// UserTextSpelled writes a direct human prompt whose seq and time are
// written as the given JSON numbers (%d stands for the value): "%d.0",
// "%de0" and "%d0e-1" are the same safe integers to JavaScript. A time that
// is not a safe integer ("%d.5") makes dsh refuse the log.
func (s *Session) UserTextSpelled(text, seqSpelling, timeSpelling string) *Session {
	seq := s.nextSeq
	s.nextSeq++
	t := s.nextTime()
	spell := func(f string, n int64) string {
		if f == "" {
			return strconv.FormatInt(n, 10)
		}
		return fmt.Sprintf(f, n)
	}
	timeText := spell(timeSpelling, t)
	s.addLine([]byte(`{"type":"user/message","seq":` + spell(seqSpelling, seq) + `,"time":` + timeText +
		`,"data":` + s.userData(text) + `,"surfaceOp":"append"}`))
	if f, err := strconv.ParseFloat(timeText, 64); err == nil && f != float64(int64(f)) {
		s.refusal = RefusalTime
		return s
	}
	s.proj.appendItem(surfaceItem{seq: seq, kept: true, role: "user", text: sanitizeText(text)})
	s.lastUserSeq = seq
	return s
}

// TitleWithSurfaceOp writes a session/title that carries a surfaceOp: dsh
// refuses the log ("not surface-eligible"); the title index still lists
// the title.
func (s *Session) TitleWithSurfaceOp(title string) *Session {
	s.emit("session/title", obj{{"title", title}, {"messageSeqs", []int64{}}, {"source", obj{{"kind", "fallback"}}}}, appendOp)
	s.proj.title, s.proj.hasTitle = sanitizeText(title), true
	s.refusal = RefusalNotSurface
	return s
}

// CheckpointMissingSource writes a v4 compaction checkpoint replacing the
// surface range start..end whose sourceEventSeqs leave out the first
// shadowed node: dsh refuses the log.
func (s *Session) CheckpointMissingSource(text string, start, end int64) *Session {
	s.compactions++
	src := obj{{"kind", "compact-checkpoint"}, {"compactionId", fmt.Sprintf("compaction-%d", s.compactions)}}
	op := obj{{"op", "replace"}, {"startSeq", start}, {"endSeq", end}}
	sources := seqRanges(s.surfaceSeqsBetween(start, end)[1:])
	data := obj{{"content", textBlocks(text)}, {"source", src}, {"role", "user"}, {"id", s.newID()}}
	s.emit("user/message", data, kv{"sourceEventSeqs", sources}, kv{"surfaceOp", op})
	s.refusal = RefusalShadowed
	return s
}

// RetiredHeaderField adds a header key dsh no longer writes (sandboxMode,
// approvalPolicy): dsh's header reader refuses it; dsh-refls reads the log
// (docs/reliability.md, "Deliberate tolerances").
func (s *Session) RetiredHeaderField(key, value string) *Session {
	s.headerExtra = append(s.headerExtra, kv{key, value})
	return s
}

// HeaderFrameWithEvents makes a zstd save put the first batch of events in
// the header's frame: dsh refuses such a file ("first frame is not exactly
// one header line"); dsh-refls reads it (docs/reliability.md).
func (s *Session) HeaderFrameWithEvents() *Session {
	s.headerWithEvents = true
	return s
}

// V021Cases writes one session per rule of issue 28 into root, in enc, and
// returns what a reader must report for each. Children named by a catalog
// and absent from root must not be listed.
func V021Cases(root string, enc Encoding) ([]Expected, error) {
	cwd := "/work/cases/v021"
	var out []Expected
	add := func(s *Session) error {
		path, err := s.Save(root, enc)
		if err != nil {
			return err
		}
		e := s.Expected()
		e.Path = path
		if s.frozen != nil && enc == Zstd {
			// Damage inside a complete zstd frame is corruption (§1.2).
			e.Preparable = false
		}
		out = append(out, e)
		return nil
	}
	base := func(name string) *Session {
		return NewV4Session("v021-" + name + "-" + enc.String()).Cwd(cwd)
	}
	v0 := func(name string) *Session {
		return NewSession("v021-" + name + "-" + enc.String()).Cwd(cwd)
	}
	hello := func(t *Turn) { t.UserText("Hello."); t.AssistantText("Hi.") }
	sessions := []*Session{
		// 1, 2: a session that moved into another directory, with the
		// notices of source kind "working-directory".
		NewV4Session("v021-moved-" + enc.String()).Cwd("/work/cases/elsewhere").Turn(func(t *Turn) {
			t.Step(func() {
				t.SystemMessage("")
				t.DeveloperNotice("working-directory", `Current working directory: "/work/cases/elsewhere".`)
				t.UserText("Move to the v021 project.")
				t.ChangeDirectory("/work/cases/middle")
				t.ChangeDirectory(cwd)
				t.UserSource("working-directory", `Current working directory: "`+cwd+`".`)
				t.AssistantText("Moved.")
				t.Title("Moved session", "provider")
			})
		}),
		// 3: catalog facts of versions 1 and 2 (unknown, external), a title
		// request with reasoningEffort, a ptc dispatch with meta.
		base("catalog").Turn(func(t *Turn) {
			t.UserText("Run the external reviewer.")
			t.CatalogFact(1, "v021-unknown-child", "unknown", "")
			t.CatalogFact(2, "v021-external-child", "external", "External reviewer")
			t.TitleRequest("high")
			t.PTCDispatch("call-ptc")
			t.AssistantText("Reviewer started.")
			t.Title("External review", "fallback")
		}),
		// 4: an unknown ignorable type with a surfaceOp.
		base("ignorable-surface").Turn(func(t *Turn) {
			t.UserText("Keep going.")
			t.IgnorableSurface("future/surface-note")
			t.AssistantText("Kept going.")
		}),
		// 5: rows dsh does not admit end the readable prefix.
		base("extra-key").Turn(hello).TurnStart().UserText("Second question.").InvalidRow(DefectExtraKey).UserText("dropped"),
		base("ignorable-false").Turn(hello).TurnStart().UserText("Second question.").InvalidRow(DefectIgnorableFalse).UserText("dropped"),
		base("ignorable-string").Turn(hello).TurnStart().UserText("Second question.").InvalidRow(DefectIgnorableString),
		base("extra-key-then-turn-end").Turn(hello).TurnStart().UserText("Second question.").InvalidRow(DefectExtraKey).
			AssistantText("dropped").TurnEnd("completed"),
		// 7: numbers as JavaScript reads them, keys case-sensitive.
		base("numbers").Turn(func(t *Turn) {
			t.UserTextSpelled("Seq as 1.0.", "%d.0", "%d.0")
			t.UserTextSpelled("Seq as 1e0.", "%de0", "%de0")
			t.UserTextSpelled("Seq as 10e-1.", "%d0e-1", "")
			t.AssistantText("Read.")
		}),
		v0("numbers-v0").Turn(func(t *Turn) {
			t.UserTextSpelled("Seq as 1.0 in v0.", "%d.0", "%de0")
			t.AssistantText("Read.")
		}),
		base("time-fraction").Turn(hello).Title("Half a millisecond", "fallback").TurnStart().UserTextSpelled("When?", "", "%d.5"),
		base("upper-seq").Turn(hello).TurnStart().UserText("Second question.").InvalidRow(DefectUpperSeq),
		v0("upper-seq-v0").Turn(hello).TurnStart().UserText("Second question.").InvalidRow(DefectUpperSeq),
		// 8: refusals dsh makes, and the tolerances dsh-refls keeps.
		base("title-surface-op").Turn(hello).TitleWithSurfaceOp("Title with a surfaceOp"),
		base("shadowed").Turn(func(t *Turn) {
			t.Step(func() {
				t.UserText("One.")
				t.AssistantText("Two.")
				t.UserText("Three.")
			})
		}).Turn(func(t *Turn) { t.CheckpointMissingSource("Summary.", 2, 4) }).Title("Missing source", "fallback"),
		v0("retired-header").RetiredHeaderField("sandboxMode", "workspace-write").Turn(hello).Title("Retired header field", "fallback"),
		base("header-frame-events").HeaderFrameWithEvents().Turn(hello).Title("Events in the header frame", "fallback"),
		base("title-kind").Turn(hello).Title("Title of an unknown kind", "imported"),
	}
	for _, s := range sessions {
		if err := add(s); err != nil {
			return nil, fmt.Errorf("writing dsh 0.2.1 case %s: %w", s.id, err)
		}
	}
	return out, nil
}
