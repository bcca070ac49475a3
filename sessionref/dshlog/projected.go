package dshlog

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/dsh-refls/dsh-refls/sessionref/dshlog/layout"
	"github.com/dsh-refls/dsh-refls/sessionref/internal/jsjson"
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
	// Cwd is the header's cwd; HasCwd is false when the header has none.
	Cwd      string
	HasCwd   bool
	Messages []ProjectedMessage
}

// ReadProjection reads the log of entry in full and projects it exactly as
// a reference to the session would (the readable prefix of §1.2, replace
// operations and compaction applied). A log that cannot be prepared is an
// error.
func ReadProjection(ctx context.Context, entry Entry) (*Projection, error) {
	log, lf, err := readNewestLog(ctx, entry, &FrameDecoder{Concurrency: 1})
	if err != nil {
		return nil, fmt.Errorf("projecting session %s: %w", entry.ID, err)
	}
	if log.header.ID != entry.ID {
		return nil, errors.New("projecting session " + entry.ID + ": log header names another session")
	}
	return projectionOf(entry, lf, log), nil
}

// ReadNewest is ReadProjection as preparation reads a referenced session:
// through frames, which the reads of one request share. A log written by a
// newer dsh is a *NewerVersionError, a log dsh refuses a *RefusalError,
// either possibly wrapped; a read that stopped because ctx ended fails
// with whatever error the read met.
func ReadNewest(ctx context.Context, entry Entry, frames *FrameDecoder) (*Projection, error) {
	log, lf, err := readNewestLog(ctx, entry, frames)
	if err == nil && log.header.ID != entry.ID {
		err = fmt.Errorf("log header names session %q", log.header.ID)
	}
	if err != nil {
		return nil, err
	}
	return projectionOf(entry, lf, log), nil
}

// newestLog chooses the newest generation in the directory of entry's log:
// one may have appeared since the index saw the session.
func newestLog(entry Entry) (LogFile, error) {
	dir := filepath.Dir(entry.Path)
	names, err := readDirNames(dir)
	if err != nil {
		return LogFile{}, err
	}
	lf, ok := chooseLog(dir, names)
	if !ok {
		return LogFile{}, errors.New("its session log has vanished")
	}
	return lf, nil
}

// readNewestLog reads the newest generation of entry's session in full
// and checks that its header has the generation's version. Whether the
// header names the session is left to the caller.
func readNewestLog(ctx context.Context, entry Entry, frames *FrameDecoder) (*sessionLog, LogFile, error) {
	lf, err := newestLog(entry)
	if err != nil {
		return nil, lf, err
	}
	log, err := readSessionLog(ctx, lf.Path, lf.Encoding, frames)
	if err != nil {
		return nil, lf, err
	}
	if lf.Generation > 0 && log.header.Version != lf.Generation {
		return nil, lf, fmt.Errorf("generation %d log has header version %d", lf.Generation, log.header.Version)
	}
	return log, lf, nil
}

// projectionOf is the projection of log, read from lf for entry.
func projectionOf(entry Entry, lf LogFile, log *sessionLog) *Projection {
	p := &Projection{SessionID: entry.ID, Path: lf.Path, FormatVersion: log.header.Version, CapturedThroughSeq: log.capturedThroughSeq(),
		Cwd: log.header.Cwd, HasCwd: log.header.HasCwd}
	p.Messages = appendProjected(p.Messages, log.surface.items)
	return p
}

// appendProjected appends the messages of §2.3.3 that a folded surface
// holds: those kept, with text.
func appendProjected(msgs []ProjectedMessage, items []surfaceItem) []ProjectedMessage {
	for _, it := range items {
		if it.keep && it.text != "" {
			msgs = append(msgs, ProjectedMessage{Role: it.role, Seq: it.seq, Text: it.text, Checkpoint: it.checkpoint})
		}
	}
	return msgs
}

// ProjectionCursor is where a projection read of a raw log ended, with
// the state of the read, so that a log that only grew is read from there:
// its appended lines only, as dsh would read them after the earlier ones.
// A cursor is used by one read at a time and is spent by it.
type ProjectionCursor struct {
	path   string
	ino    FileIdentity
	sc     *logScan
	offset int64
	tail   []byte
}

// ReadProjectionFrom is ReadProjection that goes on from prev, the cursor
// of an earlier read of the same session, when the session's newest log
// is still the one prev read, is a raw log whose file is the same, and
// the bytes just before prev's end are unchanged (the check of the title
// index's resume: dsh only appends, it never rewrites a log in place):
// then only the appended bytes are read. Otherwise (a new generation, zstd, a rewritten or truncated
// log, no cursor) the log is read in full. resumed says which. The cursor
// returned is for the next read; prev must not be used again.
func ReadProjectionFrom(ctx context.Context, entry Entry, prev *ProjectionCursor) (p *Projection, next *ProjectionCursor, resumed bool, err error) {
	return readProjectionFrom(ctx, entry, prev, nil, nil)
}

// ProjectionReader reads projections for a consumer that is done with
// each one before it reads the next, as the recall index's build is: the
// texts it returns lie in buffers it reuses, so a read makes no string
// per message. One goroutine uses a reader at a time; the zero value is
// ready.
type ProjectionReader struct {
	arena jsjson.Arena
	p     Projection
	items []surfaceItem
}

