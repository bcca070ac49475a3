package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"go.lsp.dev/protocol"

	"github.com/dsh-refls/dsh-refls/server/internal/render"
	"github.com/dsh-refls/dsh-refls/sessionref"
	"github.com/dsh-refls/dsh-refls/sessionref/prepare"
	"github.com/dsh-refls/dsh-refls/sessionref/titles"
)

// Continuing from a session: the text of a new prompt that picks up where
// a session stopped. Its first line mentions the session (so that the
// prompt recalls it); then the session's last request and the answer to
// it, each quoted and bounded. The server cannot open an unsaved document
// in every client, so the command answers the text and the editor plugins
// open it; the code action is offered only to a client that says it opens
// it (the experimental client capability dshContinueFrom).
const (
	// CommandContinueFrom answers the prompt that continues from a
	// session; its one argument is the session id.
	CommandContinueFrom = "dsh-refls.continueFrom"
	// continueQuoteRunes and continueQuoteLines bound each quoted text:
	// characters (code points, newlines included) and lines.
	continueQuoteRunes = 2000
	continueQuoteLines = 40
	// continueCapability is the experimental client capability of a
	// client that opens the answered text as a new prompt.
	continueCapability = "dshContinueFrom"
)

// continueResult answers CommandContinueFrom.
type continueResult struct {
	// Text is the new prompt, Markdown.
	Text      string `json:"text"`
	SessionID string `json:"sessionId"`
	Title     string `json:"title"`
	// Redactions counts the secrets replaced in the quotes; absent when
	// the redactSecrets setting is off.
	Redactions *int `json:"redactions,omitempty"`
}

// opensPrompts reads the experimental client capability dshContinueFrom
// from initialize params.
func opensPrompts(params json.RawMessage) bool {
	var p struct {
		Capabilities struct {
			Experimental map[string]json.RawMessage `json:"experimental"`
		} `json:"capabilities"`
	}
	if json.Unmarshal(params, &p) != nil {
		return false
	}
	return string(p.Capabilities.Experimental[continueCapability]) == "true"
}

func (s *Server) continueFromCall(args []json.RawMessage) (call, error) {
	var id string
	if len(args) != 1 {
		return nil, invalidParams(protocol.MethodWorkspaceExecuteCommand, fmt.Errorf("%s takes one argument, the session id, not %d", CommandContinueFrom, len(args)))
	}
	if err := json.Unmarshal(args[0], &id); err != nil || id == "" {
		return nil, invalidParams(protocol.MethodWorkspaceExecuteCommand, fmt.Errorf("the argument of %s must be a session id, got %s", CommandContinueFrom, args[0]))
	}
	return func(ctx context.Context) (any, error) {
		snap, err := s.readySnapshot(ctx)
		if err != nil {
			return nil, err
		}
		if snap == nil {
			// Not after initialize, which fails without a sessions root;
			// kept so that the command never reads a nil index.
			return nil, errors.New("no sessions root is open: there is no session to continue from")
		}
		x, err := prepare.LastExchange(ctx, snap, id, s.config().RedactSecrets)
		if err != nil {
			return nil, err
		}
		title := x.Entry.DisplayTitle()
		return continueResult{Text: continueText(sessionref.Mention(title, id), x), SessionID: id, Title: title, Redactions: x.Redactions}, nil
	}, nil
}

// continueText writes the new prompt: the mention, the quoted request and
// answer (or what stands in for a missing one), and an empty last line to
// write on.
func continueText(mention string, x *prepare.Exchange) string {
	var b strings.Builder
	b.WriteString(mention + "\n\n")
	switch {
	case x.Messages == 0:
		b.WriteString("That session has no messages yet.\n\n")
		return b.String()
	case x.Request == "" && x.Answer == "":
		b.WriteString("That session has no request or answer to quote.\n\n")
		return b.String()
	case x.Request == "":
		b.WriteString("No request to quote (the session was compacted since its last one).\n\n")
	default:
		b.WriteString("Last request:\n\n" + quoteBounded(x.Request) + "\n")
	}
	if x.Answer == "" {
		b.WriteString("No answer followed it.\n\n")
		return b.String()
	}
	b.WriteString("Last answer:\n\n" + quoteBounded(x.Answer) + "\n")
	return b.String()
}

