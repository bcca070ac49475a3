package dshgen

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"

	"github.com/google/uuid"
)

// Defaults chosen to look like the logs dsh writes.
const (
	// DefaultCreatedAt is the createdAt of a session that sets none, a fixed
	// instant so generated logs are reproducible.
	DefaultCreatedAt int64 = 1783350000000
	// firstEventDelay is the time between createdAt and the first event.
	firstEventDelay = 100
	// defaultTick is the time between consecutive events.
	defaultTick = 7
	// maxPackedDt bounds the time between members of a packed row.
	maxPackedDt = 30
	// defaultProvider and defaultModel fill model sources.
	defaultProvider = "deepseek-official"
	defaultModel    = "deepseek-v4-flash"
	// lastReadableVersion is the newest header version dsh-refls prepares (§1.3).
	lastReadableVersion = 4
)

// Session builds one dsh session log in memory, event by event, and writes it
// raw or zstd (see Save). Methods chain; a misuse (a packed row in a v2 log, a
// checkpoint replacing what is not in the surface, ...) is remembered and
// returned by Err, Bytes and Save.
type Session struct {
	id          string
	cwd         string
	hasCwd      bool
	version     int
	generation  int
	createdAt   int64
	parent      string
	origin      string
	depth       int
	omitDepth   bool
	seedLength  int
	seeded      bool
	agentPreset string

	clock   int64
	tick    int64
	nextSeq int64
	turn    int
	step    int
	inTurn  bool
	endKind string

	batches   []batch
	looseOpen bool
	// written counts batches already on disk; the header is written with
	// the first Save.
	written int
	saved   bool

	rng              *rand.Rand
	ids              *rand.ChaCha8
	compactions      int
	pendingChunkSeqs []int64
	lastUserSeq      int64
	corrupt          bool
	err              error
	// size is the byte length of the raw log so far, header excluded.
	size int64
	// scratch is reused to encode events.
	scratch []byte

	proj projection
	// open follows the turn the log would end in (closers).
	open openTurn
	// migratedBody writes the first save's events as one zstd frame
	// without a declared size, as dsh's migration does (§1.7).
	migratedBody bool
	// refusal is the rule a deliberately refused v4 log breaks.
	refusal string
	// frozen, once a row that ends the readable prefix is written
	// (InvalidRow), is what a reader must find: the prefix before it.
	frozen *Expected
	// headerExtra are header keys dsh no longer writes (RetiredHeaderField).
	headerExtra obj
	// headerWithEvents puts the first batch into the zstd header frame.
	headerWithEvents bool
	// workDir is the cwd of the last working-directory/change.
	workDir string
}

// batch is one append batch: the lines dsh writes at once, one zstd frame.
type batch struct {
	lines [][]byte
}

// NewSession starts a v0 session with the given id, no cwd, and createdAt
// DefaultCreatedAt. Identifiers inside the log derive from the id, so the
// same calls always give the same bytes.
func NewSession(id string) *Session {
	sum := sha256.Sum256([]byte(id))
	var seed [32]byte
	copy(seed[:], sum[:])
	s := &Session{
		id:          id,
		createdAt:   DefaultCreatedAt,
		clock:       DefaultCreatedAt + firstEventDelay,
		tick:        defaultTick,
		lastUserSeq: -1,
		ids:         rand.NewChaCha8(seed),
	}
	s.rng = rand.New(rand.NewPCG(binary.LittleEndian.Uint64(sum[:8]), binary.LittleEndian.Uint64(sum[8:16])))
	return s
}

// ID is the session id.
func (s *Session) ID() string { return s.id }

// Err is the first misuse of the builder, or nil.
func (s *Session) Err() error { return s.err }

// fail records the first misuse.
func (s *Session) fail(format string, args ...any) {
	if s.err == nil {
		s.err = fmt.Errorf("session %q: %s", s.id, fmt.Sprintf(format, args...))
	}
}

// header methods ----------------------------------------------------------

// Cwd sets the working directory; the session is stored under projectKey(cwd).
func (s *Session) Cwd(cwd string) *Session {
	s.cwd, s.hasCwd = cwd, true
	return s
}

// NoCwd removes the cwd; the session is stored under _no-cwd.
func (s *Session) NoCwd() *Session {
	s.cwd, s.hasCwd = "", false
	return s
}

