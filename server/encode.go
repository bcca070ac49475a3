package server

import (
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"sync"
	"unicode/utf8"

	"github.com/dsh-refls/dsh-refls/server/internal/lspwire"
	"github.com/dsh-refls/dsh-refls/sessionref"
	"github.com/dsh-refls/dsh-refls/sessionref/titles"
)

// Encoders of the answers sent on every keystroke: dsh/candidates and
// completion lists. encoding/json walked their fields by reflection, about
// a tenth of the server's CPU per keystroke for 50 candidates (17 KB) or
// items (25 KB). These append the same bytes directly: exactly what
// jsonCodec (encoding/json without HTML escaping) writes for the same
// values, field for field and escape for escape, which encode_test.go
// checks byte for byte on generated values. Values these types hold only
// rarely (a body match, an item's documentation, an edit of another type)
// are encoded by jsonCodec in place.

// hexDigits are the digits of \u escapes.
const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a JSON string, escaped as encoding/json
// escapes it without HTML escaping: '"' and '\' with a backslash; \b \f \n
// \r \t by name; other bytes below 0x20 as \u00XX; U+2028 and U+2029 as
// \u2028 and \u2029; each byte of invalid UTF-8 as \ufffd.
//
// It is not sessionref.AppendJSString, the JSON.stringify escaper, on
// purpose: both read back as the same string, but they write U+2028, U+2029
// and invalid UTF-8 with different bytes, and these encoders promise
// jsonCodec's bytes, so that an answer is the same whichever encoder wrote
// it and encode_test.go can compare them byte for byte.
// TestStringEscapersDiffer shows the difference.
func appendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	dst = appendJSONStringBody(dst, s)
	return append(dst, '"')
}

