package sessionref

import (
	"bytes"
	"encoding/json"
	"strconv"
)

// titleScanner extracts what the title index keeps from log lines without
// decoding most of them: dsh writes every event as {"type":"…","seq":N,…},
// so the type and seq are read from the line's first bytes and only title
// and descriptor lines are decoded in full.
type titleScanner struct {
	entry *Entry
	// lastPacked holds the most recent packed row when it is the newest
	// line, because its last seq needs its member count.
	lastPacked     []byte
	lastIsPacked   bool
	descriptorSeen bool
}

var (
	typePrefix = []byte(`{"type":"`)
	seqPrefix  = []byte(`,"seq":`)
)

// line feeds one event line (not the header).
func (s *titleScanner) line(line []byte) {
	typ, rest, fast := fastType(line)
	if fast && typ == "" {
		return // an event without a type is unparsable
	}
	if !fast {
		var e envelope
		if json.Unmarshal(line, &e) != nil || e.Type == "" {
			return // unparsable lines do not change titles or seqs
		}
		typ = e.Type
		rest = nil
		if seq, ok := e.lastSeq(); ok {
			s.entry.LastSeq = seq
		}
		s.lastIsPacked = false
	} else {
		switch typ {
		case typeTextChunks, typeReasoningChunks, typeToolCallChunks:
			s.lastPacked = append(s.lastPacked[:0], line...)
			s.lastIsPacked = true
		default:
			s.lastIsPacked = false
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

// finish settles the last seq when the newest line was a packed row.
func (s *titleScanner) finish() {
	if !s.lastIsPacked {
		return
	}
	var e envelope
	if json.Unmarshal(s.lastPacked, &e) == nil {
		if seq, ok := e.lastSeq(); ok {
			s.entry.LastSeq = seq
		}
	}
	s.lastIsPacked = false
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