// Version sets the header version. Call it before any event: event shapes
// depend on it (§1.6).
func (s *Session) Version(v int) *Session {
	if s.nextSeq > 0 {
		s.fail("Version called after events were added")
	}
	s.version = v
	return s
}

// Generation sets the successor generation the log is saved as:
// session.vN.jsonl. It also sets the header version to N, as §1.1 requires;
// call Version afterwards to build a mismatching log on purpose.
func (s *Session) Generation(n int) *Session {
	s.generation = n
	return s.Version(n)
}

// CreatedAt sets the header createdAt (ms) and moves the event clock after
// it. Call it before any event.
func (s *Session) CreatedAt(ms int64) *Session {
	if s.nextSeq > 0 {
		s.fail("CreatedAt called after events were added")
	}
	s.createdAt = ms
	s.clock = ms + firstEventDelay
	return s
}

// Parent marks the session as a subagent child of parent, at delegation
// depth 1 (change it with DelegationDepth).
func (s *Session) Parent(parent string) *Session {
	s.parent, s.origin = parent, "subagent"
	if s.depth == 0 {
		s.depth = 1
	}
	return s
}

// ForkOf marks the session as a fork of parent, as dsh's session fork
// writes one (docs/subsystems/session.md, "Live-session fork API", at
// zq0929/deepseek-harness@5593cc2): parentSession and a seeded header
// (seedLength n in v0/v1, isSeeded in v2+), no origin, delegation depth 0.
func (s *Session) ForkOf(parent string, n int) *Session {
	s.parent, s.origin, s.depth = parent, "", 0
	return s.Seeded(n)
}

// DelegationDepth sets the header delegationDepth.
func (s *Session) DelegationDepth(n int) *Session {
	s.depth = n
	return s
}

// OmitDelegationDepth leaves delegationDepth out of the header, as some
// recorded test logs do; readers take it as 0 (§1.3).
func (s *Session) OmitDelegationDepth() *Session {
	s.omitDepth = true
	return s
}

// Seeded marks the session as seeded: seedLength n in v0/v1 headers,
// isSeeded in v2+ headers.
func (s *Session) Seeded(n int) *Session {
	s.seeded, s.seedLength = true, n
	return s
}

// AgentPreset sets the header agentPreset.
func (s *Session) AgentPreset(p string) *Session {
	s.agentPreset = p
	return s
}

// Tick sets the time in ms between consecutive events (default 7).
func (s *Session) Tick(ms int64) *Session {
	if ms < 1 {
		ms = 1
	}
	s.tick = ms
	return s
}

// headerLine is the JSON of line 1.
func (s *Session) headerLine() []byte {
	h := obj{{"type", "session"}, {"version", s.version}, {"id", s.id}, {"createdAt", s.createdAt}}
	if s.hasCwd {
		h = h.with("cwd", s.cwd)
	}
	if s.parent != "" {
		h = h.with("parentSession", s.parent)
	}
	switch {
	case s.seeded && s.version >= 2:
		h = h.with("isSeeded", true)
	case s.seeded:
		h = h.with("seedLength", s.seedLength)
	case s.version >= 4:
		h = h.with("isSeeded", false) // required in v4 (§1.7)
	}
	if s.origin != "" {
		h = h.with("origin", s.origin)
	}
	if !s.omitDepth {
		h = h.with("delegationDepth", s.depth)
	}
	if s.agentPreset != "" {
		h = h.with("agentPreset", s.agentPreset)
	}
	h = append(h, s.headerExtra...)
	return appendJSON(nil, h)
}

// batching ----------------------------------------------------------------

// addLine puts one line into the current batch: the open turn's, or the
// batch of loose events written since the last turn or save.
func (s *Session) addLine(b []byte) {
	if !s.inTurn && !s.looseOpen {
		s.batches = append(s.batches, batch{})
		s.looseOpen = true
	}
	last := &s.batches[len(s.batches)-1]
	last.lines = append(last.lines, b)
	s.size += int64(len(b)) + 1
}

// NewBatch ends the current batch of loose events: the next event starts a
// new append batch (a new zstd frame).
func (s *Session) NewBatch() *Session {
	s.looseOpen = false
	return s
}

// Turn is the builder inside one turn. All Session methods work on it; the
// turn's events form one append batch.
type Turn struct {
	*Session
	steps int
}

