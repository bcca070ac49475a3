package lspwire

import "time"

// drainTimeout bounds how long the server waits, after the client closed
// its end, for in-flight requests to answer: long enough for any prepare,
// short enough that a stuck handler cannot keep the process alive.
const drainTimeout = 30 * time.Second

// Limits of the frame reader.
const (
	// MaxMessageBytes is the largest frame body the server reads. A body
	// above it is skipped without being held in memory: the request is
	// answered with InvalidRequest and the connection continues. 64 MiB is
	// far above any document an editor opens for @-mentions and keeps one
	// hostile frame from costing more than that in memory.
	MaxMessageBytes = 64 << 20
	// maxHeaderLineBytes bounds one header line. LSP sends two short
	// fields; a longer line means the input is not LSP framing, and
	// reading on would buffer it whole.
	maxHeaderLineBytes = 4096
	// MaxHeaderLines bounds the fields of one header block, for the same
	// reason.
	MaxHeaderLines = 32
	// reuseBufferBytes is the largest body buffer kept between frames;
	// larger bodies get their own buffer, which the collector reclaims, so
	// one big didOpen does not pin its size for the rest of the session.
	reuseBufferBytes = 1 << 20
	// maxScannedIDBytes bounds the id recovered from a skipped frame; a
	// longer one is not an id a client would send.
	maxScannedIDBytes = 256
	// maxQuotedBytes bounds the bytes of bad input quoted in an error.
	maxQuotedBytes = 64
	// maxPendingCalls bounds the calls read and not yet answered. At the
	// bound the server stops reading until one is answered, so a client
	// that stops reading stdout blocks on its own writes instead of making
	// the server hold a goroutine and an answer for every request it keeps
	// sending. Requests run at most NumCPU at a time; 256 waiting is far
	// more than an editor has in flight.
	maxPendingCalls = 256
)
