package prepare

import (
	"context"
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/dsh-refls/dsh-refls/sessionref"
	"github.com/dsh-refls/dsh-refls/sessionref/internal/jsjson"

	"github.com/dsh-refls/dsh-refls/sessionref/dshlog"
)

// TextResult is the dsh/prepare result {content, references, additionalContext?}.
type TextResult struct {
	// Content is the message as it should be sent: a JSON string for text
	// input, the JSON array of blocks for content input.
	Content json.RawMessage `json:"content"`
	// References are the normalised references, in mention order.
	References []sessionref.Reference `json:"references"`
	// AdditionalContext is the context message, absent without references.
	AdditionalContext *ContextMessage `json:"additionalContext,omitempty"`
}

// PreparedText is a plain-text message prepared: the dsh/prepare result
// with its content still as text.
type PreparedText struct {
	// Text is the message as it should be sent.
	Text string
	// References are the normalised references, in mention order.
	References []sessionref.Reference
	// AdditionalContext is the context message, absent without references.
	AdditionalContext *ContextMessage
}

// PrepareText prepares a plain-text message (see PrepareTextMessage) and
// encodes its content as a JSON string.
func PrepareText(ctx context.Context, loc Locator, targetID, text string, mode Mode, explicit []sessionref.Reference, lim Limits) (*TextResult, error) {
	p, err := PrepareTextMessage(ctx, loc, targetID, text, mode, explicit, lim)
	if err != nil {
		return nil, err
	}
	// Written straight into a buffer of its size: Marshal's encoding/json
	// pass grew a buffer of its own and rewrote it (four times a 30 MB
	// message in transient memory).
	raw := jsjson.AppendString(make([]byte, 0, len(p.Text)+2), p.Text)
	return &TextResult{Content: raw, References: p.References, AdditionalContext: p.AdditionalContext}, nil
}

// PrepareTextMessage prepares a plain-text message. Without explicit
// references, mentions are parsed from the text; ModeReplace (the default)
// rewrites them to "@label" and ModePreserve keeps the text as written.
// Explicit references skip parsing, and the text is then returned as
// written. A caller that writes the content where it goes (the server
// into its answer) takes the text from here and holds no encoded copy.
func PrepareTextMessage(ctx context.Context, loc Locator, targetID, text string, mode Mode, explicit []sessionref.Reference, lim Limits) (*PreparedText, error) {
	if err := checkMode(mode); err != nil {
		return nil, err
	}
	content, refs := text, explicit
	if explicit == nil {
		rewritten, parsed, err := sessionref.ParseText(text)
		if err != nil {
			return nil, err
		}
		refs = parsed
		if mode != ModePreserve {
			content = rewritten
		}
	}
	prep, err := Prepare(ctx, loc, targetID, refs, lim)
	if err != nil {
		return nil, err
	}
	if prep.Context == nil {
		content = text // no references: the content comes back unchanged
	}
	return &PreparedText{Text: content, References: prep.References, AdditionalContext: prep.Context}, nil
}

// PrepareContent prepares a message given as content blocks: mentions in
// text blocks are parsed (and rewritten in ModeReplace); other blocks pass
// through untouched.
func PrepareContent(ctx context.Context, loc Locator, targetID string, blocks []json.RawMessage, mode Mode, explicit []sessionref.Reference, lim Limits) (*TextResult, error) {
	if err := checkMode(mode); err != nil {
		return nil, err
	}
	out := make([]json.RawMessage, len(blocks))
	copy(out, blocks)
	refs := explicit
	if explicit == nil {
		refs = []sessionref.Reference{}
		for i, blk := range blocks {
			var fields map[string]json.RawMessage
			if err := json.Unmarshal(blk, &fields); err != nil || fields == nil {
				return nil, sessionref.Errorf(sessionref.CodeInvalidReference, "content block %d is not an object", i)
			}
			var typ, text string
			if json.Unmarshal(fields["type"], &typ) != nil || typ != "text" {
				continue
			}
			if err := json.Unmarshal(fields["text"], &text); err != nil {
				return nil, sessionref.Errorf(sessionref.CodeInvalidReference, "text block %d has no string text", i)
			}
			rewritten, parsed, err := sessionref.ParseText(text)
			if err != nil {
				return nil, err
			}
			refs = append(refs, parsed...)
			if mode != ModePreserve && rewritten != text {
				if fields["text"], err = jsjson.Marshal(rewritten); err != nil {
					return nil, fmt.Errorf("serialising block %d: %w", i, err)
				}
				if out[i], err = jsjson.Marshal(fields); err != nil {
					return nil, fmt.Errorf("serialising block %d: %w", i, err)
				}
			}
		}
	}
	prep, err := Prepare(ctx, loc, targetID, refs, lim)
	if err != nil {
		return nil, err
	}
	if prep.Context == nil {
		out = blocks
	}
	return &TextResult{Content: joinJSONArray(out), References: prep.References, AdditionalContext: prep.Context}, nil
}

