package server

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/dsh-refls/dsh-refls/server/internal/render"
	"github.com/dsh-refls/dsh-refls/sessionref"
	"github.com/dsh-refls/dsh-refls/sessionref/dshlog"
	"github.com/dsh-refls/dsh-refls/sessionref/prepare"
	"github.com/dsh-refls/dsh-refls/sessionref/recall"
	"github.com/dsh-refls/dsh-refls/sessionref/titles"
)

// A body-search hit opens the preview of its session at the message that
// matched (issue 30, item 6). The hit's message travels as its seq (the
// seq of the event the message comes from, which dsh/search and the body
// matches of completion report): the preview URI of that view is the
// session's preview URI with "?seq=N", whose document is the usual
// preview followed by that message in full; dsh/preview asked with a seq
// (and the query) answers the view's URI, the range of the message in it
// and the range of the first hit to select, in the client's position
// encoding, as a LocationLink's targetRange and targetSelectionRange.

// previewSeqKey is the URI query parameter naming the message of a view.
const previewSeqKey = "seq"

// Bounds of the message a view shows: a message longer than
// maxMessageViewBytes (an 8 MB line) is cut to that many bytes around its
// first hit, messageViewBefore of them before it.
const (
	maxMessageViewBytes = 64 << 10
	messageViewBefore   = 16 << 10
)

// previewAtKey is the URI query parameter naming where a message too long
// to show in full is cut around: the byte offset of the hit in the
// message's view text (messageViewText).
const previewAtKey = "at"

// PreviewMessageURI is the dsh-refls: URI of the preview of session id
// titled title opened at the message of event seq.
func PreviewMessageURI(id, title string, seq int64) string {
	return PreviewURI(id, title) + "?" + previewSeqKey + "=" + strconv.FormatInt(seq, 10)
}

// previewMessageURIAt is PreviewMessageURI of a message cut around byte
// at of its text; at 0 (or no cut) it names no offset.
func previewMessageURIAt(id, title string, seq int64, at int) string {
	if at <= 0 {
		return PreviewMessageURI(id, title, seq)
	}
	return PreviewMessageURI(id, title, seq) + "&" + previewAtKey + "=" + strconv.Itoa(at)
}

// messageOfPreviewURI is the message a preview URI names, if it names
// one: its seq, and where a long message is cut (0: from its start). VS
// Code writes "=" and "&" in a URI's query as %3D and %26, so the query is
// unescaped once before it is read (its values are digits only).
func messageOfPreviewURI(raw string) (seq int64, at int, ok bool, err error) {
	u, err := url.Parse(raw)
	if err != nil || u.RawQuery == "" {
		return 0, 0, false, nil
	}
	q, err := url.QueryUnescape(u.RawQuery)
	if err != nil {
		q = u.RawQuery
	}
	vals, _ := url.ParseQuery(q)
	number := func(key string) (int64, bool, error) {
		v, ok := vals[key]
		switch {
		case !ok:
			return 0, false, nil
		case len(v) != 1:
			return 0, false, sessionref.Errorf(sessionref.CodeInvalidReference, "%q names %s more than once", raw, key)
		}
		n, err := strconv.ParseInt(v[0], 10, 64)
		if err != nil || n < 0 {
			return 0, false, sessionref.Errorf(sessionref.CodeInvalidReference, "%q names no message: %s %q is not a whole number of at least 0", raw, key, v[0])
		}
		return n, true, nil
	}
	seq, ok, err = number(previewSeqKey)
	if !ok || err != nil {
		return 0, 0, false, err
	}
	at64, _, err := number(previewAtKey)
	if err != nil {
		return 0, 0, false, err
	}
	return seq, int(min(at64, 1<<40)), true, nil
}

// previewDoc is a rendered preview; with a message, where it lies.
type previewDoc struct {
	text string
	// hasMessage is set when the view was asked for a message: then
	// message is the byte range of its section (the heading to the end)
	// and selection that of the first hit, or the heading's start when
	// no hit was asked for or found.
	hasMessage bool
	message    [2]int
	selection  [2]int
	// bodyAt is where the message's text starts, 0 without one.
	bodyAt int
	// at is where a message too long to show was cut around (the byte
	// of its view text), 0 when it was shown from its start.
	at int
}

// previewMessage is the message a preview is asked for: ok with its seq,
// the query whose first hit to select, and at, where a long message is
// cut around without a hit (the "at" of its URI).
type previewMessage struct {
	seq   int64
	at    int
	ok    bool
	query string
}