// quoteBounded quotes text as Markdown "> " lines: at most
// continueQuoteLines lines and continueQuoteRunes characters of it, cut at
// the end of a line (a first line longer than the bound is cut inside),
// with a line "…" where it was cut. Session mentions in it are written as
// their labels, so that the new prompt recalls only the session it
// continues from.
func quoteBounded(text string) string {
	text = strings.NewReplacer("\r\n", "\n", "\r", "\n").Replace(unlinkMentions(text))
	text = strings.Trim(text, "\n")
	lines := strings.Split(text, "\n")
	var kept []string
	runes, cut := 0, false
	for _, l := range lines {
		n := utf8.RuneCountInString(l) + 1
		if len(kept) == continueQuoteLines || runes+n > continueQuoteRunes {
			cut = true
			if len(kept) == 0 {
				kept = append(kept, string([]rune(l)[:continueQuoteRunes-2])+"…")
				cut = false
			}
			break
		}
		kept = append(kept, l)
		runes += n
	}
	if cut {
		kept = append(kept, "…")
	}
	var b strings.Builder
	for _, l := range kept {
		l = strings.TrimRight(l, " \t")
		if l == "" {
			b.WriteString(">\n")
			continue
		}
		b.WriteString("> " + l + "\n")
	}
	return b.String()
}

// unlinkMentions writes each session mention of text as its label in
// brackets, "[label]": quoted in the new prompt, a mention would recall
// its session too.
func unlinkMentions(text string) string {
	spans := sessionref.FindMentions(text)
	if len(spans) == 0 {
		return text
	}
	var b strings.Builder
	at := 0
	for _, sp := range spans {
		label := sp.Label
		if label == "" {
			label = "session reference"
		}
		b.WriteString(text[at:sp.Start] + "[" + render.OneLine(label) + "]")
		at = sp.End
	}
	b.WriteString(text[at:])
	return b.String()
}

// continueWanted: a code action request asks for actions of no kind
// (the continue action has none) when it names no kinds or the empty one.
func continueWanted(only []string) bool {
	return len(only) == 0 || slices.Contains(only, "")
}

// continueActions offers "Continue from this session" on each known
// session mention in r, but the target session's, to a client that opens
// the prompt the command answers.
func (s *Server) continueActions(ctx context.Context, doc document, r Range) ([]codeAction, error) {
	if !s.clientCaps().features.opensPrompts || s.currentSessions() == nil {
		return nil, nil
	}
	m := NewMapper(doc.Text, s.clientCaps().encoding)
	from, err1 := m.Offset(r.Start)
	to, err2 := m.Offset(r.End)
	if err1 != nil || err2 != nil {
		return nil, nil
	}
	var out []codeAction
	var labels []string
	var snap *titles.Snapshot
	seen := map[string]bool{}
	for _, men := range sessionref.FindMentions(doc.Text) {
		if men.Err != nil || men.End < from || men.Start > to || seen[men.SessionID] || men.SessionID == s.config().SessionID {
			continue
		}
		if snap == nil {
			ready, err := s.readySnapshot(ctx)
			if err != nil {
				return nil, err
			}
			snap = ready
		}
		e, ok := snap.Locate(men.SessionID)
		if !ok {
			continue
		}
		seen[men.SessionID] = true
		title := "Continue from this session"
		out = append(out, codeAction{Title: title,
			Command: &command{Title: title, Command: CommandContinueFrom, Arguments: []any{men.SessionID}}})
		labels = append(labels, e.DisplayTitle())
	}
	if len(out) > 1 {
		// Several sessions in the range: each action names its own.
		for i := range out {
			out[i].Title = "Continue from " + render.Shorten(labels[i], 60)
			out[i].Command.Title = out[i].Title
		}
	}
	return out, nil
}