// Turn writes one turn: turn/start, the events fn adds, turn/end. They form
// one append batch, so the zstd writer emits one frame for the turn.
func (s *Session) Turn(fn func(t *Turn)) *Session {
	if s.inTurn {
		s.fail("Turn called inside a turn")
		return s
	}
	s.looseOpen = false
	s.batches = append(s.batches, batch{})
	s.inTurn = true
	s.turn++
	s.step = 1
	s.endKind = "completed"
	s.emit("turn/start", obj{{"turn", s.turn}})
	fn(&Turn{Session: s})
	s.emit("turn/end", obj{{"turn", s.turn}, {"reason", obj{{"kind", s.endKind}}}})
	s.inTurn = false
	return s
}

// Step writes step/start, the events fn adds, and step/end.
func (t *Turn) Step(fn func()) *Turn {
	t.steps++
	t.step = t.steps
	t.emit("step/start", obj{{"turn", t.turn}, {"step", t.step}})
	fn()
	t.emit("step/end", obj{{"turn", t.turn}, {"step", t.step}})
	return t
}

// EndReason sets the reason kind of this turn's turn/end (default
// "completed"; dsh also writes "aborted" and "max-tokens").
func (t *Turn) EndReason(kind string) *Turn {
	t.endKind = kind
	return t
}

// emitting ----------------------------------------------------------------

// nextTime is the time of the next event.
func (s *Session) nextTime() int64 {
	t := s.clock
	s.clock += s.tick
	return t
}

// emit writes one event with the next seq and returns the seq.
func (s *Session) emit(typ string, data obj, tail ...kv) int64 {
	seq := s.nextSeq
	s.nextSeq++
	s.open.boundary(typ)
	if s.frozen != nil && typ == "turn/end" {
		// A turn/end after the damaged row makes the log corrupt (§1.2).
		s.frozen.Preparable = false
	}
	o := obj{{"type", typ}, {"seq", seq}, {"time", s.nextTime()}, {"data", data}}
	o = append(o, tail...)
	// Encode into the reused scratch buffer, then keep an exact-size copy:
	// one copy instead of repeated growth for long texts.
	s.scratch = appendJSON(s.scratch[:0], o)
	s.addLine(bytes.Clone(s.scratch))
	return seq
}

// newID is a message id: a version-4 UUID drawn from the session's stream.
func (s *Session) newID() string {
	u, err := uuid.NewRandomFromReader(s.ids)
	if err != nil {
		s.fail("drawing an id: %v", err)
		return "00000000-0000-4000-8000-000000000000"
	}
	return u.String()
}

// turnNumber is the turn events belong to: the open turn, else the last one.
func (s *Session) turnNumber() int {
	if s.turn == 0 {
		return 1
	}
	return s.turn
}

// stepNumber is the step events belong to.
func (s *Session) stepNumber() int {
	if s.step == 0 {
		return 1
	}
	return s.step
}

// textBlocks are text content blocks.
func textBlocks(texts ...string) []any {
	out := make([]any, len(texts))
	for i, t := range texts {
		out[i] = obj{{"type", "text"}, {"text", t}}
	}
	return out
}

// joinTexts is the projected text of text blocks (§2.3.3).
func joinTexts(texts []string) string {
	out := ""
	for i, t := range texts {
		if i > 0 {
			out += "\n"
		}
		out += sanitizeText(t)
	}
	return out
}

// appendOp is the surfaceOp of an appended surface event.
var appendOp = kv{"surfaceOp", "append"}

// userMessage writes a user/message with the given source and records it.
func (s *Session) userMessage(source obj, kept bool, texts ...string) int64 {
	data := obj{{"content", textBlocks(texts...)}, {"source", source}, {"role", "user"}, {"id", s.newID()}}
	seq := s.emit("user/message", data, appendOp)
	s.proj.appendItem(surfaceItem{seq: seq, kept: kept, role: "user", text: joinTexts(texts)})
	return seq
}

// UserText writes a direct human prompt: a user message with source kind
// "user". Projection keeps it.
func (s *Session) UserText(text string) *Session {
	s.lastUserSeq = s.userMessage(obj{{"kind", "user"}}, true, text)
	return s
}

// UserTexts writes a human prompt with several text blocks; projection joins
// them with "\n".
func (s *Session) UserTexts(texts ...string) *Session {
	s.lastUserSeq = s.userMessage(obj{{"kind", "user"}}, true, texts...)
	return s
}

