package dshlog

import (
	"bytes"
	"runtime/debug"
)

// shortLineBytes is the length up to which a partial line is kept in one
// reused buffer. A longer partial line is kept in one buffer of the size
// the rest of the input allows (when the reader knows how much follows:
// a raw log's file size), so the line costs its own size, once; else in
// chunks of this size, so holding it never needs the transient doubling of
// a growing slice, and a line that passes the cap costs at most the cap.
const shortLineBytes = 1 << 20

// collectBeforeLineBytes is the size of a line buffer around whose use
// the garbage is collected and the free memory returned to the OS. Such
// lines are rare (a pasted log, a huge tool output), and each read of one
// leaves a buffer of its size behind: a session with one 32 MiB message is
// read by the session index, then by the recall index. Collecting before
// the allocation alone left the first read's buffer resident (freed, not
// yet returned) while the second read's decoder and buffer grew, and the
// process peaked at 1.5-2.2x the message above idle, zstd, on a loaded
// machine (scripts/benchmemory --large-message-mb 32); returning it when a
// read that made such a buffer ends, and before the next is made, keeps
// the peak near one message (see the commit that did this). Each such
// collection costs a full mark of the heap: about 43 ms at the 150 MB of
// indexes of 100,000 sessions (docs/reliability.md).
const collectBeforeLineBytes = 8 << 20

// makeLineBuffer makes an empty buffer of capacity n for one line. When n
// is at least collectBeforeLineBytes it first collects the garbage and
// returns the free memory to the OS, and marks the splitter large, so
// that its reader does so again once the line is used (releaseLarge).
func (s *lineSplitter) makeLineBuffer(n int64) []byte {
	if n >= collectBeforeLineBytes {
		debug.FreeOSMemory()
		s.large = true
	}
	return make([]byte, 0, n)
}

// releaseLarge returns the free memory to the OS when the splitter made a
// buffer of at least collectBeforeLineBytes: called when a read ends, when
// the line is garbage unless its reader's callback kept it.
func (s *lineSplitter) releaseLarge() {
	if s.large {
		s.large = false
		debug.FreeOSMemory()
	}
}

// lineSplitter cuts a byte stream into lines for a callback, holding at most
// one partial line, and that only up to a cap: a longer line is counted
// and skipped while it streams by. It is an io.Writer so decompressed
// output can be copied into it.
type lineSplitter struct {
	fn       func([]byte) error
	overlong func(n int64) error
	// owned, when set, receives the lines delivered in a buffer of their
	// own (a long line), which it may keep and write over; fn gets the
	// others. With owned set, last is not kept.
	owned func([]byte) error
	max   int64
	// more is how many bytes are known to follow the current Write, -1
	// when that is not known.
	more int64
	// long holds a partial line longer than shortLineBytes when more was
	// known: one buffer large enough for the rest of the input.
	long []byte
	// short holds a partial line while it is shorter than shortLineBytes;
	// chunks hold it once it is longer; held is its length.
	short  []byte
	chunks [][]byte
	held   int64
	// skipping is set while an over-long line streams by; skipped counts
	// its bytes so far.
	skipping bool
	skipped  int64
	// complete counts the bytes of every line ended so far, newlines
	// included: where the next read resumes.
	complete int64
	// last is a copy of the newest delivered line, nil before the first.
	last []byte
	// large is set once a line buffer of at least collectBeforeLineBytes
	// was made (makeLineBuffer).
	large bool
}

