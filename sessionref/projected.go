package sessionref

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// ProjectedMessage is one message a reference to its session would recall
// (§2.3.3): a direct user message, a compaction checkpoint or assistant
// text, after replace operations and compaction were applied. Tool output,
// reasoning, system and plugin text are never projected.
type ProjectedMessage struct {
	Role string
	// Seq is the seq of the event the message comes from.
	Seq int64
	// Text is the message text, WTF-8 (lone surrogates are kept).
	Text       string
	Checkpoint bool
}

// Projection is the projected conversation of one session, read at once.
type Projection struct {
	SessionID string
	// Path is the log the projection was read from: the newest generation
	// in the session's directory at the time of the read.
	Path          string
	FormatVersion int
	// CapturedThroughSeq is the seq of the last event after the closers of
	// §1.7, -1 for a log without events.
	CapturedThroughSeq int64
	Messages           []ProjectedMessage
}

// ReadProjection reads the log of entry in full and projects it exactly as
// a reference to the session would (the readable prefix of §1.2, replace
// operations and compaction applied). A log that cannot be prepared is an
// error.
func ReadProjection(ctx context.Context, entry Entry) (*Projection, error) {
	dir := filepath.Dir(entry.Path)
	names, err := readDirNames(dir)
	if err != nil {
		return nil, fmt.Errorf("projecting session %s: %w", entry.ID, err)
	}
	lf, ok := chooseLog(dir, names)
	if !ok {
		return nil, fmt.Errorf("projecting session %s: its session log has vanished", entry.ID)
	}
	log, err := readSessionLog(ctx, lf.path, lf.encoding, &frameDecoder{concurrency: 1})
	if err != nil {
		return nil, fmt.Errorf("projecting session %s: %w", entry.ID, err)
	}
	if lf.generation > 0 && log.header.Version != lf.generation {
		return nil, fmt.Errorf("projecting session %s: generation %d log has header version %d", entry.ID, lf.generation, log.header.Version)
	}
	if log.header.ID != entry.ID {
		return nil, errors.New("projecting session " + entry.ID + ": log header names another session")
	}
	p := &Projection{SessionID: entry.ID, Path: lf.path, FormatVersion: log.header.Version, CapturedThroughSeq: log.capturedThroughSeq()}
	for _, it := range log.surface.items {
		if it.keep && it.text != "" {
			p.Messages = append(p.Messages, ProjectedMessage{Role: it.role, Seq: it.seq, Text: it.text, Checkpoint: it.checkpoint})
		}
	}
	return p, nil
}

// CandidateOf builds the §2.2 candidate of the listed session id as
// Candidates would for a query from targetID in targetCwd (the target's
// own cwd wins when it is indexed). It is false for an id that is not
// listed and for the target itself, which is never offered.
func (s *Snapshot) CandidateOf(id, targetID, targetCwd string) (Candidate, bool) {
	e, ok := s.Locate(id)
	if !ok || id == targetID {
		return Candidate{}, false
	}
	hasTargetCwd := targetCwd != ""
	if t, ok := s.Locate(targetID); ok {
		targetCwd, hasTargetCwd = t.Cwd, t.HasCwd
	}
	return candidateOf(&e, hasTargetCwd, targetCwd), true
}

// OpenRegular opens path for reading only when it is a regular file, never
// through a symbolic link (O_NOFOLLOW, or its Windows equivalent): what
// the recall index reads its stored file with, as the title-index cache
// is read. what names the file in errors.
func OpenRegular(path, what string) (*os.File, error) { return openRegularAs(path, what) }
