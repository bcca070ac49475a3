package prepare

import (
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/dsh-refls/dsh-refls/sessionref"
	"github.com/dsh-refls/dsh-refls/sessionref/dshlog"
	"github.com/dsh-refls/dsh-refls/sessionref/internal/jsjson"
)

// Budget constants of §2.3.5.
const (
	// DefaultReferenceBytes is the per-source budget without other settings,
	// and the floor of the context-window formula.
	DefaultReferenceBytes = 65536
	// DefaultReferenceContextFraction is the share of the context window one
	// source may take.
	DefaultReferenceContextFraction = 0.2
	// bytesPerToken converts a context window in tokens to bytes.
	bytesPerToken = 4
)

// Budget returns the per-source byte budget of §2.3.5.
func Budget(lim Limits) int {
	if lim.MaxReferenceBytes > 0 {
		return lim.MaxReferenceBytes
	}
	if lim.ContextWindow > 0 {
		fraction := lim.ReferenceContextFraction
		if fraction <= 0 {
			fraction = DefaultReferenceContextFraction
		}
		return max(DefaultReferenceBytes, int(float64(lim.ContextWindow)*bytesPerToken*fraction))
	}
	return DefaultReferenceBytes
}

// Turn is one message of a projected conversation.
type Turn struct {
	Role string `json:"role"`
	Text string `json:"text"`
}

// snapshotData is the data object of §2.3.4; field order is the contract's.
type snapshotData struct {
	SessionID          string  `json:"sessionId"`
	Label              string  `json:"label"`
	Cwd                *string `json:"cwd"`
	CapturedThroughSeq *int64  `json:"capturedThroughSeq"`
	Conversation       []Turn  `json:"conversation"`
}

// projectedMessage is one kept message with its original text.
type projectedMessage struct {
	role       string
	original   string
	checkpoint bool
}

// project turns the projected messages of a read into the messages
// retention works on.
func project(msgs []dshlog.ProjectedMessage) []projectedMessage {
	out := make([]projectedMessage, len(msgs))
	for i, m := range msgs {
		out[i] = projectedMessage{role: m.Role, original: m.Text, checkpoint: m.Checkpoint}
	}
	return out
}

// retained is a message during retention.
type retained struct {
	projectedMessage
	text string
	size int // bytes of its tag-safe {"role","text"} object
	cut  int // original bytes not kept
}

// retentionResult is a bounded snapshot of one source.
type retentionResult struct {
	data  snapshotData
	stats Stats
	size  int
}

// retain bounds one source to budget bytes of tag-safe JSON (§2.3.6–7), as
// dsh's retainReferencedSession does (packages/context/session-reference/
// src/projection.ts): texts are JavaScript strings in WTF-8 (see sessionref/internal/jsjson/text.go),
// sized as JSON.stringify writes them and cut on their UTF-8 bytes.
func retain(head snapshotData, msgs []projectedMessage, budget int) (retentionResult, error) {
	base := snapshotHeadSize(head)
	items := make([]retained, len(msgs))
	total := base
	for i, m := range msgs {
		items[i] = retained{projectedMessage: m, text: m.original, size: turnSize(m.role, m.original)}
		total += items[i].size
	}
	size := func() int {
		if len(items) == 0 {
			return base
		}
		return total + len(items) - 1 // commas between items
	}
	stats := Stats{OriginalMessages: len(msgs)}
	for _, m := range msgs {
		stats.Compacted = stats.Compacted || m.checkpoint
	}
	// (a) Drop the oldest messages that are neither checkpoints nor the
	// newest, in one pass: dropping never makes another message droppable.
	droppedBytes := 0
	kept := items[:0]
	for i := range items {
		if size() > budget && i < len(msgs)-1 && !items[i].checkpoint {
			stats.OmittedMessages++
			droppedBytes += len(items[i].original)
			total -= items[i].size + 1 // its object and one comma
			continue
		}
		kept = append(kept, items[i])
	}
	items = kept
	// size() counts len(items)-1 commas; total must not count them twice.
	total = base
	for _, it := range items {
		total += it.size
	}
	// (b) Shorten the longest text until the source fits. A cut that finds
	// no head and tail small enough empties the text (every byte omitted)
	// and retention goes on with the next longest; only an empty longest
	// text, or a cut that changes nothing, fails the source.
	for size() > budget {
		i := longestText(items)
		if i < 0 || items[i].text == "" {
			return retentionResult{}, budgetError(head.SessionID, budget)
		}
		target := max(0, len(items[i].text)-(size()-budget))
		text, cut := cutText(items[i].original, target)
		if text == items[i].text {
			return retentionResult{}, budgetError(head.SessionID, budget)
		}
		newSize := turnSize(items[i].role, text)
		total += newSize - items[i].size
		items[i].text, items[i].size, items[i].cut = text, newSize, cut
	}
	conv := make([]Turn, len(items))
	cutBytes := 0
	for i, it := range items {
		conv[i] = Turn{Role: it.role, Text: it.text}
		cutBytes += it.cut
	}
	head.Conversation = conv
	stats.RetainedMessages = len(items)
	stats.OmittedBytes = int64(droppedBytes + cutBytes)
	stats.Truncated = stats.OmittedMessages > 0 || stats.OmittedBytes > 0
	return retentionResult{data: head, stats: stats, size: size()}, nil
}

