package sessionref

import (
	"bytes"
	"encoding/json"
	"strconv"
)

// titleScanner extracts what the title index keeps from log lines without
// decoding most of them: dsh writes every event as {"type":"…","seq":N,…},
// so the type and seq are read from the line's first bytes and only title
// and descriptor lines are decoded in full. Only the seq of the newest line
// survives a read, so that one line is decoded in full when the read ends:
// the index then agrees exactly with a full decode of the log.
type titleScanner struct {
	entry *Entry
	// last is a copy of the newest line and prevSeq the last seq before it.
	last           []byte
	hasLast        bool
	prevSeq        int64
	descriptorSeen bool
}

var (
	typePrefix = []byte(`{"type":"`)
	seqPrefix  = []byte(`,"seq":`)
)

// line feeds one event line (not the header).
func (s *titleScanner) line(line []byte) {
	s.prevSeq = s.entry.LastSeq
	s.last = append(s.last[:0], line...)
	s.hasLast = true
	typ, rest, fast := fastType(line)
	if fast && (typ == "" || !endsLikeObject(line)) {
		return // unparsable: changes nothing
	}
	if !fast {
		var e envelope
		if json.Unmarshal(line, &e) != nil || e.Type == "" {
			return // unparsable lines do not change titles or seqs
		}
		typ = e.Type
		if seq, ok := e.lastSeq(); ok {
			s.entry.LastSeq = seq
		}
	} else {
		switch typ {
		case typeTextChunks, typeReasoningChunks, typeToolCallChunks:
			// The seq of a packed row needs its member count; finish
			// settles it if this row stays the newest line.
		default:
			if seq, ok := fastSeq(rest); ok {
				s.entry.LastSeq = seq
			} else {
				var e envelope
				if json.Unmarshal(line, &e) == nil {
					if seq, ok := e.lastSeq(); ok {
						s.entry.LastSeq = seq
					}
				}
			}
		}
	}
	switch typ {
	case typeTitle:
		var t struct {
			Data struct {
				Title *string `json:"title"`
			} `json:"data"`
		}
		if json.Unmarshal(line, &t) == nil && t.Data.Title != nil {
			s.entry.Title, s.entry.HasTitle = *t.Data.Title, true
		}
	case typeDescriptor:
		var d struct {
			Data struct {
				Version json.Number `json:"version"`
				Label   *string     `json:"label"`
			} `json:"data"`
		}
		if json.Unmarshal(line, &d) == nil && d.Data.Version == "2" {
			s.entry.DescriptorLabel = ""
			if d.Data.Label != nil {
				s.entry.DescriptorLabel = *d.Data.Label
			}
		}
	}
}

// finish decodes the newest line in full and settles the last seq from it.
func (s *titleScanner) finish() {
	if !s.hasLast {
		return
	}
	s.hasLast = false
	last := s.last
	s.last = nil // the index keeps no line between reads (§1.5)
	var e envelope
	if json.Unmarshal(last, &e) != nil || e.Type == "" {
		s.entry.LastSeq = s.prevSeq // the newest line is unparsable
		return
	}
	if seq, ok := e.lastSeq(); ok {
		s.entry.LastSeq = seq
	} else {
		s.entry.LastSeq = s.prevSeq
	}
}

// endsLikeObject reports whether a line ends with '}' as every complete
// event does; a cheap guard against torn or garbled lines.
func endsLikeObject(line []byte) bool {
	trimmed := bytes.TrimRight(line, " \t\r")
	return len(trimmed) > 0 && trimmed[len(trimmed)-1] == '}'
}

// fastType reads the event type from a line that starts the way dsh writes
// it. rest is the line after the type string.
func fastType(line []byte) (typ string, rest []byte, ok bool) {
	if !bytes.HasPrefix(line, typePrefix) {
		return "", nil, false
	}
	tail := line[len(typePrefix):]
	end := bytes.IndexByte(tail, '"')
	if end < 0 || bytes.IndexByte(tail[:end], '\\') >= 0 {
		return "", nil, false
	}
	return string(tail[:end]), tail[end+1:], true
}

// fastSeq reads `,"seq":N` right after the type.
func fastSeq(rest []byte) (int64, bool) {
	if !bytes.HasPrefix(rest, seqPrefix) {
		return 0, false
	}
	digits := rest[len(seqPrefix):]
	n := 0
	for n < len(digits) && digits[n] >= '0' && digits[n] <= '9' {
		n++
	}
	if n == 0 || n >= len(digits) || (digits[n] != ',' && digits[n] != '}') {
		return 0, false
	}
	v, err := strconv.ParseInt(string(digits[:n]), 10, 64)
	return v, err == nil
}
