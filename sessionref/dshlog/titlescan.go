package dshlog

import (
	"bytes"
	"encoding/json"
	"strconv"
)

// TitleScanner extracts what the title index keeps from log lines without
// decoding most of them: dsh writes every event as {"type":"…","seq":N,…},
// so the type and seq are read from the line's first bytes and only title
// and descriptor lines are decoded in full. Only the seq of the newest line
// survives a read, so Finish decodes that one line in full: the index then
// agrees exactly with a full decode of the log.
type TitleScanner struct {
	Entry *Entry
	// prevSeq is the last seq before the newest line, for when finish finds
	// that line unparsable.
	prevSeq int64
	fed     bool
	// Torn is set while the lines come from a torn last zstd frame, which
	// the next read delivers again: they are not counted.
	Torn bool
}

var (
	typePrefix = []byte(`{"type":"`)
	seqPrefix  = []byte(`,"seq":`)
)

// Line feeds one event line (not the header). It keeps no reference to it.
func (s *TitleScanner) Line(line []byte) {
	s.prevSeq = s.Entry.LastSeq
	s.fed = true
	typ, rest, fast := fastType(line)
	if !fast {
		var e envelope
		if decodeEnvelope(line, &e) != nil || e.Type == "" {
			return // unparsable lines do not change titles or seqs
		}
		if seq, ok := e.lastSeq(); ok {
			s.Entry.LastSeq = seq
		}
		s.countUnknown(e.Type)
		s.decodeTitled(e.Type, line)
		if e.Type == typeUserMessage || e.Type == typeSteeringMessage {
			s.notePrompt(line)
		}
		return
	}
	if len(typ) == 0 || !endsLikeObject(line) {
		return // unparsable: changes nothing
	}
	if s.Entry.FormatVersion >= 4 {
		s.countUnknown(string(typ))
	}
	// switch on string(typ) compares without allocating.
	switch string(typ) {
	case typeTextChunks, typeReasoningChunks, typeToolCallChunks:
		// A packed row's seq needs its member count; finish settles it if
		// this row stays the newest line.
		return
	case typeTitle:
		s.fastSeqOrDecode(rest, line)
		s.decodeTitled(typeTitle, line)
	case typeDescriptor:
		s.fastSeqOrDecode(rest, line)
		s.decodeTitled(typeDescriptor, line)
	case typeCatalog:
		s.fastSeqOrDecode(rest, line)
		s.decodeTitled(typeCatalog, line)
	case typeWorkDir:
		s.fastSeqOrDecode(rest, line)
		s.decodeTitled(typeWorkDir, line)
	case typeUserMessage, typeSteeringMessage:
		s.fastSeqOrDecode(rest, line)
		s.notePrompt(line)
	default:
		s.fastSeqOrDecode(rest, line)
	}
}

func (s *TitleScanner) fastSeqOrDecode(rest, line []byte) {
	if seq, ok := fastSeq(rest); ok {
		s.Entry.LastSeq = seq
		return
	}
	var e envelope
	if decodeEnvelope(line, &e) == nil {
		if seq, ok := e.lastSeq(); ok {
			s.Entry.LastSeq = seq
		}
	}
}

// decodeTitled decodes a title or descriptor line in full.
func (s *TitleScanner) decodeTitled(typ string, line []byte) {
	switch typ {
	case typeTitle:
		if title, ok := stringOf(dataOf(line)["title"]); ok {
			s.Entry.Title, s.Entry.HasTitle = title, true
		}
	case typeDescriptor:
		s.Entry.Described = true // whatever it says: only children hold one
		data := exactObject(line)["data"]
		if data == nil {
			return
		}
		if s.Entry.FormatVersion >= 4 {
			// v4: the last descriptor decides; only version 3 is supported.
			s.Entry.DescriptorLabel, _ = descriptorV3Label(data)
			return
		}
		if label, ok := descriptorV2Label(data); ok {
			s.Entry.DescriptorLabel = label
		}
	case typeWorkDir:
		// The last change decides (dsh's workingDirectory projection:
		// apply keeps the cwd of each working-directory/change).
		if cwd, ok := stringOf(dataOf(line)["cwd"]); ok && cwd != "" {
			s.Entry.WorkDir = cwd
		}
	case typeCatalog:
		data := dataOf(line)
		childID, ok := stringOf(data["childId"])
		if !ok {
			return
		}
		label := ""
		if v := data["label"]; v != nil && string(v) != "null" {
			l, ok := stringOf(v)
			if !ok {
				return // a label that is not a string: the event is ill-typed
			}
			label = CapLabel(l)
		}
		if old, ok := s.Entry.ChildLabels[childID]; ok && old == label {
			return
		}
		// Copy on write: published snapshots share the map.
		labels := make(map[string]string, len(s.Entry.ChildLabels)+1)
		for k, v := range s.Entry.ChildLabels {
			labels[k] = v
		}
		labels[childID] = label
		s.Entry.ChildLabels = labels
	}
}

