package jsjson

import (
	"unicode/utf8"
	"unsafe"
)

// Arena holds the message texts of one projection read, decoded into
// chunks that the next read writes over, instead of one new string per
// message: the recall index's first build reads every log of the store
// and drops each text once folded and stored, so per-message strings were
// most of what it allocated (2.0 of 2.73 GB at 100,000 sessions).
//
// A text decoded here is a string over the arena's bytes. It stays as it
// is until reset, which scrubs the bytes of the read before they are
// reused, so that a consumer that kept a text past its read sees zeros
// instead of another session's words (and its tests fail).
type Arena struct {
	// cur is the chunk being filled; full are the chunks this read filled
	// before it; spare are chunks of earlier reads, scrubbed.
	cur   []byte
	full  [][]byte
	spare [][]byte
}

const (
	// arenaChunk is the size of a chunk; a text longer than that gets a
	// buffer of its own, dropped at the next reset.
	arenaChunk = 64 << 10
	// arenaKeep is how many chunks a reset keeps for the next read: 1 MiB,
	// more than the text of nearly every session.
	arenaKeep = 16
)

// Reset makes the arena empty for the next read: every text it handed
// out is scrubbed, then its bytes are reused.
func (a *Arena) Reset() {
	if cap(a.cur) > 0 {
		a.full = append(a.full, a.cur)
	}
	a.cur = nil
	for i, c := range a.full {
		if cap(c) == arenaChunk && len(a.spare) < arenaKeep {
			clear(c)
			a.spare = append(a.spare, c[:0])
		}
		a.full[i] = nil
	}
	a.full = a.full[:0]
}

// Room returns an empty slice whose capacity holds at least n bytes, in
// the arena: append a text to it, then take it.
func (a *Arena) Room(n int) []byte {
	if cap(a.cur)-len(a.cur) < n {
		if cap(a.cur) > 0 {
			a.full = append(a.full, a.cur)
		}
		switch {
		case n > arenaChunk:
			a.cur = make([]byte, 0, n)
		case len(a.spare) > 0:
			a.cur = a.spare[len(a.spare)-1]
			a.spare = a.spare[:len(a.spare)-1]
		default:
			a.cur = make([]byte, 0, arenaChunk)
		}
	}
	return a.cur[len(a.cur):len(a.cur)]
}

// Take returns text, appended to a slice from room, as a string and
// marks its bytes used. A text that outgrew its room (it cannot: room is
// asked for the most a token decodes to) lies in a buffer of its own and
// is returned as it is.
func (a *Arena) Take(text []byte) string {
	if len(text) == 0 {
		return ""
	}
	end := len(a.cur) + len(text)
	if end <= cap(a.cur) && unsafe.SliceData(text) == unsafe.SliceData(a.cur[len(a.cur):end]) {
		a.cur = a.cur[:end]
	}
	return unsafe.String(unsafe.SliceData(text), len(text))
}

// decodedBound is the most bytes the body of a string token (quotes
// removed) decodes to: its length, an escape being longer than what it
// stands for, or three bytes per byte where it is not valid UTF-8 (each
// invalid byte may become U+FFFD).
func decodedBound(body []byte) int {
	if utf8.Valid(body) {
		return len(body)
	}
	return 3 * len(body)
}

// appendDecoded appends the text of a string token's body (stringBody),
// as DecodeText decodes it, to dst.
func appendDecoded(dst, body []byte) ([]byte, bool) {
	if utf8.Valid(body) {
		return appendUnescaped(dst, body, false)
	}
	return appendTextRunes(dst, body)
}

// Text is DecodeText into the arena.
func (a *Arena) Text(tok []byte) (string, bool) {
	body, ok := stringBody(tok)
	if !ok {
		return "", false
	}
	out, ok := appendDecoded(a.Room(decodedBound(body)), body)
	if !ok {
		return "", false
	}
	return a.Take(out), true
}

// Join is the text of the text tokens toks as joinTextBlocks joins them
// (decoded, "\n" between them, a token that does not decode skipped),
// into the arena.
func (a *Arena) Join(toks [][]byte) string {
	n := 0
	for _, t := range toks {
		if body, ok := stringBody(t); ok {
			n += decodedBound(body) + 1
		}
	}
	out := a.Room(n)
	first := true
	for _, t := range toks {
		body, ok := stringBody(t)
		if !ok {
			continue
		}
		mark := len(out)
		if !first {
			out = append(out, '\n')
		}
		if out, ok = appendDecoded(out, body); !ok {
			out = out[:mark]
			continue
		}
		first = false
	}
	return a.Take(out)
}
