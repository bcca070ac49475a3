package prepare

import (
	"github.com/dsh-refls/dsh-refls/sessionref"
	"github.com/dsh-refls/dsh-refls/sessionref/dshlog"
)

// Stats are the recall facts of one source (§2.3.7).
type Stats struct {
	Compacted        bool  `json:"compacted"`
	OriginalMessages int   `json:"originalMessages"`
	RetainedMessages int   `json:"retainedMessages"`
	OmittedMessages  int   `json:"omittedMessages"`
	OmittedBytes     int64 `json:"omittedBytes"`
	Truncated        bool  `json:"truncated"`
}

// Limits are the preparation settings of §2.3 and §4.1.
type Limits struct {
	// MaxReferences caps distinct references; 0 means 3. Values above 3 are invalid.
	MaxReferences int
	// MaxReferenceBytes, when > 0, is the budget per source.
	MaxReferenceBytes int
	// ContextWindow, when > 0, is the client's context window in tokens.
	ContextWindow int
	// ReferenceContextFraction is the share of the context window; 0 means 0.2.
	ReferenceContextFraction float64
	// SpillDir is where full snapshots of truncated sources go; "" disables spilling.
	SpillDir string
	// RedactSecrets replaces recognised credentials in projected text by
	// "[redacted: <kind>]" before retention (internal/secrets, redaction.go). Off, the output is
	// dsh's byte for byte.
	RedactSecrets bool
}

// Mode says how mentions in the text are treated by PrepareText.
type Mode string

// The two modes of dsh/prepare.
const (
	ModeReplace  Mode = "replace"
	ModePreserve Mode = "preserve"
)

// Locator finds the log of a session by id at the moment of a request;
// the title index's *titles.Snapshot is one. The entry it returns is
// the session of that id.
type Locator interface {
	Locate(id string) (dshlog.Entry, bool)
}

// Preparation is the result of preparing references (§2.3).
type Preparation struct {
	// References are the normalised references, in mention order.
	References []sessionref.Reference
	// Context is the context message, nil when there were no references.
	Context *ContextMessage
}

// ContextMessage is the user message that carries the snapshot (§2.3.10).
type ContextMessage struct {
	Source  ContextSource  `json:"source"`
	Content []ContentBlock `json:"content"`
	Role    string         `json:"role"`
	ID      string         `json:"id"`
}

// ContextSource is the session-reference source of the context message.
type ContextSource struct {
	Kind       string           `json:"kind"`
	Form       string           `json:"form"`
	Version    int              `json:"version"`
	References []ReferenceFacts `json:"references"`
}

// ReferenceFacts are the per-source facts carried in the context message.
type ReferenceFacts struct {
	SessionID             string `json:"sessionId"`
	Label                 string `json:"label"`
	CapturedFormatVersion *int   `json:"capturedFormatVersion,omitempty"`
	CapturedThroughSeq    *int64 `json:"capturedThroughSeq"`
	Stats
	InputIndex int `json:"inputIndex"`
	// Redactions counts the secrets replaced in this source's projected
	// text; absent when redaction is off, 0 when it is on and found none.
	Redactions *int `json:"redactions,omitempty"`
}

// ContentBlock is one block of message content. Only text blocks are
// produced here; others pass through PrepareContent untouched.
type ContentBlock struct {
	Type string `json:"type"`
	Text string `json:"text"`
}
