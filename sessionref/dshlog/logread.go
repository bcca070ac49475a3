package dshlog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/dsh-refls/dsh-refls/sessionref/dshlog/layout"
	"github.com/dsh-refls/dsh-refls/sessionref/internal/jsjson"
)

// sessionLog is what preparation needs from one log.
type sessionLog struct {
	header  Header
	surface surface
	// lastSeq is the seq of the last event of the readable prefix, -1 for a
	// log without events.
	lastSeq int64
	// closers is how many synthetic closers dsh appends because the log
	// ends inside a turn (SPEC §1.7); capturedThroughSeq is lastSeq+closers.
	closers int
	// closerResults are the outcome codes of the synthetic tool results,
	// closerCalls the calls they answer.
	closerResults []string
	closerCalls   []string
	// skippedLines counts lines that end the readable prefix or lie after
	// it: unparsable lines, seq gaps and duplicates, over-long lines.
	skippedLines int
	// unknownTypes counts v4 events of a type outside the v4 vocabulary,
	// skipped because they carry no surfaceOp.
	unknownTypes int
}

// capturedThroughSeq is the seq of the last event after the closers, -1
// for an empty log.
func (l *sessionLog) capturedThroughSeq() int64 {
	if l.lastSeq < 0 && l.closers == 0 {
		return -1
	}
	return l.lastSeq + int64(l.closers)
}

// logScan is the state of one full read of a log.
type logScan struct {
	ctx    context.Context
	path   string
	enc    layout.Encoding
	log    *sessionLog
	lineNo int
	// nextSeq is the seq the next event must have: seqs are contiguous
	// from 0 (§1.4; the row index in v4).
	nextSeq int64
	// damageLine is the line that ended the readable prefix (0 while it
	// has not ended); later lines are not read, and a later turn/end makes
	// the log corrupt (dsh 0.1.1 session-persistence-jsonl format.ts,
	// SessionLogScanner.consumeEventLine).
	damageLine   int
	damageReason string
	// torn is set while the lines come from the decodable prefix of a torn
	// last zstd frame: damage there ends the prefix, as in a raw log, where
	// damage inside a complete frame is corruption (dsh 0.1.1
	// session-persistence-jsonl index.ts, readZstdPrefix: committed bytes
	// must reach the end of the complete frames).
	torn bool
	// frameDamage is damage found inside a complete zstd frame: the log is
	// corrupt, but reading goes on so that a refusal later in the log wins,
	// as in dsh, which refuses rows while scanning and checks the complete
	// frames at the end.
	frameDamage *CorruptError
	turns       turnTracker
	// owned is set while the current line lies in a buffer of its own that
	// the scan may keep and write over (LineReader.onOwnedLine): its text
	// is then decoded in place.
	owned bool
	// reference reads every line through encoding/json and decodes text a
	// rune at a time: the reading the faster paths are tested against.
	reference bool
	// arena, when set, receives the texts of lines that are not owned
	// (textInArena): they are valid until its next reset.
	arena *jsjson.Arena
}

// readSessionLog reads a whole log for preparation: the readable prefix of
// §1.2 (as dsh reads it), folded into a surface, plus the closer count.
func readSessionLog(ctx context.Context, path string, enc layout.Encoding, frames *FrameDecoder) (*sessionLog, error) {
	return (&logScan{ctx: ctx, path: path, enc: enc, log: &sessionLog{lastSeq: -1}}).readAll(frames)
}

// readAll is readSessionLog for the scan sc, which has not read yet.
func (sc *logScan) readAll(frames *FrameDecoder) (*sessionLog, error) {
	path := sc.path
	r := LineReader{Path: path, Encoding: sc.enc, Frames: frames,
		OnTorn:      func() { sc.torn = true },
		OnOverlong:  sc.overlong,
		OnOwnedLine: sc.ownedLine,
	}
	_, err := r.Read(0, nil, sc.line)
	if err != nil {
		return nil, err
	}
	if sc.lineNo == 0 {
		return nil, &CorruptError{Path: path, Reason: "log has no complete header line"}
	}
	if sc.frameDamage != nil {
		return nil, sc.frameDamage
	}
	sc.log.closerResults, sc.log.closers = sc.turns.closers()
	sc.log.closerCalls = sc.turns.pendingIDs()
	return sc.log, nil
}