// UserPlugin writes context injected by a plugin, in the snapshot form dsh
// plugins use (one section holding the text). Projection skips it.
func (s *Session) UserPlugin(plugin, text string) *Session {
	src := obj{{"kind", "plugin"}, {"plugin", plugin}, {"form", "snapshot"},
		{"sections", []any{obj{{"name", "context"}, {"text", text}}}}}
	if s.version >= 4 { // v4 has no plugin kind: every producer owns one (§1.7)
		src = obj{{"kind", "plugin:" + plugin}}
	}
	s.userMessage(src, false, text)
	return s
}

// Webhook writes the first message of a session a webhook delivery
// started: a user message whose source kind is "webhook" with the
// delivery's identifiers (v4), {kind:"plugin", plugin:"webhook"} before
// (docs/subsystems/webhook.md, "Session creation"; FORMAT-v4 §8.3).
// Projection skips it: it is not a person's prompt.
func (s *Session) Webhook(text string) *Session {
	src := obj{{"kind", "plugin"}, {"plugin", "webhook"}}
	if s.version >= 4 {
		src = obj{{"kind", "webhook"}, {"provider", "github"}, {"source", "repo-events"},
			{"delivery", s.newID()}, {"rule", "review-pull-requests"}}
	}
	s.userMessage(src, false, text)
	return s
}

// SessionReference writes a prepared snapshot message (source kind
// "session-reference"). Projection skips it: snapshots never nest.
func (s *Session) SessionReference(text string) *Session {
	src := obj{{"kind", "session-reference"}, {"form", "recall"}, {"version", 1}, {"references", []any{}}}
	s.userMessage(src, false, text)
	return s
}

// Checkpoint writes a compaction checkpoint that replaces the surface range
// from the event with seq replaceStartSeq to the one with replaceEndSeq. The
// op is {"op":"replace","start","end"} up to v2, {"startSeq","endSeq"} from
// v3; the source is the compact plugin, or kind "compact-checkpoint" in v4+.
func (s *Session) Checkpoint(text string, replaceStartSeq, replaceEndSeq int64) *Session {
	s.compactions++
	compactionID := fmt.Sprintf("compaction-%d", s.compactions)
	src := obj{{"kind", "plugin"}, {"plugin", "compact"}, {"compactionId", compactionID}}
	if s.version >= 4 {
		src = obj{{"kind", "compact-checkpoint"}, {"compactionId", compactionID}}
	}
	op := obj{{"op", "replace"}, {"start", replaceStartSeq}, {"end", replaceEndSeq}}
	if s.version >= 3 {
		op = obj{{"op", "replace"}, {"startSeq", replaceStartSeq}, {"endSeq", replaceEndSeq}}
	}
	var sources any = s.surfaceSeqsBetween(replaceStartSeq, replaceEndSeq)
	switch {
	case s.version >= 4:
		sources = seqRanges(s.surfaceSeqsBetween(replaceStartSeq, replaceEndSeq))
	case s.version >= 2 && replaceEndSeq > replaceStartSeq:
		sources = []any{[]int64{replaceStartSeq, replaceEndSeq}}
	}
	data := obj{{"content", textBlocks(text)}, {"source", src}, {"role", "user"}, {"id", s.newID()}}
	seq := s.emit("user/message", data, kv{"sourceEventSeqs", sources}, kv{"surfaceOp", op})
	it := surfaceItem{seq: seq, kept: true, role: "user", text: sanitizeText(text), checkpoint: true}
	if !s.proj.replaceItems(replaceStartSeq, replaceEndSeq, it) {
		s.fail("checkpoint at seq %d replaces %d..%d, which is not a range of the current surface", seq, replaceStartSeq, replaceEndSeq)
	}
	return s
}

// surfaceSeqsBetween lists the seqs of surface items from start to end.
func (s *Session) surfaceSeqsBetween(start, end int64) []int64 {
	out := []int64{}
	i, j := s.proj.position(start), s.proj.position(end)
	if i < 0 || j < 0 || i > j {
		return append(out, start, end)
	}
	for _, it := range s.proj.surface[i : j+1] {
		out = append(out, it.seq)
	}
	return out
}

// takeChunkSeqs returns the chunk seqs since the last assistant message.
func (s *Session) takeChunkSeqs() []int64 {
	out := s.pendingChunkSeqs
	if out == nil {
		out = []int64{}
	}
	s.pendingChunkSeqs = nil
	return out
}