// ReadFrom is ReadProjectionFrom whose result belongs to r: the
// Projection, its Messages and every text in them are valid only until
// r's next read, when their bytes are scrubbed and reused (a consumer
// that keeps a text copies it). It returns no cursor, since a cursor
// would hold texts in r's buffers; prev, as for ReadProjectionFrom, is
// spent by the read. The texts are exactly ReadProjectionFrom's.
func (r *ProjectionReader) ReadFrom(ctx context.Context, entry Entry, prev *ProjectionCursor) (p *Projection, resumed bool, err error) {
	r.arena.Reset()
	clear(r.p.Messages)
	r.p = Projection{Messages: r.p.Messages[:0]}
	p, _, resumed, err = readProjectionFrom(ctx, entry, prev, r, &r.p)
	return p, resumed, err
}

// readProjectionFrom is ReadProjectionFrom; with r, texts go to r's arena,
// the scan's surface reuses r's, no cursor is returned, and the result is
// written to into.
func readProjectionFrom(ctx context.Context, entry Entry, prev *ProjectionCursor, r *ProjectionReader, into *Projection) (p *Projection, next *ProjectionCursor, resumed bool, err error) {
	lf, err := newestLog(entry)
	if err != nil {
		return nil, nil, false, fmt.Errorf("projecting session %s: %w", entry.ID, err)
	}
	id, idErr := StatIdentity(lf.Path)
	if prev != nil && prev.path == lf.Path && lf.Encoding == layout.EncodingRaw && idErr == nil &&
		prev.ino.Inode == id.Inode && prev.ino.Device == id.Device && id.Size >= prev.offset {
		sc := prev.sc
		sc.ctx = ctx
		if r != nil {
			sc.arena = &r.arena
		}
		res, err := sc.reader().Read(prev.offset, prev.tail, sc.line)
		if err == nil {
			if p, err := sc.projection(entry, into); err == nil {
				if r != nil {
					return p, nil, true, nil
				}
				return p, &ProjectionCursor{path: lf.Path, ino: id, sc: sc, offset: res.Offset, tail: res.Tail}, true, nil
			}
		}
		// The read may have stopped half way: start again from scratch.
		if r != nil {
			r.arena.Reset()
			into.Messages = into.Messages[:0]
		}
	}
	sc := &logScan{ctx: ctx, path: lf.Path, enc: lf.Encoding, log: &sessionLog{lastSeq: -1}}
	if r != nil {
		sc.arena = &r.arena
		sc.log.surface.items = r.items[:0]
		defer func() {
			clear(sc.log.surface.items)
			r.items = sc.log.surface.items[:0]
		}()
	}
	res, err := sc.reader().Read(0, nil, sc.line)
	if err == nil && sc.lineNo > 0 && sc.frameDamage == nil && lf.Generation > 0 && sc.log.header.Version != lf.Generation {
		return nil, nil, false, fmt.Errorf("projecting session %s: generation %d log has header version %d", entry.ID, lf.Generation, sc.log.header.Version)
	}
	if err == nil {
		p, err = sc.projection(entry, into)
	}
	if err != nil {
		return nil, nil, false, fmt.Errorf("projecting session %s: %w", entry.ID, err)
	}
	if r != nil || lf.Encoding != layout.EncodingRaw || idErr != nil {
		return p, nil, false, nil
	}
	return p, &ProjectionCursor{path: lf.Path, ino: id, sc: sc, offset: res.Offset, tail: res.Tail}, false, nil
}

// reader is the line reader of readSessionLog for the scan's log.
func (sc *logScan) reader() LineReader {
	return LineReader{Path: sc.path, Encoding: sc.enc, Frames: &FrameDecoder{Concurrency: 1},
		OnTorn:      func() { sc.torn = true },
		OnOverlong:  sc.overlong,
		OnOwnedLine: sc.ownedLine,
	}
}

// projection is what readSessionLog and ReadProjection make of the scan
// so far; it leaves the scan as it is, so that it may go on. It fills
// into when set (whose Messages it appends to), else a new Projection.
func (sc *logScan) projection(entry Entry, into *Projection) (*Projection, error) {
	if sc.lineNo == 0 {
		return nil, &CorruptError{Path: sc.path, Reason: "log has no complete header line"}
	}
	if sc.frameDamage != nil {
		return nil, sc.frameDamage
	}
	if sc.log.header.ID != entry.ID {
		return nil, errors.New("log header names another session")
	}
	_, closers := sc.turns.closers()
	lastSeq := sc.log.lastSeq
	p := into
	if p == nil {
		p = &Projection{}
	}
	p.SessionID, p.Path, p.FormatVersion, p.CapturedThroughSeq = entry.ID, sc.path, sc.log.header.Version, -1
	p.Cwd, p.HasCwd = sc.log.header.Cwd, sc.log.header.HasCwd
	if lastSeq >= 0 || closers > 0 {
		p.CapturedThroughSeq = lastSeq + int64(closers)
	}
	p.Messages = appendProjected(p.Messages, sc.log.surface.items)
	return p, nil
}