// damage ends the readable prefix at the current line; inside a complete
// zstd frame it is corruption instead.
func (sc *logScan) damage(reason string) error {
	sc.log.skippedLines++
	if sc.damageLine != 0 {
		return nil
	}
	if sc.enc == layout.EncodingZstd && !sc.torn {
		sc.frameDamage = &CorruptError{Path: sc.path, Line: sc.lineNo, Reason: reason + " inside a complete zstd frame"}
	}
	sc.damageLine, sc.damageReason = sc.lineNo, reason
	return nil
}

// overlong counts a line longer than the line cap: it is skipped, and ends
// the readable prefix like an unparsable line.
func (sc *logScan) overlong(n int64) error {
	sc.lineNo++
	if sc.lineNo == 1 {
		return &CorruptError{Path: sc.path, Line: 1, Reason: fmt.Sprintf("header line of %d bytes exceeds the %d-byte line cap", n, MaxLineBytes)}
	}
	return sc.damage(fmt.Sprintf("line of %d bytes exceeds the %d-byte line cap and was skipped", n, MaxLineBytes))
}

// ownedLine is line for a line the scan may keep: a long message's text
// becomes a string over the line's own bytes instead of a copy of them.
func (sc *logScan) ownedLine(line []byte) error {
	sc.owned = true
	defer func() { sc.owned = false }()
	return sc.line(line)
}

func (sc *logScan) line(line []byte) error {
	sc.lineNo++
	if sc.lineNo%cancelCheckLines == 0 {
		if err := sc.ctx.Err(); err != nil {
			return err
		}
	}
	if sc.lineNo == 1 {
		h, err := ParseHeader(line)
		if err != nil {
			if v, ok := headerVersion(line); ok && v > MaxReadableVersion {
				return &NewerVersionError{Version: v}
			}
			return &CorruptError{Path: sc.path, Line: 1, Reason: err.Error()}
		}
		if err := h.checkReadable(); err != nil {
			var nv *NewerVersionError
			if errors.As(err, &nv) {
				return err
			}
			return &CorruptError{Path: sc.path, Line: 1, Reason: err.Error()}
		}
		sc.log.header = h
		return nil
	}
	v4 := sc.log.header.Version >= 4
	// Direct calls, not a func value: e stays on the stack (it escaped
	// through the indirect call, one allocation per line).
	var e envelope
	var err error
	if sc.reference {
		err = decodeEnvelopeReference(line, &e)
	} else {
		err = decodeEnvelope(line, &e)
	}
	if err != nil || e.Type == "" {
		reason := "not an event object"
		if err != nil {
			reason = "unparsable: " + err.Error()
		}
		return sc.damage(reason)
	}
	hasOp := len(e.SurfaceOp) > 0 && string(e.SurfaceOp) != "null"
	if v4 {
		// dsh checks every parsed row, even after the readable prefix ended.
		seq := int64(-1)
		if e.Seq != nil {
			seq = *e.Seq
		}
		if err := checkV4Row(e.Type, seq, e.Data, hasOp, isIgnorable(e.Ignorable)); err != nil {
			return err
		}
		if reason := invalidV4Envelope(&e); reason != "" {
			return sc.damage(reason)
		}
	}
	if sc.damageLine != 0 {
		sc.log.skippedLines++
		if e.Type == typeTurnEnd {
			return &CorruptError{Path: sc.path, Line: sc.damageLine,
				Reason: fmt.Sprintf("%s, and a later turn/end (line %d) follows it", sc.damageReason, sc.lineNo)}
		}
		return nil
	}
	first, last, n, ok := e.seqRange(v4)
	if !ok {
		return sc.damage("event without a seq")
	}
	if n == 0 {
		return nil // an empty packed row stands for no events
	}
	if first != sc.nextSeq {
		what := "seq gap"
		if first < sc.nextSeq {
			what = "seq duplicate"
		}
		if err := sc.damage(fmt.Sprintf("%s: expected seq %d, got %d", what, sc.nextSeq, first)); err != nil {
			return err
		}
		if e.Type == typeTurnEnd {
			return &CorruptError{Path: sc.path, Line: sc.lineNo, Reason: fmt.Sprintf("turn/end with a seq gap: expected seq %d, got %d", sc.nextSeq, first)}
		}
		return nil
	}
	if e.BadTime {
		return &RefusalError{Version: sc.log.header.Version, Seq: first, Rule: ruleTime}
	}
	sc.nextSeq = last + 1
	sc.log.lastSeq = last
	sc.turns.observe(e.Type, e.Data)
	return sc.fold(&e, last, v4, hasOp)
}

