package dshlog

// isKnownV4Type reports whether t is in the event vocabulary of format v4
// as dsh 0.2.1 knows it (packages/core/session/src/known-event-types.ts at
// zq0929/deepseek-harness@5593cc250aae228449197efd2413192165e3377f,
// KNOWN_SESSION_EVENT_TYPES). A v4 log may carry other types: dsh refuses a
// log holding one that is not marked ignorable; dsh-refls skips it, counts
// it, and refuses only when it carries a surfaceOp without being marked
// ignorable (SPEC §1.7), because
// then the surface cannot be folded.
func isKnownV4Type(t string) bool {
	switch t {
	case "agent-preset/selected", "agent/inbox/spliced", "approval/asked",
		"approval/decided", "approval/policy", "assistant/attempt",
		"assistant/message", "command/done", "command/run",
		"compaction/end", "compaction/prune", "compaction/start",
		"compaction/summary", "deliverables/presented", "developer/message",
		"feedback/message-delete", "feedback/message-put", "feedback/record",
		"goal/change", "hook/invoked", "hook/result",
		"image/offload", "llm/retry", "llm/retry-started",
		"model/selection", "permission/preset", "plan/mode",
		"request/context", "request/header", "sandbox/mode",
		"schedule/change", "session-log-deepseek/delivery-accepted", "session/end-seed",
		"session/title", "session/title-llm-request", "slots/dispatch",
		"step/end", "step/start", "subagent/catalog",
		"subagent/descriptor", "subagent/model-selection-policy", "system/message",
		"team/member", "team/message/delivered", "team/message/queued",
		"team/task", "todo/write", "tool-workflow/agent-end",
		"tool-workflow/agent-start", "tool-workflow/run-end", "tool-workflow/run-start",
		"tool/call", "tool/ptc-dispatch", "tool/ptc-dispatch-start",
		"tool/result", "turn/end", "turn/start",
		"user/message", "web/deepseek-search-llm-request", "working-directory/change",
		"workspace/changes":
		return true
	}
	return false
}