// modelSource is the source of model output.
func modelSource() obj {
	return obj{{"kind", "model"}, {"provider", defaultProvider}, {"model", defaultModel}}
}

// usage is a plausible token usage record.
func (s *Session) usage(outText string) obj {
	return obj{{"inputTokens", 64 + s.rng.IntN(4096)}, {"outputTokens", 1 + len(outText)/4}, {"cacheReadTokens", 0}, {"reasoningTokens", 0}}
}

// assistant writes a wrapped v0 assistant/message with the given blocks.
func (s *Session) assistant(blocks []any, texts []string) *Session {
	msg := obj{{"role", "assistant"}, {"content", blocks}, {"source", modelSource()}, {"id", s.newID()}}
	var seq int64
	if s.version >= 4 {
		// v4: the stream records live inside the message (no seq of their
		// own), and assistant messages carry no sourceEventSeqs.
		data := obj{{"turn", s.turnNumber()}, {"step", s.stepNumber()}, {"stream", s.takeStream(texts)}, {"message", msg}, {"usage", s.usage(joinTexts(texts))}}
		seq = s.emit("assistant/message", data, appendOp)
	} else {
		data := obj{{"turn", s.turnNumber()}, {"step", s.stepNumber()}, {"message", msg}, {"usage", s.usage(joinTexts(texts))}}
		seq = s.emit("assistant/message", data, kv{"sourceEventSeqs", s.takeChunkSeqs()}, appendOp)
	}
	s.proj.appendItem(surfaceItem{seq: seq, kept: true, role: "assistant", text: joinTexts(texts)})
	return s
}

// AssistantText writes a model reply in the v0 wrapper shape
// {turn, step, message:{role, content, source, id}, usage}.
func (s *Session) AssistantText(text string) *Session {
	return s.assistant(textBlocks(text), []string{text})
}

// AssistantReasoning writes a model reply with a reasoning block before its
// text; projection keeps only the text.
func (s *Session) AssistantReasoning(reasoning, text string) *Session {
	blocks := []any{obj{{"type", "reasoning"}, {"text", reasoning}}, obj{{"type", "text"}, {"text", text}}}
	return s.assistant(blocks, []string{text})
}

// Reasoning writes an assistant message holding only a reasoning block;
// projection drops it (its text is empty).
func (s *Session) Reasoning(text string) *Session {
	return s.assistant([]any{obj{{"type", "reasoning"}, {"text", text}}}, nil)
}

// AssistantToolCall writes an assistant message holding only a tool call
// block, followed by the tool/call event dsh writes for it; projection drops
// the message (its text is empty).
func (s *Session) AssistantToolCall(callID, name, arguments string) *Session {
	s.AssistantToolRequest(callID, name, arguments)
	s.open.start(callID)
	s.emit("tool/call", obj{{"turn", s.turnNumber()}, {"step", s.stepNumber()}, {"callId", callID}, {"name", name}, {"arguments", arguments}})
	return s
}

// AssistantToolRequest writes an assistant message holding only a tool call
// block, without the tool/call event that says the tool started.
func (s *Session) AssistantToolRequest(callID, name, arguments string) *Session {
	block := obj{{"type", "tool-call"}, {"id", callID}, {"name", name}, {"arguments", arguments}}
	s.assistant([]any{block}, nil)
	s.open.request(callID)
	return s
}

// AssistantLegacy writes an assistant message in the older shape without the
// message wrapper: {turn, step, content, provenance, usage}.
func (s *Session) AssistantLegacy(text string) *Session {
	data := obj{{"turn", s.turnNumber()}, {"step", s.stepNumber()}, {"content", textBlocks(text)},
		{"provenance", obj{{"provider", defaultProvider}, {"model", defaultModel}}}, {"usage", s.usage(text)}}
	seq := s.emit("assistant/message", data, kv{"sourceEventSeqs", s.takeChunkSeqs()}, appendOp)
	s.proj.appendItem(surfaceItem{seq: seq, kept: true, role: "assistant", text: sanitizeText(text)})
	return s
}

// Steering writes a legacy steering/message {turn, message}: a user message
// sent mid-turn, which dsh upgrades to a user/message appended to the
// surface. Projection keeps it as a user message.
func (s *Session) Steering(text string) *Session {
	msg := obj{{"content", textBlocks(text)}, {"source", obj{{"kind", "user"}}}, {"role", "user"}, {"id", s.newID()}}
	seq := s.emit("steering/message", obj{{"turn", s.turnNumber()}, {"message", msg}})
	s.proj.appendItem(surfaceItem{seq: seq, kept: true, role: "user", text: sanitizeText(text)})
	return s
}

