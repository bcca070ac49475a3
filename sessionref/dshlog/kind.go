package dshlog

import "encoding/json"

// Kind says who a session was for, from what its log says about itself
// (docs/sessions.md). Completion hides every kind but KindInteractive
// unless asked to show them; nothing else treats them differently.
//
// The rules are what dsh writes, read in its public tree
// zq0929/deepseek-harness at 5593cc250aae228449197efd2413192165e3377f:
//   - a subagent child's header has origin "subagent", parentSession and
//     delegationDepth = the parent's + 1 (packages/subagent/subagent/src/
//     child-agent.ts, childSessionMeta; packages/core/session/src/types.ts,
//     SessionHeader: "Coarse product classification for a session created
//     as a subagent child"), and only a child holds subagent/descriptor
//     events (FORMAT-v4 §6.2). dsh's own sidebar hides these sessions
//     (packages/client/ui-workspace/src/client/tree.ts, sessionVisible:
//     `if (session.origin === 'subagent') return false`, read in the dsh
//     tree 0217po/deepseek-harness@33d496951c8787e5b61a0e6d83fe242d8e7d7289);
//   - a webhook delivery starts an ordinary root session whose first
//     message is a user message with source kind "webhook"
//     (docs/subsystems/webhook.md, "Session creation"; v0–v3 wrote
//     first-party sources as {kind:"plugin", plugin:"webhook"}, FORMAT-v4
//     §8.3);
//   - a person's prompt is a user message with source kind "user" (v0–v3
//     also without a source), as SPEC §2.3.3 projects it; a session with
//     none is blank, or was written by a plugin alone. dsh's sidebar hides
//     blank sessions too (tree.ts, sessionVisible: `session.blank`).
//
// What dsh writes no mark for is not guessed: a headless run (`dsh
// headless "task"`) writes a header without origin and its task as a
// "user" message (apps/cli/tests/profiles/headless/tests/expected/
// headless-profile/session.expected.jsonl), so it is interactive here; title
// generation and compaction write into the session they serve
// (packages/session/session-title-llm/src/index.ts appends
// session/title-llm-request to request.session), not into sessions of
// their own.
type Kind uint8

// The kinds.
const (
	// KindInteractive: a person typed in it.
	KindInteractive Kind = iota
	// KindSubagent: a subagent child (origin "subagent", a delegation
	// depth above 0, or a subagent/descriptor in its log).
	KindSubagent
	// KindAutomation: started by a webhook delivery.
	KindAutomation
	// KindNoPrompt: no prompt at all yet: blank, or written by plugins
	// alone (the helper sessions other tools keep for titles or
	// compaction look like this).
	KindNoPrompt
)

// String names the kind as docs/sessions.md does.
func (k Kind) String() string {
	switch k {
	case KindInteractive:
		return "interactive"
	case KindSubagent:
		return "subagent child"
	case KindAutomation:
		return "automation"
	case KindNoPrompt:
		return "no prompt"
	}
	return "unknown"
}

// Hidden reports whether completion leaves sessions of kind k out unless
// it is asked to show them.
func (k Kind) Hidden() bool { return k != KindInteractive }

// originSubagent is the one origin dsh writes (SessionHeader.origin).
const originSubagent = "subagent"

// Kind classifies the session; it reads fields the index filled once, as
// it read the log.
func (e *Entry) Kind() Kind {
	switch {
	case e.Origin == originSubagent || e.DelegationDepth > 0 || e.Described:
		return KindSubagent
	case e.Prompt == PromptPerson:
		return KindInteractive
	case e.Prompt == PromptWebhook:
		return KindAutomation
	}
	return KindNoPrompt
}

// IsSubagent reports whether the session is a subagent child: what its
// parent relation means in a hover ("child of", not "forked from").
func (e *Entry) IsSubagent() bool { return e.Kind() == KindSubagent }

// Prompt is where a log's first prompt came from: the first user message
// that is a person's or a webhook's decides, and later ones change nothing.
type Prompt uint8

// The prompts.
const (
	// PromptNone: no such message read yet.
	PromptNone Prompt = iota
	// PromptPerson: a person's prompt came first.
	PromptPerson
	// PromptWebhook: a webhook delivery came first.
	PromptWebhook
)

// sourceWebhook is the source kind of a webhook's message (v4), and the
// plugin name of its v0–v3 {kind:"plugin"} source.
const sourceWebhook = "webhook"

// promptOf says whose prompt a user/message or steering/message line is:
// PromptNone when it is neither a person's nor a webhook's (injected
// context), or when it does not decode. Only lines up to a log's first
// prompt are decoded: one or two per session.
func promptOf(line []byte, v4 bool) Prompt {
	var e struct {
		Data messageSources `json:"data"`
	}
	if json.Unmarshal(line, &e) != nil {
		return PromptNone
	}
	src := e.Data.Source
	if e.Data.Message != nil { // the v0 wrapper, and steering's {turn, message}
		src = e.Data.Message.Source
	}
	kind, plugin := sourceUser, ""
	if v4 {
		kind = "" // v4 keeps only messages that say they are the user's
	}
	if src != nil {
		kind, plugin = src.Kind, src.Plugin
	}
	return promptFromSource(kind, plugin, v4)
}

// promptFromSource says whose prompt a message of source kind and plugin
// is (kind "user" without a source in v0–v3).
func promptFromSource(kind, plugin string, v4 bool) Prompt {
	switch {
	case kind == sourceUser:
		return PromptPerson
	case kind == sourceWebhook && v4, kind == sourcePlugin && plugin == sourceWebhook && !v4:
		return PromptWebhook
	}
	return PromptNone
}

// messageSources is the part of a message's data promptOf reads: its
// source, directly or in the v0 message wrapper. Content is not decoded.
type messageSources struct {
	Source  *messageSource `json:"source"`
	Message *struct {
		Source *messageSource `json:"source"`
	} `json:"message"`
}
