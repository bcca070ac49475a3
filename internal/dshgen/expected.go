package dshgen

// This file computes what a correct reader must find in a generated log. It
// is deliberately small and independent of how lines are serialised: the
// builder feeds it the meaning of each event as it emits it.

// Message is one entry of a projected conversation (SPEC §2.3.3).
type Message struct {
	Role string `json:"role"`
	Text string `json:"text"`
}

// Expected are the facts a reader must derive from a generated session.
type Expected struct {
	// ID, Cwd (when HasCwd), CreatedAt, ParentSession, Origin and
	// DelegationDepth are the header fields (§1.3).
	ID              string
	Cwd             string
	HasCwd          bool
	CreatedAt       int64
	ParentSession   string
	Origin          string
	DelegationDepth int
	// Version is the header version (the format version of the log).
	Version int
	// Title is the last session/title in log order; HasTitle says there is one.
	Title    string
	HasTitle bool
	// DescriptorLabel is the label of the last version-2 subagent descriptor.
	DescriptorLabel string
	// Label is Title, or the id without a title (§2.2).
	Label string
	// DisplayTitle is DescriptorLabel, or Label without one (§2.2).
	DisplayTitle string
	// LastSeq is the seq of the last event in the log, -1 when it has none:
	// what the title index reports.
	LastSeq int64
	// Closers is how many synthetic closers a reader appends because the
	// log ends inside a turn (SPEC §1.7); CloserOutcomes are the error codes
	// of the synthetic tool results among them, in order.
	Closers        int
	CloserOutcomes []string
	// Conversation is the projection of §2.3.3 of the folded surface.
	Conversation []Message
	// Compacted says a compaction checkpoint is in the conversation.
	Compacted bool
	// Preparable says dsh/prepare must succeed on this log; false for
	// versions above 3 and for corrupt logs.
	Preparable bool
	// Refusal, when not empty, is text the READ_FAILED message of a v4 log
	// dsh refuses must contain (the rule it breaks, §1.7).
	Refusal string
	// Path is the log file the facts describe, once written.
	Path string
	// WorkDir is the cwd of the last working-directory/change, "" when the
	// log has none: the session's effective working directory (dsh 0.2.1).
	WorkDir string
}

// CapturedThroughSeq is what §1.6 reports: the seq of the last closer, or
// of the last event without closers; nil for an empty log.
func (e Expected) CapturedThroughSeq() *int64 {
	if e.LastSeq < 0 && e.Closers == 0 {
		return nil
	}
	seq := e.LastSeq + int64(e.Closers)
	return &seq
}

// surfaceItem is one entry of the folded surface (§1.6).
type surfaceItem struct {
	seq int64
	// kept says projection keeps the item (given non-empty text).
	kept       bool
	role       string
	text       string
	checkpoint bool
}

// projection folds surface events and remembers title facts.
type projection struct {
	surface         []surfaceItem
	title           string
	hasTitle        bool
	descriptorLabel string
}

// appendItem applies an "append" surface op.
func (p *projection) appendItem(it surfaceItem) { p.surface = append(p.surface, it) }

// replaceItems applies a replace op: start and end are located by their
// position in the current surface, and the whole range becomes it.
func (p *projection) replaceItems(start, end int64, it surfaceItem) bool {
	i, j := p.position(start), p.position(end)
	if i < 0 || j < 0 || i > j {
		return false
	}
	next := make([]surfaceItem, 0, len(p.surface)-(j-i))
	next = append(next, p.surface[:i]...)
	next = append(next, it)
	next = append(next, p.surface[j+1:]...)
	p.surface = next
	return true
}

// position is the index in the surface of the item put there by seq, or -1.
func (p *projection) position(seq int64) int {
	for i, it := range p.surface {
		if it.seq == seq {
			return i
		}
	}
	return -1
}

// conversation projects the surface (§2.3.3).
func (p *projection) conversation() ([]Message, bool) {
	out := []Message{}
	compacted := false
	for _, it := range p.surface {
		if !it.kept || it.text == "" {
			continue
		}
		if it.checkpoint {
			compacted = true
		}
		out = append(out, Message{Role: it.role, Text: it.text})
	}
	return out, compacted
}
