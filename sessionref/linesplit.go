package sessionref

import "bytes"

// lineSplitter cuts a byte stream into lines for a callback, holding at most
// one partial line, and that only up to a cap: a longer line is counted
// and skipped while it streams by. It is an io.Writer so decompressed
// output can be copied into it.
type lineSplitter struct {
	fn       func([]byte) error
	overlong func(n int64) error
	max      int64
	// pending holds the start of a line not yet ended by a newline.
	pending []byte
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
		s.complete += int64(i) + 1
		switch {
		case s.skipping:
			total := s.skipped + int64(i)
			s.skipping, s.skipped = false, 0
			if err := s.skip(total); err != nil {
				return 0, err
			}
		case len(s.pending) > 0:
			if int64(len(s.pending))+int64(i) > s.max {
				total := int64(len(s.pending)) + int64(i)
				s.release()
				if err := s.skip(total); err != nil {
					return 0, err
				}
				continue
			}
			s.pending = append(s.pending, seg...)
			if err := s.fn(s.pending); err != nil {
				return 0, err
			}
			s.last = append(s.last[:0], s.pending...)
			lastStart = -1
			s.release()
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
	if int64(len(s.pending))+int64(len(p)) > s.max {
		s.skipping, s.skipped = true, int64(len(s.pending))+int64(len(p))
		s.release()
		return
	}
	s.pending = append(s.pending, p...)
}

// release drops the partial line, giving a large buffer back.
func (s *lineSplitter) release() {
	if cap(s.pending) > readBufferSize {
		s.pending = nil
		return
	}
	s.pending = s.pending[:0]
}

func (s *lineSplitter) skip(n int64) error {
	if s.overlong != nil {
		return s.overlong(n)
	}
	return nil
}

// atLineStart reports that no partial line is held or being skipped.
func (s *lineSplitter) atLineStart() bool { return len(s.pending) == 0 && !s.skipping }

// drop forgets a partial line (a frame that failed, a torn tail).
func (s *lineSplitter) drop() {
	s.release()
	s.skipping, s.skipped = false, 0
}