// SteeringFlat writes a legacy steering/message in its flat shape
// {turn, content, source}. Projection keeps it as a user message.
func (s *Session) SteeringFlat(text string) *Session {
	seq := s.emit("steering/message", obj{{"turn", s.turnNumber()}, {"content", textBlocks(text)}, {"source", obj{{"kind", "user"}}}})
	s.proj.appendItem(surfaceItem{seq: seq, kept: true, role: "user", text: sanitizeText(text)})
	return s
}

// ToolCall writes a tool/call event (not a surface event).
func (s *Session) ToolCall(callID, name, arguments string) *Session {
	s.open.start(callID)
	s.emit("tool/call", obj{{"turn", s.turnNumber()}, {"step", s.stepNumber()}, {"callId", callID}, {"name", name}, {"arguments", arguments}})
	return s
}

// ToolResult writes a tool/result surface event in the v0 wrapper shape.
// Projection skips it.
func (s *Session) ToolResult(callID, text string, isError bool) *Session {
	block := obj{{"type", "tool-result"}, {"toolCallId", callID}, {"content", textBlocks(text)}, {"isError", isError}}
	msg := obj{{"source", obj{{"kind", "tool"}, {"callId", callID}}}, {"content", []any{block}}, {"role", "user"}, {"id", s.newID()}}
	if s.version >= 4 { // v4: a role-tool message, no tool-result wrapper (§1.7)
		msg = obj{{"id", s.newID()}, {"role", "tool"}, {"toolCallId", callID}, {"isError", isError}, {"content", textBlocks(text)},
			{"source", obj{{"kind", "tool"}, {"callId", callID}}}}
	}
	data := obj{{"turn", s.turnNumber()}, {"step", s.stepNumber()}, {"message", msg}}
	s.open.settle(callID)
	seq := s.emit("tool/result", data, kv{"sourceEventSeqs", []int64{max(s.nextSeq-1, 0)}}, appendOp)
	s.proj.appendItem(surfaceItem{seq: seq, kept: false, role: "user", text: sanitizeText(text)})
	return s
}

// ToolResultLegacy writes a tool/result in the older flat shape
// {turn, step, callId, content, isError}. Projection skips it.
func (s *Session) ToolResultLegacy(callID, text string, isError bool) *Session {
	data := obj{{"turn", s.turnNumber()}, {"step", s.stepNumber()}, {"callId", callID}, {"content", textBlocks(text)}, {"isError", isError}}
	s.open.settle(callID)
	seq := s.emit("tool/result", data, kv{"sourceEventSeqs", []int64{max(s.nextSeq-1, 0)}}, appendOp)
	s.proj.appendItem(surfaceItem{seq: seq, kept: false, role: "user", text: sanitizeText(text)})
	return s
}

// SystemMessage writes a v3+ system/message surface event; projection skips
// it. Using it below v3 is a misuse.
func (s *Session) SystemMessage(text string) *Session {
	if s.version < 3 {
		s.fail("system/message needs version 3 or later, the log is v%d", s.version)
	}
	data := obj{{"content", textBlocks(text)}, {"source", obj{{"kind", "system"}}}, {"role", "system"}, {"id", s.newID()}}
	if s.version >= 4 {
		msg := obj{{"role", "system"}, {"content", textBlocks(text)}, {"source", obj{{"kind", "system-prompt"}}}, {"id", s.newID()}}
		data = obj{{"turn", s.turnNumber()}, {"step", s.stepNumber()}, {"message", msg}}
	}
	seq := s.emit("system/message", data, appendOp)
	s.proj.appendItem(surfaceItem{seq: seq, kept: false, role: "system", text: sanitizeText(text)})
	return s
}

// Title writes a session/title event; sourceKind is "fallback", "provider"
// or "user". The last title in log order is the title (§1.5).
func (s *Session) Title(title, sourceKind string) *Session {
	seqs := []int64{}
	if s.lastUserSeq >= 0 {
		seqs = append(seqs, s.lastUserSeq)
	}
	s.emit("session/title", obj{{"title", title}, {"messageSeqs", seqs}, {"source", obj{{"kind", sourceKind}}}})
	s.proj.title, s.proj.hasTitle = sanitizeText(title), true
	return s
}

