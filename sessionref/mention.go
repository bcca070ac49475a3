package sessionref

import (
	"fmt"
	"strings"
	"unicode/utf8"
	"unsafe"
)

// Mentions in message text (SPEC §2.1).
//
// A text is parsed with the pattern
//
//	@\[((?:\\.|[^\\\]])*)\]\((dsh-session:[^\s)]*)\)|(dsh-session:[A-Za-z0-9_-]+)
//
// read with JavaScript regular-expression semantics, because the pattern is
// dsh's: '.' matches anything but the line terminators \n, \r, U+2028 and
// U+2029, and \s is the ECMAScript white-space set (ASCII space, \t \n \v
// \f \r, U+00A0, U+1680, U+2000–U+200A, U+2028, U+2029, U+202F, U+205F,
// U+3000 and U+FEFF). mentionPatternGo in the tests spells the same pattern
// in Go syntax; FindMentions is a hand-written scanner that matches exactly
// like it, in one linear pass.

const (
	// mentionOpen starts a Markdown mention.
	mentionOpen = "@["
	// mentionLink joins the label to the URI of a Markdown mention.
	mentionLink = "]("
	// mentionClose ends a Markdown mention.
	mentionClose = ')'
)

// Mention returns the Markdown mention of a session, "@[label](uri)", with
// '\' and ']' in the label escaped by a backslash. An empty label means the
// id.
func Mention(label, id string) string {
	if label == "" {
		label = id
	}
	// The payload is base64url of the id as a JSON string: a third more
	// than the id and its quotes (escapes in the id make it longer, and
	// the array then grows once).
	size := len(mentionOpen) + len(label) + strings.Count(label, `\`) + strings.Count(label, "]") +
		len(mentionLink) + len(URIScheme) + (len(id)+2)*4/3 + 4
	b := AppendMention(make([]byte, 0, size), label, id, appendText)
	// b is not written again: the string shares its array, as
	// strings.Builder's does.
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// AppendMention appends Mention(label, id) to dst, every part but the
// URI's payload written by text: text(dst, s) appends s as the caller
// encodes text (as it is, for Mention; JSON-escaped, for the server's
// answers, which write a mention into a larger buffer without the string
// Mention allocates). The parts are the mention's syntax ("@[",
// "](dsh-session:", ")"), the label cut at the bytes it escapes, and each
// escape (`\\` or `\]`). The payload, base64url, is appended as it is:
// text must leave such bytes unchanged, as JSON does.
func AppendMention(dst []byte, label, id string, text func(dst []byte, s string) []byte) []byte {
	if label == "" {
		label = id
	}
	dst = text(dst, mentionOpen)
	for start := 0; ; {
		i := strings.IndexAny(label[start:], `\]`)
		if i < 0 {
			dst = text(dst, label[start:])
			break
		}
		dst = text(dst, label[start:start+i])
		if label[start+i] == '\\' {
			dst = text(dst, `\\`)
		} else {
			dst = text(dst, `\]`)
		}
		start += i + 1
	}
	return appendMentionEnd(dst, id, text)
}

// PlainMentionLabel reports whether label is written into its mention as
// it is: it is not empty (which means the id) and holds no '\' or ']'.
func PlainMentionLabel(label string) bool {
	return label != "" && strings.IndexByte(label, '\\') < 0 && strings.IndexByte(label, ']') < 0
}

// AppendMentionOfWritten is AppendMention for a label PlainMentionLabel
// accepts that the caller has encoded already: written is text(nil,
// label), copied where the label goes; it may lie in dst's array, before
// len(dst), which appending leaves as it is. A caller that writes the same
// title into several fields of an answer escapes it once.
func AppendMentionOfWritten(dst, written []byte, id string, text func(dst []byte, s string) []byte) []byte {
	dst = text(dst, mentionOpen)
	dst = append(dst, written...)
	return appendMentionEnd(dst, id, text)
}

// appendMentionEnd appends what follows a mention's label: the link to
// id's URI.
func appendMentionEnd(dst []byte, id string, text func(dst []byte, s string) []byte) []byte {
	dst = text(dst, mentionLink+URIScheme)
	dst = AppendURIPayload(dst, id)
	return text(dst, string(mentionClose))
}

// appendText appends s as it is: AppendMention's text for Mention.
func appendText(dst []byte, s string) []byte { return append(dst, s...) }

// MentionSpan is one match of the §2.1 pattern in a text, with byte offsets.
type MentionSpan struct {
	// Start and End are the byte offsets of the whole match in the text.
	Start, End int
	// Label is the unescaped label; for a bare URI, the decoded id (empty
	// when the URI is malformed).
	Label string
	// SessionID is the decoded id, "" when Err != nil.
	SessionID string
	// URI is the URI as written in the text.
	URI string
	// Bare is true for a bare dsh-session: URI, false for a Markdown mention.
	Bare bool
	// Err is an *Error with CodeInvalidReference when the URI is malformed
	// or not canonical.
	Err error
}

// FindMentions returns every match of the §2.1 pattern in text, in order,
// without overlaps. A Markdown mention whose URI does not decode, and a bare
// URI whose payload is not canonical, are returned with Err set. Text that
// does not match, such as "dsh-session:" alone or "dsh-session:%%%", is not
// a mention.
func FindMentions(text string) []MentionSpan {
	var spans []MentionSpan
	// labelFailEnd is the label end of the last Markdown attempt that
	// failed. A later "@[" before it ends its label at the same place (its
	// label starts on an item boundary of the failed scan), so it fails too;
	// remembering this keeps the scan linear on texts like "@[@[@[…".
	labelFailEnd := -1
	for i := 0; i < len(text); {
		switch text[i] {
		case '@':
			if i < labelFailEnd || !strings.HasPrefix(text[i:], mentionOpen) {
				break
			}
			span, labelEnd, ok := matchMarkdownMention(text, i)
			if !ok {
				labelFailEnd = labelEnd
				break
			}
			spans = append(spans, span)
			i = span.End
			continue
		case 'd':
			if span, ok := matchBareURI(text, i); ok {
				spans = append(spans, span)
				i = span.End
				continue
			}
		}
		i++
	}
	return spans
}

// matchMarkdownMention matches the first alternative of the pattern at
// text[start:], which begins with "@[". When it does not match, labelEnd is
// where the label scan stopped.
func matchMarkdownMention(text string, start int) (span MentionSpan, labelEnd int, ok bool) {
	labelStart := start + len(mentionOpen)
	j := labelStart
	escaped := false
scan:
	for j < len(text) {
		r, w := utf8.DecodeRuneInString(text[j:])
		switch r {
		case ']':
			break scan
		case '\\':
			if j+1 == len(text) {
				return MentionSpan{}, j, false
			}
			next, nw := utf8.DecodeRuneInString(text[j+1:])
			if isJSLineTerminator(next) {
				return MentionSpan{}, j, false
			}
			escaped = true
			j += 1 + nw
		default:
			j += w
		}
	}
	labelEnd = j
	if !strings.HasPrefix(text[j:], mentionLink+URIScheme) {
		return MentionSpan{}, labelEnd, false
	}
	uriStart := j + len(mentionLink)
	k := uriStart + len(URIScheme)
	for k < len(text) {
		r, w := utf8.DecodeRuneInString(text[k:])
		if r == mentionClose || isJSWhiteSpace(r) {
			break
		}
		k += w
	}
	if k == len(text) || text[k] != mentionClose {
		return MentionSpan{}, labelEnd, false
	}
	label := text[labelStart:labelEnd]
	if escaped {
		label = unescapeLabel(label)
	}
	span = MentionSpan{Start: start, End: k + 1, Label: label, URI: text[uriStart:k]}
	span.SessionID, span.Err = decodeMentionURI(span.URI)
	return span, labelEnd, true
}

// matchBareURI matches the second alternative of the pattern at
// text[start:].
func matchBareURI(text string, start int) (MentionSpan, bool) {
	if !strings.HasPrefix(text[start:], URIScheme) {
		return MentionSpan{}, false
	}
	end := start + len(URIScheme)
	for end < len(text) && isBase64URLByte(text[end]) {
		end++
	}
	if end == start+len(URIScheme) {
		return MentionSpan{}, false
	}
	span := MentionSpan{Start: start, End: end, URI: text[start:end], Bare: true}
	span.SessionID, span.Err = decodeMentionURI(span.URI)
	span.Label = span.SessionID
	return span, true
}

// decodeMentionURI decodes the URI of a mention, naming the mention in the
// error. The error says no offset: it is read by a person, and the
// mention's span carries where it is.
func decodeMentionURI(uri string) (string, error) {
	id, err := decodeURI(uri)
	if err != nil {
		return "", &Error{
			Code:    CodeInvalidReference,
			Message: fmt.Sprintf("malformed session reference %s", quoteForMessage(uri)),
			Err:     err,
		}
	}
	return id, nil
}

// unescapeLabel removes the backslash of every "\x" pair of a label that
// the pattern matched.
func unescapeLabel(label string) string {
	var b strings.Builder
	b.Grow(len(label))
	for i := 0; i < len(label); i++ {
		if label[i] == '\\' && i+1 < len(label) {
			i++
		}
		b.WriteByte(label[i])
	}
	return b.String()
}

// isJSLineTerminator reports whether r is an ECMAScript line terminator,
// which '.' does not match.
func isJSLineTerminator(r rune) bool {
	return r == '\n' || r == '\r' || r == '\u2028' || r == '\u2029'
}

// isJSWhiteSpace reports whether r is in the ECMAScript \s class: white
// space and line terminators.
func isJSWhiteSpace(r rune) bool {
	switch {
	case r == ' ', r >= '\t' && r <= '\r':
		return true
	case r < 0x80:
		return false
	case r == '\u00A0', r == '\u1680', r >= '\u2000' && r <= '\u200A',
		r == '\u2028', r == '\u2029', r == '\u202F', r == '\u205F',
		r == '\u3000', r == '\uFEFF':
		return true
	}
	return false
}

// ParseText rewrites each mention of text to "@label" and returns the
// references in order of appearance (no de-duplication here). For a bare
// URI the label is the decoded id. The first malformed mention is an
// *Error with CodeInvalidReference naming it; then the text and references
// are not returned.
func ParseText(text string) (rewritten string, refs []Reference, err error) {
	spans := FindMentions(text)
	if len(spans) == 0 {
		return text, nil, nil
	}
	var b strings.Builder
	b.Grow(len(text))
	last := 0
	refs = make([]Reference, 0, len(spans))
	for _, s := range spans {
		if s.Err != nil {
			return "", nil, s.Err
		}
		b.WriteString(text[last:s.Start])
		b.WriteByte('@')
		b.WriteString(s.Label)
		last = s.End
		refs = append(refs, Reference{SessionID: s.SessionID, Label: s.Label, EmptyLabel: s.Label == ""})
	}
	b.WriteString(text[last:])
	return b.String(), refs, nil
}
