package prepare

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"

	"github.com/google/uuid"

	"github.com/dsh-refls/dsh-refls/sessionref"
	"github.com/dsh-refls/dsh-refls/sessionref/dshlog"
)

// MaxReferencesLimit is the default and hard maximum of distinct references
// in one message (§2.3.1).
const MaxReferencesLimit = 3

// NormalizeReferences applies §2.3.1: the target's own id is a
// self-reference, duplicates keep their first occurrence and label, and more
// than maxRefs distinct sessions is too many. A reference without a label
// gets the id; one whose label was given empty (Reference.EmptyLabel) keeps
// "", as dsh does. An empty id is not refused here: like dsh, preparation
// then fails to read it (READ_FAILED).
func NormalizeReferences(targetID string, refs []sessionref.Reference, maxRefs int) ([]sessionref.Reference, error) {
	if maxRefs <= 0 {
		maxRefs = MaxReferencesLimit
	}
	seen := map[string]bool{}
	var out []sessionref.Reference
	for _, r := range refs {
		if r.SessionID == targetID && targetID != "" {
			return nil, &sessionref.Error{Code: sessionref.CodeSelfReference, SessionID: r.SessionID,
				Message: fmt.Sprintf("a message cannot reference its own session %s", r.SessionID)}
		}
		if seen[r.SessionID] {
			continue
		}
		seen[r.SessionID] = true
		if r.Label == "" && !r.EmptyLabel {
			r.Label = r.SessionID
		}
		out = append(out, r)
	}
	if len(out) > maxRefs {
		return nil, sessionref.Errorf(sessionref.CodeTooMany, "%d distinct sessions referenced; at most %d are allowed", len(out), maxRefs)
	}
	return out, nil
}

// ParseReferences decodes explicit references from JSON, checking each is an
// object with a string sessionId and an optional string label.
func ParseReferences(raw json.RawMessage) ([]sessionref.Reference, error) {
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, sessionref.Errorf(sessionref.CodeInvalidReference, "references must be an array: %v", err)
	}
	out := make([]sessionref.Reference, 0, len(items))
	for i, item := range items {
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(item, &fields); err != nil || fields == nil {
			return nil, sessionref.Errorf(sessionref.CodeInvalidReference, "reference %d is not an object", i)
		}
		var r sessionref.Reference
		id, ok := fields["sessionId"]
		if !ok || len(id) == 0 || id[0] != '"' || json.Unmarshal(id, &r.SessionID) != nil {
			return nil, sessionref.Errorf(sessionref.CodeInvalidReference, "reference %d needs a string sessionId", i)
		}
		if l, ok := fields["label"]; ok && string(l) != "null" {
			if len(l) == 0 || l[0] != '"' || json.Unmarshal(l, &r.Label) != nil {
				return nil, sessionref.Errorf(sessionref.CodeInvalidReference, "reference %d has a label that is not a string", i)
			}
			r.EmptyLabel = r.Label == ""
		}
		out = append(out, r)
	}
	return out, nil
}

// source is one reference read and bounded.
type source struct {
	ref           sessionref.Reference
	inputIndex    int
	formatVersion int
	redactions    *int         // nil when redaction is off
	full          snapshotData // the whole projection, for spilling
	bounded       retentionResult
}

// readSource reads and projects one referenced session at the moment of the
// request.
func readSource(ctx context.Context, loc Locator, ref sessionref.Reference, frames *dshlog.FrameDecoder) (snapshotData, int, []projectedMessage, error) {
	entry, ok := loc.Locate(ref.SessionID)
	if !ok {
		return snapshotData{}, 0, nil, notInStore(ref.SessionID)
	}
	p, err := readReferenced(ctx, entry, frames)
	if err != nil {
		return snapshotData{}, 0, nil, err
	}
	data := snapshotData{SessionID: ref.SessionID, Label: ref.Label}
	if p.HasCwd {
		cwd := p.Cwd
		data.Cwd = &cwd
	}
	if seq := p.CapturedThroughSeq; seq >= 0 {
		data.CapturedThroughSeq = &seq
	}
	return data, p.FormatVersion, project(p.Messages), nil
}

// readReferenced reads entry's session as a reference: its newest log, in
// full, through frames. A log that cannot be prepared is READ_FAILED
// naming the session (a newer dsh's log and a log dsh refuses say so); a
// read that stopped because ctx ended is CANCELLED.
func readReferenced(ctx context.Context, entry dshlog.Entry, frames *dshlog.FrameDecoder) (*dshlog.Projection, error) {
	p, err := dshlog.ReadNewest(ctx, entry, frames)
	if err != nil {
		return nil, referenceReadError(ctx, entry.ID, err)
	}
	return p, nil
}

// referenceReadError is the contract's error for a referenced session id
// whose log could not be read for err.
func referenceReadError(ctx context.Context, id string, err error) *sessionref.Error {
	var nv *dshlog.NewerVersionError
	if errors.As(err, &nv) {
		return &sessionref.Error{Code: sessionref.CodeReadFailed, SessionID: id, Err: err,
			Message: fmt.Sprintf("session %s was written by a newer dsh and cannot be recalled", id)}
	}
	var refused *dshlog.RefusalError
	if errors.As(err, &refused) {
		return &sessionref.Error{Code: sessionref.CodeReadFailed, SessionID: id, Err: err,
			Message: fmt.Sprintf("session %s cannot be recalled: dsh refuses its log (%s)", id, refused.Rule)}
	}
	if ctx.Err() != nil {
		return sessionref.Cancelled(ctx)
	}
	return &sessionref.Error{Code: sessionref.CodeReadFailed, SessionID: id, Err: err,
		Message: fmt.Sprintf("session %s could not be read", id)}
}