// joinJSONArray writes blocks as a JSON array, each block byte for byte.
func joinJSONArray(blocks []json.RawMessage) json.RawMessage {
	out := []byte{'['}
	for i, b := range blocks {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, b...)
	}
	return append(out, ']')
}

func checkMode(mode Mode) error {
	switch mode {
	case "", ModeReplace, ModePreserve:
		return nil
	}
	return sessionref.Errorf(sessionref.CodeInvalidConfig, "mode must be %q or %q, got %q", ModeReplace, ModePreserve, mode)
}

// Preview is what hover and completion resolve show for one session: the
// recall facts dsh/prepare would produce now for that one reference, then an
// excerpt of the newest retained messages.
type Preview struct {
	Entry                 dshlog.Entry
	Stats                 Stats
	CapturedThroughSeq    *int64
	CapturedFormatVersion *int
	Budget                int
	// Excerpt holds the last few retained messages, shortened.
	Excerpt []Turn
	// RetainedTextBytes is the size of the text of the retained messages.
	RetainedTextBytes int64
	// Redactions counts the secrets replaced before retention; nil when
	// Limits.RedactSecrets is off.
	Redactions *int
	// Err says why the session cannot be recalled now (a *Error), if it cannot.
	Err error
}

// Excerpt bounds for previews: enough to recognise a conversation, small
// enough for a hover.
const (
	previewTurns     = 3
	previewTurnRunes = 240
)

// PreviewSession computes the Preview of one session. It fails only for an
// unknown session or cancellation; other problems land in Preview.Err.
func PreviewSession(ctx context.Context, loc Locator, id string, lim Limits) (*Preview, error) {
	entry, ok := loc.Locate(id)
	if !ok {
		return nil, &sessionref.Error{Code: sessionref.CodeReadFailed, SessionID: id, Message: fmt.Sprintf("session %s is not in the sessions store", id)}
	}
	p := &Preview{Entry: entry, Budget: Budget(lim)}
	frames := &dshlog.FrameDecoder{Concurrency: 1}
	ref := sessionref.Reference{SessionID: id, Label: id}
	data, version, msgs, err := readSource(ctx, loc, ref, frames)
	if ctx.Err() != nil {
		return nil, sessionref.Cancelled(ctx)
	}
	if err != nil {
		p.Err = err
		return p, nil
	}
	if version != 0 {
		p.CapturedFormatVersion = &version
	}
	p.CapturedThroughSeq = data.CapturedThroughSeq
	p.Redactions = redactProjected(msgs, lim.RedactSecrets)
	bounded, err := retain(data, msgs, p.Budget)
	if err != nil {
		p.Err = err
		return p, nil
	}
	p.Stats = bounded.stats
	conv := bounded.data.Conversation
	for _, t := range conv {
		p.RetainedTextBytes += int64(len(t.Text))
	}
	for _, t := range conv[max(0, len(conv)-previewTurns):] {
		p.Excerpt = append(p.Excerpt, Turn{Role: t.Role, Text: shorten(jsjson.WellFormed(t.Text), previewTurnRunes)})
	}
	return p, nil
}

// shorten cuts s to at most n code points, marking the cut with "…".
func shorten(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	count := 0
	for i := range s {
		if count == n-1 {
			return s[:i] + "…"
		}
		count++
	}
	return s
}