// exactObject is the members of the JSON object obj by key, or nil when
// obj is not an object. Keys match exactly, as dsh's JavaScript reads
// them (data.title); encoding/json's struct decoding also took "dAtA"
// for "data" (FuzzTitleScanner).
func exactObject(obj []byte) map[string]json.RawMessage {
	var m map[string]json.RawMessage
	if len(obj) == 0 || json.Unmarshal(obj, &m) != nil {
		return nil
	}
	return m
}

// dataOf is the members of an event line's data object, by exact key.
func dataOf(line []byte) map[string]json.RawMessage {
	return exactObject(exactObject(line)["data"])
}

// stringOf is the string v holds; ok is false when v is absent, null or
// not a string.
func stringOf(v json.RawMessage) (string, bool) {
	if v == nil || string(v) == "null" {
		return "", false
	}
	var s string
	if json.Unmarshal(v, &s) != nil {
		return "", false
	}
	return s, true
}

// notePrompt classifies a user message line while the log's first prompt
// is not known (Entry.Prompt, kind.go): once it is, no line is decoded for
// it again.
func (s *TitleScanner) notePrompt(line []byte) {
	if s.Entry.Prompt != PromptNone {
		return
	}
	v4 := s.Entry.FormatVersion >= 4
	p, ok := promptFast(line, v4)
	if !ok {
		p = promptOf(line, v4)
	}
	s.Entry.Prompt = p
}

// countUnknown counts an event type outside the v4 vocabulary in a v4 log.
func (s *TitleScanner) countUnknown(typ string) {
	if s.Entry.FormatVersion >= 4 && !s.Torn && !isKnownV4Type(typ) {
		s.Entry.UnknownEvents++
	}
}

// Finish settles the last seq from the newest line of a read, decoded in
// full; last is that line (nil when the read had none).
func (s *TitleScanner) Finish(last []byte) {
	if !s.fed {
		return
	}
	s.fed = false
	if last == nil {
		return
	}
	var e envelope
	if decodeEnvelope(last, &e) != nil || e.Type == "" {
		s.Entry.LastSeq = s.prevSeq // the newest line is unparsable
		return
	}
	if seq, ok := e.lastSeq(); ok {
		s.Entry.LastSeq = seq
	} else {
		s.Entry.LastSeq = s.prevSeq
	}
	if e.Time != nil && *e.Time > 0 {
		s.Entry.LastEventAt = *e.Time
	}
}

// endsLikeObject reports whether a line ends with '}' as every complete
// event does; a cheap guard against torn or garbled lines.
func endsLikeObject(line []byte) bool {
	i := len(line) - 1
	for i >= 0 && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r') {
		i--
	}
	return i >= 0 && line[i] == '}'
}

// fastType reads the event type from a line that starts the way dsh writes
// it. rest is the line after the type string.
func fastType(line []byte) (typ, rest []byte, ok bool) {
	if !bytes.HasPrefix(line, typePrefix) {
		return nil, nil, false
	}
	tail := line[len(typePrefix):]
	end := bytes.IndexByte(tail, '"')
	if end < 0 || bytes.IndexByte(tail[:end], '\\') >= 0 {
		return nil, nil, false
	}
	return tail[:end], tail[end+1:], true
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
	if n > maxFastDigits {
		v, err := strconv.ParseInt(string(digits[:n]), 10, 64)
		return v, err == nil
	}
	var v int64
	for _, d := range digits[:n] {
		v = v*10 + int64(d-'0')
	}
	return v, true
}

// maxFastDigits is how many digits are summed without an overflow check:
// 18 decimal digits always fit an int64.
const maxFastDigits = 18
