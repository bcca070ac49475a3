package dshlog

import "github.com/dsh-refls/dsh-refls/sessionref/dshlog/layout"

// Entry is what the title index knows about one session. It never holds
// message bodies.
type Entry struct {
	ID     string
	Cwd    string
	HasCwd bool
	// HasTitle is false when the log has no session/title (Title is then
	// ""). It sits beside HasCwd so the two flags share one word.
	HasTitle bool
	// Prompt is where the log's first prompt came from (kind.go); with
	// Seeded and Described it decides Kind, and the three share HasCwd's
	// word.
	Prompt Prompt
	// Seeded says the log starts with events inherited from ParentSession
	// (header isSeeded, or a v0/v1 seedLength above 0): a fork.
	Seeded bool
	// Described says the log holds a subagent/descriptor, which dsh writes
	// only in a subagent child.
	Described       bool
	CreatedAt       int64
	ParentSession   string
	Origin          string
	DelegationDepth int
	FormatVersion   int
	// Title is the latest session/title.
	Title string
	// DescriptorLabel is the display title the log's own descriptors give:
	// the label of the last version-2 subagent/descriptor (v0–v3), or of a
	// last descriptor of version 3 (v4).
	DescriptorLabel string
	// CatalogLabel is the label the parent's subagent/catalog records for
	// this session, when the parent is indexed; it is the display title
	// when the log's own descriptors give none (SPEC §1.7).
	CatalogLabel string
	// ChildLabels are the labels this session's subagent/catalog events
	// record for its children, by child id. Never modified in place.
	ChildLabels map[string]string
	// UnknownEvents counts events of a v4 log whose type is outside the
	// v4 vocabulary; they are skipped.
	UnknownEvents int
	Path          string
	Encoding      layout.Encoding
	Generation    int
	// Offset is how far the log has been read: a byte offset for raw logs,
	// the compressed byte offset of the next unread frame for zstd logs.
	Offset int64
	// LastSeq is the seq of the last event seen, -1 when there is none.
	LastSeq int64
	// LastEventAt is the "time" (Unix ms) of the newest event line read,
	// 0 when none carried one: when the session was last active.
	LastEventAt int64
	// Corrupt records why the log cannot be prepared, when it cannot.
	Corrupt string
	// WorkDir is the cwd of the log's last working-directory/change, ""
	// when it has none: dsh 0.2.1's effective working directory, while Cwd
	// stays the header's, the directory the session started in
	// (packages/session/working-directory/src/index.ts at
	// zq0929/deepseek-harness@5593cc250aae228449197efd2413192165e3377f).
	WorkDir string
}

// EffectiveCwd is the directory the session works in now: WorkDir when the
// log changed directory, else the header's cwd. Candidates group and mark
// sessions of the workspace by it (SPEC §2.2).
func (e *Entry) EffectiveCwd() (string, bool) {
	if e.WorkDir != "" {
		return e.WorkDir, true
	}
	return e.Cwd, e.HasCwd
}

// Label is the latest title or, without one, the id.
func (e Entry) Label() string {
	if e.HasTitle {
		return e.Title
	}
	return e.ID
}

// DisplayTitle is the descriptor label or, without one, the label the
// parent's catalog records, or else Label.
func (e Entry) DisplayTitle() string {
	if e.DescriptorLabel != "" {
		return e.DescriptorLabel
	}
	if e.CatalogLabel != "" {
		return e.CatalogLabel
	}
	return e.Label()
}

// Skipped is a session or file the index left out, with the reason.
type Skipped struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// FormatStatus classifies the generation read as dsh 0.2.1's listings do
// (SessionPersistenceSnapshot.formatStatus, set from the selected
// generation's header: packages/session/session-persistence-jsonl/src/
// index.ts at zq0929/deepseek-harness@5593cc250aae228449197efd2413192165e3377f):
// "current" for format v4, "migration-required" for an older one that a
// write open would migrate, "" for a newer one, which dsh does not list.
func (e Entry) FormatStatus() string {
	switch {
	case e.FormatVersion == MaxReadableVersion:
		return "current"
	case e.FormatVersion < MaxReadableVersion:
		return "migration-required"
	}
	return ""
}