// appendJSONStringBody appends s escaped as appendJSONString escapes it,
// without the quotes. The escape of a string is the escapes of its parts
// joined, when it is cut only at ASCII bytes.
func appendJSONStringBody(dst []byte, s string) []byte {
	start := 0
	for i := 0; i < len(s); {
		if i+8 <= len(s) && plain8(load8(s[i:i+8])) {
			i += 8 // eight bytes copied as they are, tested at once
			continue
		}
		b := s[i]
		if plainJSONByte(b) {
			i++
			continue
		}
		if b < utf8.RuneSelf {
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		if c == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i++
			start = i
			continue
		}
		if c == '\u2028' || c == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[c&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	return append(dst, s[start:]...)
}

// plainJSONByte reports whether appendJSONString copies b as it is: ASCII,
// at least 0x20, neither '"' nor '\\'. plain8 asks the same of eight bytes.
func plainJSONByte(b byte) bool {
	return b >= 0x20 && b < utf8.RuneSelf && b != '"' && b != '\\'
}

// Word-at-a-time constants: a one in each byte, the high bit of each byte.
const (
	lsb8 = 0x0101010101010101
	msb8 = 0x8080808080808080
)

// load8 returns the first eight bytes of s as a little-endian word: one
// load, with one bounds check.
func load8(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// plain8 reports whether every byte of w is one appendJSONString copies
// as it is: ASCII, at least 0x20, neither '"' nor '\\'. The high bit of a
// byte of bad is set for a byte that is not ASCII, one below 0x20 (the
// subtraction borrows) or one equal to '"' or '\\' (its xor is zero and
// borrows); a borrow into a higher byte only follows a byte found already,
// so the answer for the word is exact (TestPlain8 tries every byte value
// at every position).
func plain8(w uint64) bool {
	q, bs := w^('"'*lsb8), w^('\\'*lsb8)
	bad := w | (w-0x20*lsb8)&^w | (q-lsb8)&^q | (bs-lsb8)&^bs
	return bad&msb8 == 0
}

// appendMentionJSON appends sessionref.Mention(label, id) as
// appendJSONString writes it, without building the mention: each part
// sessionref.AppendMention gives is escaped for JSON as it is appended.
// TestAppendMentionJSONIsEncodingJSON compares the two.
func appendMentionJSON(dst []byte, label, id string) []byte {
	dst = append(dst, '"')
	dst = sessionref.AppendMention(dst, label, id, appendJSONStringBody)
	return append(dst, '"')
}

// appendJSONValue appends v as jsonCodec encodes it.
func appendJSONValue(dst []byte, v any) ([]byte, error) {
	b, err := jsonCodec{}.Marshal(v)
	if err != nil {
		return dst, err
	}
	return append(dst, b...), nil
}

// appendBool appends a JSON boolean.
func appendBool(dst []byte, v bool) []byte {
	if v {
		return append(dst, "true"...)
	}
	return append(dst, "false"...)
}

// appendCandidateFields appends the fields of a titles.Candidate,
// without the closing brace: bodyCandidate adds its match after them. A
// candidate without its Mention (CandidateQuery.NoMention) is written with
// the one sessionref.Mention gives its display title and id.
//
// A session's display title is nearly always its label, and its mention's
// label too: the title is escaped once and its bytes copied for the other
// two (100,000 candidates: the complete list of a restart).
func appendCandidateFields(dst []byte, c *titles.Candidate) []byte {
	dst = append(dst, `{"sessionId":`...)
	dst = appendJSONString(dst, c.SessionID)
	dst = append(dst, `,"label":`...)
	label := len(dst)
	dst = appendJSONString(dst, c.Label)
	labelEnd := len(dst)
	dst = append(dst, `,"displayTitle":`...)
	title := len(dst)
	if c.DisplayTitle == c.Label {
		dst = append(dst, dst[label:labelEnd]...)
	} else {
		dst = appendJSONString(dst, c.DisplayTitle)
	}
	titleEnd := len(dst)
	if c.Cwd != nil {
		dst = append(dst, `,"cwd":`...)
		dst = appendJSONString(dst, *c.Cwd)
	}
	if c.WorkingDirectory != nil {
		dst = append(dst, `,"workingDirectory":`...)
		dst = appendJSONString(dst, *c.WorkingDirectory)
	}
	dst = append(dst, `,"sameWorkspace":`...)
	dst = appendBool(dst, c.SameWorkspace)
	dst = append(dst, `,"createdAt":`...)
	dst = strconv.AppendInt(dst, c.CreatedAt, 10)
	dst = append(dst, `,"mention":`...)
	if c.Mention == "" {
		if sessionref.PlainMentionLabel(c.DisplayTitle) {
			// The title's escape, without its quotes, is the label's.
			dst = append(dst, '"')
			dst = sessionref.AppendMentionOfWritten(dst, dst[title+1:titleEnd-1], c.SessionID, appendJSONStringBody)
			return append(dst, '"')
		}
		return appendMentionJSON(dst, c.DisplayTitle, c.SessionID)
	}
	return appendJSONString(dst, c.Mention)
}

// candidateBytes is about what one candidate of a generated store takes
// encoded (17 KB for 49), so that the answer's buffer is allocated once.
const candidateBytes = 384

// candidatesSize is about what the answer of n candidates takes encoded.
func candidatesSize(n int) int { return 64 + candidateBytes*n }

// encodeCandidates encodes the answer of dsh/candidates: the title, id and
// cwd matches, then the body matches, into dst's array
// (lspwire.AnswerBuffers lends it; see candidatesSize).
func encodeCandidates(dst []byte, matched []titles.Candidate, body []bodyCandidate) (json.RawMessage, error) {
	return candidateList{matched: matched, body: body}.encode(dst)
}

// candidateList is the answer of dsh/candidates: the title, id and cwd
// matches, then the body matches.
type candidateList struct {
	matched []titles.Candidate
	body    []bodyCandidate
}

// len is how many candidates the list holds.
func (l candidateList) len() int { return len(l.matched) + len(l.body) }

// appendItem appends candidate i of the list, after a comma unless it is
// the first.
func (l candidateList) appendItem(dst []byte, i int) ([]byte, error) {
	if i > 0 {
		dst = append(dst, ',')
	}
	if i < len(l.matched) {
		dst = appendCandidateFields(dst, &l.matched[i])
		return append(dst, '}'), nil
	}
	b := &l.body[i-len(l.matched)]
	dst = appendCandidateFields(dst, &b.Candidate)
	if m := b.Match; m != nil {
		dst = append(dst, `,"match":`...)
		var err error
		if dst, err = appendJSONValue(dst, m); err != nil {
			return nil, fmt.Errorf("encoding the match of %s: %w", b.SessionID, err)
		}
	}
	return append(dst, '}'), nil
}

// encode appends the list as a JSON array to dst's array.
func (l candidateList) encode(dst []byte) (json.RawMessage, error) {
	dst = append(dst[:0], '[')
	for i := range l.len() {
		var err error
		if dst, err = l.appendItem(dst, i); err != nil {
			return nil, err
		}
	}
	return append(dst, ']'), nil
}

// streamFlushBytes is how much of a streamed list is encoded before it is
// written: the pipe takes it while the next part is encoded.
const streamFlushBytes = 128 << 10

// streamed is the list as an answer encoded while it is written, through
// one small array, after a first pass has measured it on every core: the
// 32 MB answer listing 100,000 sessions was encoded into an array of its
// own, on memory the process had never touched, before its first byte was
// written (issue 31, item 6).
func (l candidateList) streamed() (lspwire.Answer, error) {
	size, err := l.size()
	if err != nil {
		return lspwire.Answer{}, err
	}
	return lspwire.Streamed(size, func(w io.Writer) error {
		buf := make([]byte, 0, streamFlushBytes+streamFlushBytes/4)
		buf = append(buf, '[')
		for i := range l.len() {
			var err error
			if buf, err = l.appendItem(buf, i); err != nil {
				return err
			}
			if len(buf) >= streamFlushBytes {
				if _, err := w.Write(buf); err != nil {
					return err
				}
				buf = buf[:0]
			}
		}
		_, err := w.Write(append(buf, ']'))
		return err
	}), nil
}

// size is how many bytes the list takes encoded: each candidate is
// encoded into a small array and measured, the list cut in one part per
// core.
func (l candidateList) size() (int, error) {
	n := l.len()
	parts := min(runtime.GOMAXPROCS(0), max(1, n/1024))
	sizes := make([]int, parts)
	errs := make([]error, parts)
	var wg sync.WaitGroup
	for p := range parts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var scratch []byte
			for i := p * n / parts; i < (p+1)*n/parts; i++ {
				var err error
				if scratch, err = l.appendItem(scratch[:0], i); err != nil {
					errs[p] = err
					return
				}
				sizes[p] += len(scratch)
			}
		}()
	}
	wg.Wait()
	total := len("[]")
	for p := range parts {
		if errs[p] != nil {
			return 0, errs[p]
		}
		total += sizes[p]
	}
	return total, nil
}

// appendPosition appends a Position.
func appendPosition(dst []byte, p Position) []byte {
	dst = append(dst, `{"line":`...)
	dst = strconv.AppendInt(dst, int64(p.Line), 10)
	dst = append(dst, `,"character":`...)
	dst = strconv.AppendInt(dst, int64(p.Character), 10)
	return append(dst, '}')
}

// appendRange appends a Range.
func appendRange(dst []byte, r Range) []byte {
	dst = append(dst, `{"start":`...)
	dst = appendPosition(dst, r.Start)
	dst = append(dst, `,"end":`...)
	dst = appendPosition(dst, r.End)
	return append(dst, '}')
}

// appendEdit appends an item's textEdit: a textEdit or an
// insertReplaceEdit, another value as jsonCodec encodes it.
func appendEdit(dst []byte, edit any) ([]byte, error) {
	switch e := edit.(type) {
	case textEdit:
		dst = append(dst, `{"range":`...)
		dst = appendRange(dst, e.Range)
		dst = append(dst, `,"newText":`...)
		dst = appendJSONString(dst, e.NewText)
		return append(dst, '}'), nil
	case insertReplaceEdit:
		dst = append(dst, `{"newText":`...)
		dst = appendJSONString(dst, e.NewText)
		dst = append(dst, `,"insert":`...)
		dst = appendRange(dst, e.Insert)
		dst = append(dst, `,"replace":`...)
		dst = appendRange(dst, e.Replace)
		return append(dst, '}'), nil
	}
	return appendJSONValue(dst, edit)
}

// appendCompletionItem appends one completion item.
func appendCompletionItem(dst []byte, it *completionItem) ([]byte, error) {
	var err error
	dst = append(dst, `{"label":`...)
	dst = appendJSONString(dst, it.Label)
	if d := it.LabelDetails; d != nil {
		dst = append(dst, `,"labelDetails":{`...)
		if d.Detail != "" {
			dst = append(dst, `"detail":`...)
			dst = appendJSONString(dst, d.Detail)
		}
		if d.Description != "" {
			if d.Detail != "" {
				dst = append(dst, ',')
			}
			dst = append(dst, `"description":`...)
			dst = appendJSONString(dst, d.Description)
		}
		dst = append(dst, '}')
	}
	if it.Kind != 0 {
		dst = append(dst, `,"kind":`...)
		dst = strconv.AppendInt(dst, int64(it.Kind), 10)
	}
	if it.Detail != "" {
		dst = append(dst, `,"detail":`...)
		dst = appendJSONString(dst, it.Detail)
	}
	if it.Documentation != nil {
		dst = append(dst, `,"documentation":`...)
		if dst, err = appendJSONValue(dst, it.Documentation); err != nil {
			return nil, err
		}
	}
	if it.SortText != "" {
		dst = append(dst, `,"sortText":`...)
		dst = appendJSONString(dst, it.SortText)
	}
	if it.FilterText != "" {
		dst = append(dst, `,"filterText":`...)
		dst = appendJSONString(dst, it.FilterText)
	}
	if it.TextEdit != nil {
		dst = append(dst, `,"textEdit":`...)
		if dst, err = appendEdit(dst, it.TextEdit); err != nil {
			return nil, err
		}
	}
	if d := it.Data; d != nil {
		dst = append(dst, `,"data":{"kind":`...)
		dst = appendJSONString(dst, d.Kind)
		if d.SessionID != "" {
			dst = append(dst, `,"sessionId":`...)
			dst = appendJSONString(dst, d.SessionID)
		}
		if d.Path != "" {
			dst = append(dst, `,"path":`...)
			dst = appendJSONString(dst, d.Path)
		}
		if d.Seq != nil {
			dst = append(dst, `,"seq":`...)
			dst = strconv.AppendInt(dst, *d.Seq, 10)
		}
		dst = append(dst, '}')
	}
	return append(dst, '}'), nil
}

// completionSize is about what a list of n items takes encoded.
func completionSize(n int) int { return 64 + 512*n }

// encodeCompletionList encodes a completion list into dst's array
// (lspwire.AnswerBuffers lends it; see completionSize).
func encodeCompletionList(dst []byte, l *completionList) (json.RawMessage, error) {
	dst = append(dst[:0], `{"isIncomplete":`...)
	dst = appendBool(dst, l.IsIncomplete)
	if l.Items == nil {
		return append(dst, `,"items":null}`...), nil
	}
	dst = append(dst, `,"items":[`...)
	var err error
	for i := range l.Items {
		if i > 0 {
			dst = append(dst, ',')
		}
		if dst, err = appendCompletionItem(dst, &l.Items[i]); err != nil {
			return nil, fmt.Errorf("encoding completion item %q: %w", l.Items[i].Label, err)
		}
	}
	return append(dst, "]}"...), nil
}