// notInStore is the READ_FAILED of a session the index does not hold.
func notInStore(id string) *sessionref.Error {
	name := id
	if name == "" {
		name = `""` // dsh: session "" not found
	}
	return &sessionref.Error{Code: sessionref.CodeReadFailed, SessionID: id,
		Message: fmt.Sprintf("session %s is not in the sessions store", name)}
}

// readSources reads every source once, in parallel, then bounds each in
// reference order. As in dsh, every read finishes before any retention, so
// a source that cannot be read is READ_FAILED even when another one would
// not fit its budget. With redact, secrets are replaced before retention
// and spilling, so budgets count the redacted text.
func readSources(ctx context.Context, loc Locator, refs []sessionref.Reference, budget int, redact bool) ([]source, error) {
	frames := &dshlog.FrameDecoder{Concurrency: len(refs)}
	type read struct {
		data    snapshotData
		version int
		msgs    []projectedMessage
		err     error
	}
	reads := make([]read, len(refs))
	var wg sync.WaitGroup
	for i, ref := range refs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := &reads[i]
			r.data, r.version, r.msgs, r.err = readSource(ctx, loc, ref, frames)
		}()
	}
	wg.Wait()
	if ctx.Err() != nil {
		return nil, sessionref.Cancelled(ctx)
	}
	for _, r := range reads {
		if r.err != nil {
			return nil, r.err
		}
	}
	sources := make([]source, len(refs))
	for i, r := range reads {
		redactions := redactProjected(r.msgs, redact)
		full := r.data
		full.Conversation = make([]Turn, len(r.msgs))
		for k, m := range r.msgs {
			full.Conversation[k] = Turn{Role: m.role, Text: m.original}
		}
		bounded, err := retain(r.data, r.msgs, budget)
		if err != nil {
			return nil, err
		}
		sources[i] = source{ref: refs[i], inputIndex: i, formatVersion: r.version, full: full, bounded: bounded, redactions: redactions}
	}
	return sources, nil
}

// Prepare reads every referenced session and builds the context message
// (§2.3). No references give a Preparation without context.
func Prepare(ctx context.Context, loc Locator, targetID string, refs []sessionref.Reference, lim Limits) (*Preparation, error) {
	if err := validateLimits(lim); err != nil {
		return nil, err
	}
	norm, err := NormalizeReferences(targetID, refs, lim.MaxReferences)
	if err != nil {
		return nil, err
	}
	if len(norm) == 0 {
		return &Preparation{References: []sessionref.Reference{}}, nil
	}
	if ctx.Err() != nil {
		return nil, sessionref.Cancelled(ctx)
	}
	sources, err := readSources(ctx, loc, norm, Budget(lim), lim.RedactSecrets)
	if err != nil {
		return nil, err
	}
	prompt, spilled, err := renderPrompt(targetID, sources, lim.SpillDir)
	if err != nil {
		return nil, err
	}
	if ctx.Err() != nil {
		for _, path := range spilled {
			os.Remove(path) // a cancelled request publishes nothing
		}
		return nil, sessionref.Cancelled(ctx)
	}
	facts := make([]ReferenceFacts, len(sources))
	for i, s := range sources {
		facts[i] = ReferenceFacts{SessionID: s.ref.SessionID, Label: s.ref.Label,
			CapturedThroughSeq: s.bounded.data.CapturedThroughSeq, Stats: s.bounded.stats, InputIndex: s.inputIndex,
			Redactions: s.redactions}
		if s.formatVersion != 0 {
			v := s.formatVersion
			facts[i].CapturedFormatVersion = &v
		}
	}
	msg := &ContextMessage{
		Source:  ContextSource{Kind: "session-reference", Form: "recall", Version: 1, References: facts},
		Content: []ContentBlock{{Type: "text", Text: prompt}},
		Role:    dshlog.RoleUser,
		ID:      uuid.NewString(),
	}
	return &Preparation{References: norm, Context: msg}, nil
}

func validateLimits(lim Limits) error {
	switch {
	case lim.MaxReferences < 0 || lim.MaxReferences > MaxReferencesLimit:
		return sessionref.Errorf(sessionref.CodeInvalidConfig, "maxReferences must be between 1 and %d, got %d", MaxReferencesLimit, lim.MaxReferences)
	case lim.MaxReferenceBytes < 0:
		return sessionref.Errorf(sessionref.CodeInvalidConfig, "maxReferenceBytes must be positive, got %d", lim.MaxReferenceBytes)
	case lim.ContextWindow < 0:
		return sessionref.Errorf(sessionref.CodeInvalidConfig, "contextWindow must be positive, got %d", lim.ContextWindow)
	case !(lim.ReferenceContextFraction >= 0 && lim.ReferenceContextFraction <= 1): // NaN too
		return sessionref.Errorf(sessionref.CodeInvalidConfig, "referenceContextFraction must be in (0, 1], got %v", lim.ReferenceContextFraction)
	}
	return nil
}