// Descriptor writes a version-2 subagent/descriptor whose label is the
// display title (§1.5). An empty label is left out.
func (s *Session) Descriptor(label string) *Session {
	return s.DescriptorVersion(2, label)
}

// DescriptorVersion writes a subagent/descriptor of any version; only
// version 2 descriptors decide the display title.
func (s *Session) DescriptorVersion(version int, label string) *Session {
	data := obj{{"version", version}, {"mode", "continuable"}, {"provider", "spawn"}}
	if label != "" {
		data = data.with("label", label)
	}
	data = data.with("agentProvider", defaultProvider).with("agentModel", defaultModel)
	s.emit("subagent/descriptor", data)
	switch {
	case s.version >= 4:
		// v4: the last descriptor decides; only version 3 gives a label
		// (a continuable descriptor without one is malformed).
		s.proj.descriptorLabel = ""
		if version == 3 {
			s.proj.descriptorLabel = sanitizeText(label)
		}
	case version == 2:
		s.proj.descriptorLabel = sanitizeText(label)
	}
	return s
}

// packed rows -------------------------------------------------------------

// packed writes a packed row of n members (§1.4).
func (s *Session) packed(typ string, extra obj, memberKey string, members []string) *Session {
	if s.version >= 2 {
		s.fail("%s rows do not exist in v%d logs", typ, s.version)
		return s
	}
	if len(members) == 0 {
		s.fail("%s row without members", typ)
		return s
	}
	seq0 := s.nextSeq
	time0 := s.clock
	dt := make([]int64, len(members)-1)
	last := time0
	for i := range dt {
		dt[i] = int64(s.rng.IntN(maxPackedDt))
		last += dt[i]
	}
	data := obj{{"turn", s.turnNumber()}, {"step", s.stepNumber()}, {"index", 1}}
	data = append(data, extra...)
	data = data.with("dt", dt).with(memberKey, members)
	s.addLine(appendJSON(nil, obj{{"type", typ}, {"seq0", seq0}, {"time0", time0}, {"data", data}}))
	for k := range members {
		s.pendingChunkSeqs = append(s.pendingChunkSeqs, seq0+int64(k))
	}
	s.nextSeq += int64(len(members))
	s.clock = last + s.tick
	return s
}

// TextChunks writes a text-chunks packed row: one assistant/chunk per text.
// Not allowed in v2+ logs.
func (s *Session) TextChunks(texts ...string) *Session {
	return s.packed("text-chunks", nil, "texts", texts)
}

// ReasoningChunks writes a reasoning-chunks packed row.
func (s *Session) ReasoningChunks(texts ...string) *Session {
	return s.packed("reasoning-chunks", nil, "texts", texts)
}

// ToolCallChunks writes a tool-call-chunks packed row streaming the
// arguments of call callID to tool name.
func (s *Session) ToolCallChunks(callID, name string, args ...string) *Session {
	return s.packed("tool-call-chunks", obj{{"id", callID}, {"name", name}}, "args", args)
}

// chunk writes one assistant/chunk event.
func (s *Session) chunk(c obj) *Session {
	seq := s.emit("assistant/chunk", obj{{"turn", s.turnNumber()}, {"step", s.stepNumber()}, {"chunk", c}})
	s.pendingChunkSeqs = append(s.pendingChunkSeqs, seq)
	return s
}

// BlockStart writes an assistant/chunk opening content block index.
func (s *Session) BlockStart(index int, blockType string) *Session {
	return s.chunk(obj{{"type", "block-start"}, {"index", index}, {"blockType", blockType}})
}

// TextDelta writes an assistant/chunk carrying streamed text; it never
// reaches the projection on its own (an unfinished chunk).
func (s *Session) TextDelta(index int, text string) *Session {
	return s.chunk(obj{{"type", "text-delta"}, {"index", index}, {"text", text}})
}

// Finish writes the assistant/chunk that ends a model response.
func (s *Session) Finish(reasonKind string) *Session {
	return s.chunk(obj{{"type", "finish"}, {"reason", obj{{"kind", reasonKind}}}})
}

// plain events ------------------------------------------------------------

// Plain writes a non-surface event of any type. Data values may be strings,
// bools, ints, int64s, nil, []any and nested map[string]any; map keys are
// written sorted.
func (s *Session) Plain(typ string, data map[string]any) *Session {
	o, err := objFromMap(data)
	if err != nil {
		s.fail("plain event %s: %v", typ, err)
		return s
	}
	s.emit(typ, o)
	return s
}