func budgetError(id string, budget int) *sessionref.Error {
	return &sessionref.Error{Code: sessionref.CodeBudgetExceeded, SessionID: id,
		Message: fmt.Sprintf("session %s cannot be recalled within %d bytes, even with every message shortened", id, budget)}
}

// longestText is the message with the longest current text, the first on
// ties, or -1 when there is none.
func longestText(items []retained) int {
	best := -1
	for i := range items {
		if best < 0 || len(items[i].text) > len(items[best].text) {
			best = i
		}
	}
	return best
}

// omissionMarker is appended, exactly, to every shortened text (§2.3.6).
func omissionMarker(omitted int) string {
	return "\n[… omitted " + strconv.Itoa(omitted) + " UTF-8 bytes …]"
}

// cutText is dsh's truncateWithNotice: it keeps the head and tail of
// original within target bytes, marker included, for the largest kept count
// r in [0, target] whose result fits, found by the same binary search. The
// cut is made on the UTF-8 bytes (a lone surrogate counts as U+FFFD's three)
// and what is kept reads back as TextDecoder gives it, lone surrogates as
// U+FFFD. When no r fits, the text is empty and every byte is omitted. It
// returns the text and the original bytes not kept.
//
// dsh's TextDecoder also drops a U+FEFF at the start of the kept head or
// tail while still counting it as kept; that miscount is not reproduced
// here (docs/reliability.md).
func cutText(original string, target int) (string, int) {
	if len(original) <= target {
		return original, 0
	}
	text, omitted := "", len(original)
	lo, hi := 0, target
	for lo <= hi {
		r := (lo + hi) / 2
		head := trimPartialTail(original[:(r+1)/2])
		tail := trimLeadingContinuation(original[len(original)-r/2:])
		n := len(original) - len(head) - len(tail)
		candidate := jsjson.WellFormed(head) + jsjson.WellFormed(tail) + omissionMarker(n)
		if len(candidate) <= target {
			text, omitted = candidate, n
			lo = r + 1
		} else {
			hi = r - 1
		}
	}
	return text, omitted
}

// trimPartialTail drops a UTF-8 sequence cut off at the end of s.
func trimPartialTail(s string) string {
	for back := 1; back <= utf8.UTFMax && back <= len(s); back++ {
		c := s[len(s)-back]
		if c < 0x80 {
			return s // ASCII: complete
		}
		if c >= 0xC0 { // a leading byte: is its sequence complete?
			need := 2
			switch {
			case c >= 0xF0:
				need = 4
			case c >= 0xE0:
				need = 3
			}
			if back < need {
				return s[:len(s)-back]
			}
			return s
		}
	}
	return s
}

// trimLeadingContinuation drops UTF-8 continuation bytes at the start of s.
func trimLeadingContinuation(s string) string {
	i := 0
	for i < len(s) && s[i]&0xC0 == 0x80 {
		i++
	}
	return s[i:]
}
