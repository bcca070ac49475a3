package dshgen

import "strconv"

// SkipSeq consumes n seqs without writing an event, so the next event leaves
// a seq gap in the log (§1.4 requires contiguous seqs; dsh's reader ends the
// readable prefix at a gap). The projection does not change.
func (s *Session) SkipSeq(n int64) *Session {
	s.nextSeq += n
	return s
}

// RawUserText writes a direct human prompt whose text block is given as the
// raw bytes between the quotes of its JSON string, escapes included, so a log
// can hold what the JSON writer never writes: lone surrogates (`\ud800`),
// invalid UTF-8 bytes, or a non-string text (with quoted false, body is the
// raw JSON value). It consumes one seq like UserText; Expected's projection
// does not see it, so a test using it states its own expectation.
func (s *Session) RawUserText(body string, quoted bool) *Session {
	text := body
	if quoted {
		text = `"` + body + `"`
	}
	seq := s.nextSeq
	s.nextSeq++
	line := `{"type":"user/message","seq":` + strconv.FormatInt(seq, 10) +
		`,"time":` + strconv.FormatInt(s.nextTime(), 10) +
		`,"data":{"content":[{"type":"text","text":` + text + `}],"source":{"kind":"user"},"role":"user","id":` +
		strconv.Quote(s.newID()) + `},"surfaceOp":"append"}`
	s.addLine([]byte(line))
	return s
}
