package sessionref

import "bytes"

// shortLineBytes is the length up to which a partial line is kept in one
// reused buffer; longer partial lines are kept in chunks of this size, so
// holding a long line never needs the transient doubling of a growing
// slice, and a line that passes the cap costs at most the cap.
const shortLineBytes = 1 << 20

// lineSplitter cuts a byte stream into lines for a callback, holding at most
// one partial line, and that only up to a cap: a longer line is counted
// and skipped while it streams by. It is an io.Writer so decompressed
// output can be copied into it.
type lineSplitter struct {
	fn       func([]byte) error
	overlong func(n int64) error
	max      int64
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
			line := s.join(seg)
			if err := s.fn(line); err != nil {
				return 0, err
			}
			s.last = append(s.last[:0], line...)
			lastStart = -1
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
	if lastStart >= 0 {
		// One copy per write, of the newest line only.
		s.last = append(s.last[:0], orig[lastStart:lastEnd]...)
	}
	return n, nil
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
	if s.chunks == nil && s.held <= shortLineBytes {
		s.short = append(s.short, p...)
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

// join returns the held partial line followed by seg.
func (s *lineSplitter) join(seg []byte) []byte {
	if s.chunks == nil {
		s.short = append(s.short, seg...)
		return s.short
	}
	line := make([]byte, 0, s.held+int64(len(seg)))
	for _, c := range s.chunks {
		line = append(line, c...)
	}
	s.chunks = nil // the chunks go before the line is used
	return append(line, seg...)
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
	s.short, s.chunks, s.held = s.short[:0], nil, 0
	s.skipping, s.skipped = false, 0
}