// objFromMap converts a map into an obj with sorted keys.
func objFromMap(m map[string]any) (obj, error) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	o := make(obj, 0, len(keys))
	for _, k := range keys {
		v, err := plainValue(m[k])
		if err != nil {
			return nil, fmt.Errorf("key %q: %w", k, err)
		}
		o = append(o, kv{k, v})
	}
	return o, nil
}

// plainValue converts a value of Plain's data to one appendJSON writes.
func plainValue(v any) (any, error) {
	switch x := v.(type) {
	case nil, string, bool, int, int64, []int64, []string:
		return x, nil
	case map[string]any:
		return objFromMap(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			c, err := plainValue(e)
			if err != nil {
				return nil, err
			}
			out[i] = c
		}
		return out, nil
	}
	return nil, fmt.Errorf("unsupported value type %T", v)
}

// TurnStart writes a turn/start event for the next turn number, outside of
// Turn's grouping.
func (s *Session) TurnStart() *Session {
	s.turn++
	s.step = 1
	s.emit("turn/start", obj{{"turn", s.turn}})
	return s
}

// TurnEnd writes a turn/end event for the current turn.
func (s *Session) TurnEnd(reasonKind string) *Session {
	s.emit("turn/end", obj{{"turn", s.turnNumber()}, {"reason", obj{{"kind", reasonKind}}}})
	return s
}

// StepStart writes a step/start event for the next step.
func (s *Session) StepStart() *Session {
	s.step++
	s.emit("step/start", obj{{"turn", s.turnNumber()}, {"step", s.step}})
	return s
}

// StepEnd writes a step/end event for the current step.
func (s *Session) StepEnd() *Session {
	s.emit("step/end", obj{{"turn", s.turnNumber()}, {"step", s.stepNumber()}})
	return s
}

// RequestContext writes the request/context event dsh logs before a model
// call.
func (s *Session) RequestContext() *Session {
	s.emit("request/context", obj{{"provider", defaultProvider}, {"model", defaultModel}})
	return s
}

// Ignorable writes an event of an unknown type marked "ignorable": true,
// which readers skip (§1.4).
func (s *Session) Ignorable(typ string) *Session {
	s.emit(typ, obj{{"note", "written by a newer dsh"}}, kv{"ignorable", true})
	return s
}

// RawLine writes text as one line exactly as given (a newline is added),
// consuming no seq. It builds damaged logs; the projection ignores it.
func (s *Session) RawLine(text string) *Session {
	s.addLine([]byte(text))
	return s
}

// MarkCorrupt records that the log is damaged on purpose, so Expected says
// it cannot be prepared.
func (s *Session) MarkCorrupt() *Session {
	s.corrupt = true
	return s
}

// RawSize is the size in bytes the raw log would have now.
func (s *Session) RawSize() int64 { return int64(len(s.headerLine())) + 1 + s.size }

// LastSeq is the seq of the last event written so far, -1 when none.
func (s *Session) LastSeq() int64 { return s.nextSeq - 1 }

// errNoHeaderID is returned when a session has an empty id.
var errNoHeaderID = errors.New("session id is empty")

// Expected returns what a reader must find in the log as built so far.
func (s *Session) Expected() Expected {
	if s.frozen != nil {
		return *s.frozen
	}
	conv, compacted := s.proj.conversation()
	e := Expected{
		ID: s.id, Cwd: s.cwd, HasCwd: s.hasCwd, CreatedAt: s.createdAt,
		ParentSession: s.parent, Origin: s.origin, DelegationDepth: s.depth,
		Version: s.version, Title: s.proj.title, HasTitle: s.proj.hasTitle,
		DescriptorLabel: s.proj.descriptorLabel,
		LastSeq:         s.nextSeq - 1,
		Conversation:    conv,
		Compacted:       compacted,
		Preparable:      s.version <= lastReadableVersion && !s.corrupt && s.refusal == "",
		Refusal:         s.refusal,
		WorkDir:         s.workDir,
	}
	e.Closers, e.CloserOutcomes = s.open.closers()
	e.Label = s.id
	if e.HasTitle {
		e.Label = e.Title
	}
	e.DisplayTitle = e.Label
	if e.DescriptorLabel != "" {
		e.DisplayTitle = e.DescriptorLabel
	}
	return e
}