// Write implements io.Writer. It fails only with the callback's error.
func (s *lineSplitter) Write(p []byte) (int, error) {
	n, orig := len(p), p
	lastStart, lastEnd := -1, -1 // the newest line, when it lies in p
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			s.hold(p)
			break
		}
		seg := p[:i]
		start := n - len(p)
		p = p[i+1:]
		// The line's bytes held or skipped in earlier writes count too.
		s.complete += s.held + s.skipped + int64(i) + 1
		switch {
		case s.skipping:
			total := s.skipped + int64(i)
			s.skipping, s.skipped = false, 0
			if err := s.skip(total); err != nil {
				return 0, err
			}
		case s.held > 0:
			total := s.held + int64(i)
			if total > s.max {
				s.drop()
				if err := s.skip(total); err != nil {
					return 0, err
				}
				continue
			}
			line, own := s.join(seg)
			lastStart = -1
			if own && s.owned != nil {
				s.drop() // the line is the callback's now
				if err := s.owned(line); err != nil {
					return 0, err
				}
				continue
			}
			if err := s.fn(line); err != nil {
				return 0, err
			}
			if s.owned == nil && own {
				s.last = line // a buffer of its own: kept, not copied
			} else if s.owned == nil {
				s.last = s.keepLast(line)
			}
			s.drop()
		case int64(i) > s.max:
			if err := s.skip(int64(i)); err != nil {
				return 0, err
			}
		default:
			if err := s.fn(seg); err != nil {
				return 0, err
			}
			lastStart, lastEnd = start, start+i
		}
	}
	if lastStart >= 0 && s.owned == nil {
		// One copy per write, of the newest line only.
		s.last = s.keepLast(orig[lastStart:lastEnd])
	}
	return n, nil
}

// keepLast copies line into last's buffer, unless that buffer is a long
// line's, much larger than line: it is then left to the collector.
func (s *lineSplitter) keepLast(line []byte) []byte {
	if cap(s.last) > shortLineBytes && cap(s.last) > 4*len(line) {
		s.last = nil
	}
	return append(s.last[:0], line...)
}

// hold keeps the start of an unfinished line, or starts skipping it once it
// passes the cap.
func (s *lineSplitter) hold(p []byte) {
	if s.skipping {
		s.skipped += int64(len(p))
		return
	}
	if s.held+int64(len(p)) > s.max {
		n := s.held + int64(len(p))
		s.drop()
		s.skipping, s.skipped = true, n
		return
	}
	s.held += int64(len(p))
	if s.long != nil {
		s.long = append(s.long, p...)
		return
	}
	if s.chunks == nil && s.held <= shortLineBytes {
		s.short = append(s.short, p...)
		return
	}
	if s.chunks == nil && s.more >= 0 {
		// The line is at most what is held plus what follows: one buffer
		// of that size (capped at the line cap) holds it to its end.
		s.long = s.makeLineBuffer(min(s.held+s.more, s.max))
		s.long = append(append(s.long, s.short...), p...)
		s.short = s.short[:0]
		return
	}
	if s.chunks == nil {
		s.chunks = [][]byte{append(make([]byte, 0, shortLineBytes), s.short...)}
		s.short = s.short[:0]
	}
	for len(p) > 0 {
		last := &s.chunks[len(s.chunks)-1]
		if len(*last) == cap(*last) {
			s.chunks = append(s.chunks, make([]byte, 0, shortLineBytes))
			last = &s.chunks[len(s.chunks)-1]
		}
		k := min(len(p), cap(*last)-len(*last))
		*last = append(*last, p[:k]...)
		p = p[k:]
	}
}

// join returns the held partial line followed by seg; own reports that
// the line lies in a buffer of its own, which the splitter does not use
// again.
func (s *lineSplitter) join(seg []byte) (line []byte, own bool) {
	if s.long != nil {
		line, s.long = append(s.long, seg...), nil
		return line, true
	}
	if s.chunks == nil {
		s.short = append(s.short, seg...)
		return s.short, false
	}
	line = s.makeLineBuffer(s.held + int64(len(seg)))
	for _, c := range s.chunks {
		line = append(line, c...)
	}
	s.chunks = nil // the chunks go before the line is used
	return append(line, seg...), true
}

func (s *lineSplitter) skip(n int64) error {
	if s.overlong != nil {
		return s.overlong(n)
	}
	return nil
}

// atLineStart reports that no partial line is held or being skipped.
func (s *lineSplitter) atLineStart() bool { return s.held == 0 && !s.skipping }

// drop forgets a partial line (a frame that failed, a torn tail, a line
// delivered or skipped).
func (s *lineSplitter) drop() {
	if cap(s.short) > shortLineBytes {
		s.short = nil
	}
	s.short, s.chunks, s.long, s.held = s.short[:0], nil, nil, 0
	s.skipping, s.skipped = false, 0
}