// renderPreview is the preview of session id, followed by the message of
// event seq when hasSeq, with the first hit of query selected. A query
// that cannot be searched is an error; a seq the session holds no message
// of is said in the document.
func (s *Server) renderPreview(ctx context.Context, snap *titles.Snapshot, id string, m previewMessage) (previewDoc, error) {
	seq, hasSeq, query := m.seq, m.ok, m.query
	text := s.sessionPreviewText(ctx, snap, id, true)
	if !hasSeq || ctx.Err() != nil {
		return previewDoc{text: text}, nil
	}
	entry, ok := snap.Locate(id)
	if !ok {
		return previewDoc{text: text}, nil
	}
	var msg *dshlog.ProjectedMessage
	var readErr error
	if p, err := dshlog.ReadProjection(ctx, entry); err != nil {
		readErr = err
	} else {
		for i := range p.Messages {
			if p.Messages[i].Seq == seq {
				msg = &p.Messages[i]
				break
			}
		}
	}
	if ctx.Err() != nil {
		return previewDoc{}, ctx.Err()
	}
	if msg == nil {
		why := fmt.Sprintf("This session holds no message from event %d now: its log changed since the search, or the event holds no text a reference would recall.", seq)
		if readErr != nil {
			why = "Cannot read this message now: " + render.ErrorText(readErr)
		}
		return appendMessageSection(text, fmt.Sprintf("Event %d", seq), why, "", false), nil
	}
	body := messageViewText(msg.Text)
	if s.config().RedactSecrets {
		body, _ = prepare.RedactSecrets(body)
	}
	hit, found := [2]int{m.at, m.at}, false
	if query != "" {
		start, end, ok, err := recall.FirstHit(body, query)
		var qe *recall.QueryError
		if errors.As(err, &qe) {
			return previewDoc{}, sessionref.Errorf(sessionref.CodeInvalidReference, "%s", qe.Reason)
		}
		if ok {
			hit, found = [2]int{start, end}, true
		}
	}
	cut, shift := cutAround(body, hit[0])
	d := appendMessageSection(text, fmt.Sprintf("Message of event %d · %s", seq, msg.Role), "", cut, true)
	if len(cut) != len(body) {
		d.at = hit[0]
	}
	if found {
		d.selection = [2]int{d.bodyAt + hit[0] + shift, d.bodyAt + hit[1] + shift}
	} else {
		d.selection = [2]int{d.bodyAt, d.bodyAt}
	}
	return d, nil
}

// appendMessageSection appends to text a heading and either a note or,
// with hasBody, the message body in a fence. The selection is the
// heading's start.
func appendMessageSection(text, heading, note, body string, hasBody bool) previewDoc {
	var b strings.Builder
	b.WriteString(text)
	if !strings.HasSuffix(text, "\n") {
		b.WriteString("\n")
	}
	b.WriteString("\n")
	start := b.Len()
	b.WriteString("## " + render.Escape(heading) + "\n\n")
	bodyAt := 0
	if hasBody {
		fence := render.Fence(body)
		b.WriteString(fence + "text\n")
		bodyAt = b.Len()
		b.WriteString(body + "\n" + fence + "\n")
	} else {
		b.WriteString(note + "\n")
	}
	return previewDoc{text: b.String(), hasMessage: true, message: [2]int{start, b.Len()}, selection: [2]int{start, start}, bodyAt: bodyAt}
}

// cutAround cuts a body longer than maxMessageViewBytes to that many
// bytes around byte at (at rune boundaries, "…" where it was cut), and
// says by how much an offset of body moves in the cut.
func cutAround(body string, at int) (string, int) {
	if len(body) <= maxMessageViewBytes {
		return body, 0
	}
	from := max(0, at-messageViewBefore)
	to := min(len(body), from+maxMessageViewBytes)
	for from > 0 && !utf8.RuneStart(body[from]) {
		from--
	}
	for to < len(body) && !utf8.RuneStart(body[to]) {
		to--
	}
	out, shift := body[from:to], -from
	if from > 0 {
		out, shift = "…"+out, shift+len("…")
	}
	if to < len(body) {
		out += "…"
	}
	return out, shift
}

// messageViewText is a message as a view shows it: valid UTF-8 (the lone
// surrogates of WTF-8 text as U+FFFD), lines ending in "\n" only (a lone
// "\r" or "\r\n" is one), and every other control character, line or
// paragraph separator and bidirectional formatting character as a space,
// so that every editor counts the same lines and columns and nothing
// reorders the text on screen.
func messageViewText(text string) string {
	text = strings.ToValidUTF8(text, "\uFFFD")
	text = strings.ReplaceAll(text, "\r\n", "\n")
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\n', r == '\t':
			return r
		case r == '\r':
			return '\n'
		case unicode.IsControl(r), r == '\u2028', r == '\u2029',
			r >= '\u202a' && r <= '\u202e', r >= '\u2066' && r <= '\u2069', r == '\u200e', r == '\u200f', r == '\u061c':
			return ' '
		}
		return r
	}, text)
}

// previewMessageOf is the message dsh/preview is asked for: its seq
// param, else the one its URI names.
func previewMessageOf(p previewParams) (previewMessage, error) {
	if p.Seq != nil {
		if *p.Seq < 0 {
			return previewMessage{}, sessionref.Errorf(sessionref.CodeInvalidReference, "seq %d names no message: it must be at least 0", *p.Seq)
		}
		return previewMessage{seq: *p.Seq, ok: true, query: p.Query}, nil
	}
	if p.URI == "" || strings.HasPrefix(p.URI, sessionref.URIScheme) {
		return previewMessage{}, nil
	}
	seq, at, ok, err := messageOfPreviewURI(p.URI)
	return previewMessage{seq: seq, at: at, ok: ok, query: p.Query}, err
}

// previewResult is the answer of dsh/preview for the rendered d.
func (s *Server) previewResult(id, title string, m previewMessage, d previewDoc) PreviewResult {
	r := PreviewResult{SessionID: id, Title: title, Markdown: d.text}
	if !d.hasMessage {
		return r
	}
	mp := NewMapper(d.text, s.clientCaps().encoding)
	whole, sel := mp.Range(d.message[0], d.message[1]), mp.Range(d.selection[0], d.selection[1])
	r.URI, r.Range, r.SelectionRange = previewMessageURIAt(id, title, m.seq, d.at), &whole, &sel
	return r
}