// fold applies one event of the readable prefix to the surface.
func (sc *logScan) fold(e *envelope, seq int64, v4, hasOp bool) error {
	if v4 {
		if !isKnownV4Type(e.Type) {
			sc.log.unknownTypes++
			return nil
		}
		if !isV4SurfaceType(e.Type) {
			if hasOp {
				return &RefusalError{Version: 4, Seq: seq, Rule: fmt.Sprintf(ruleNotSurface, e.Type)}
			}
			return nil
		}
	} else if !isSurfaceType(e.Type) {
		if hasOp && e.Type == typeTitle {
			return &RefusalError{Version: sc.log.header.Version, Seq: seq, Rule: fmt.Sprintf(ruleNotSurface, e.Type)}
		}
		return nil
	}
	how := textCopy
	switch {
	case sc.reference:
		how = textReference
	case sc.owned:
		how = textInPlace
	case sc.arena != nil:
		how = textInArena
	}
	item, err := projectEvent(e, seq, v4, how, sc.arena)
	if err != nil {
		return &CorruptError{Path: sc.path, Line: sc.lineNo, Reason: err.Error()}
	}
	op, err := parseSurfaceOp(e.SurfaceOp, v4)
	if err == nil && op.replace {
		if missing, ok := sc.log.surface.unlisted(op, e.SourceEventSeqs); ok {
			return &RefusalError{Version: sc.log.header.Version, Seq: seq, Rule: fmt.Sprintf(ruleShadowed, missing)}
		}
	}
	if err == nil {
		err = sc.log.surface.apply(item, op)
	}
	if err != nil {
		return &CorruptError{Path: sc.path, Line: sc.lineNo, Reason: err.Error()}
	}
	return nil
}

// seqRange returns the seqs a line stands for: its own seq, or for a
// packed row (v0–v1 only) seq0 to seq0+members-1. n is the number of
// events; ok is false when the line carries no usable seq.
func (e *envelope) seqRange(v4 bool) (first, last int64, n int64, ok bool) {
	if e.Seq != nil {
		return *e.Seq, *e.Seq, 1, true
	}
	if v4 || e.Seq0 == nil {
		return 0, 0, 0, false
	}
	var members struct {
		Texts []json.RawMessage `json:"texts"`
		Args  []json.RawMessage `json:"args"`
	}
	if err := json.Unmarshal(e.Data, &members); err != nil {
		return 0, 0, 0, false
	}
	n = int64(len(members.Texts))
	if e.Type == typeToolCallChunks {
		n = int64(len(members.Args))
	}
	return *e.Seq0, *e.Seq0 + n - 1, n, true
}

// isV4SurfaceType reports the five surface types of format v4.
func isV4SurfaceType(t string) bool {
	switch t {
	case typeSystemMessage, typeDeveloperMessage, typeUserMessage, typeAssistantMessage, typeToolResult:
		return true
	}
	return false
}

// NewerVersionError reports a log written by a newer dsh: its header's
// format Version is above MaxReadableVersion.
type NewerVersionError struct{ Version int }

func (e *NewerVersionError) Error() string {
	return fmt.Sprintf("log format version %d was written by a newer dsh; this dsh-refls reads versions 0 to %d", e.Version, MaxReadableVersion)
}
