package recall

import (
	"encoding/binary"
	"math/bits"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// A query word holds no white space, so it occurs in a session exactly
// when it is a substring of one of the session's tokens: the maximal runs
// of folded text without white space (unicode.IsSpace, as the query is
// split; folding never turns a non-space rune into a space). The index
// therefore keeps a dictionary of every token up to maxTokenBytes and, per
// token, the sessions holding it: a word's sessions are the union of the
// postings of the dictionary tokens containing it, found by scanning the
// dictionary, with no text read. Conversation text has few distinct tokens
// (dshgen's 10,000-session store: about 1,100 in 400 sessions, 300 per
// session), so the scan takes microseconds where the trigram postings left
// nearly every session to be read: in dshgen text every trigram is in every
// session, and a word whose trigrams are all common but which is itself
// rare made a search decode whole sessions (p99 46 ms in-process on the
// 300-session store, 68 ms for one query).
//
// Longer tokens (paths, URLs, CJK text, which has no spaces) are not in
// the dictionary: their trigrams are posted instead, for the sessions
// holding any (doc.long), and a word found that way is checked in the
// session's text. Phrases with spaces are checked in the text too, after
// each of their pieces passed the dictionary.
const maxTokenBytes = 64

// tokenSet collects the distinct tokens of one session. It is the hot
// loop of a build (every byte of every log's text passes through it), so
// it finds the end of a token by a table of byte classes, hashes it eight
// bytes at a time, and keeps the tokens in an open-addressing table of
// its own over one byte arena: a repeated token of up to eight bytes
// costs one probe and no byte comparison. A Go map keyed by the token
// string took 46% of a build's CPU (CPU profile of a build of a
// 1,000-session, 300 MB dshgen store); on 10 MB of its text, thread CPU,
// tokenising took 7.9 CPU-s per GB with the map, 3.1-3.6 with this table.
type tokenSet struct {
	// slots has a power-of-two length; a slot with n == 0 is empty.
	slots []tokenSlot
	used  int
	arena []byte
	// long is set when a token longer than maxTokenBytes was seen.
	long bool
}

// tokenSlot is one distinct token: arena[off:off+n], its hash and its
// first eight bytes (zero padded), which decide tokens of up to eight.
type tokenSlot struct {
	head uint64
	hash uint32
	n    uint32
	off  int
}

// Byte classes of folded text: part of a token, ASCII white space, or
// the first byte of a rune that is not ASCII (white space or not).
const (
	classToken = iota
	classSpace
	classRune
)

// byteClass is the class of every byte value.
var byteClass = func() (t [256]uint8) {
	for c := utf8.RuneSelf; c < 256; c++ {
		t[c] = classRune
	}
	for _, c := range []byte{' ', '\t', '\n', '\v', '\f', '\r'} {
		t[c] = classSpace
	}
	return t
}()

func newTokenSet() *tokenSet { return &tokenSet{slots: make([]tokenSlot, 1024)} }

func (ts *tokenSet) reset() {
	if len(ts.slots) > 1<<16 && ts.used < len(ts.slots)/16 {
		ts.slots = make([]tokenSlot, 1024) // a huge session once: not kept for every next one
	} else {
		clear(ts.slots)
	}
	ts.used, ts.arena, ts.long = 0, ts.arena[:0], false
	if cap(ts.arena) > 1<<20 {
		ts.arena = nil
	}
}

// add splits folded, the folding of one message, into tokens; those longer
// than maxTokenBytes go to gs as trigrams instead.
func (ts *tokenSet) add(folded []byte, gs *gramSet) {
	n := len(folded)
	for i := 0; i < n; {
		switch byteClass[folded[i]] {
		case classSpace:
			i++
			continue
		case classRune:
			if k := spaceAt(folded, i); k > 0 {
				i += k
				continue
			}
		}
		start := i
		for i < n {
			if i+8 <= n {
				// Eight bytes at a time: the first byte below 0x21 (ASCII
				// white space is) or not ASCII ends the plain run.
				x := binary.LittleEndian.Uint64(folded[i:])
				if m := ((x-0x2121212121212121)&^x | x) & 0x8080808080808080; m == 0 {
					i += 8
					continue
				} else {
					i += bits.TrailingZeros64(m) / 8
				}
			}
			cl := byteClass[folded[i]]
			if cl == classToken {
				i++
				continue
			}
			if cl == classSpace {
				break
			}
			r, sz := utf8.DecodeRune(folded[i:])
			if r != utf8.RuneError && unicode.IsSpace(r) {
				break
			}
			i += sz
		}
		if tok := folded[start:i]; len(tok) > maxTokenBytes {
			ts.long = true
			gs.add(tok)
		} else {
			ts.insert(tok)
		}
	}
}

// headOf returns the first eight bytes of tok, zero padded, little endian.
func headOf(tok []byte) uint64 {
	if len(tok) >= 8 {
		return binary.LittleEndian.Uint64(tok)
	}
	var h uint64
	for k := len(tok) - 1; k >= 0; k-- {
		h = h<<8 | uint64(tok[k])
	}
	return h
}

// hashOf hashes tok, whose head is head, eight bytes at a time.
func hashOf(tok []byte, head uint64) uint32 {
	const m = 0x9e3779b97f4a7c15
	h := (head ^ uint64(len(tok))) * m
	for k := 8; k < len(tok); k += 8 {
		h = (h ^ headOf(tok[k:])) * m
	}
	return uint32(h >> 32)
}

// insert adds tok unless it is in the set.
func (ts *tokenSet) insert(tok []byte) {
	head := headOf(tok)
	h := hashOf(tok, head)
	mask := uint32(len(ts.slots) - 1)
	for j := h & mask; ; j = (j + 1) & mask {
		sl := &ts.slots[j]
		if sl.n == 0 {
			*sl = tokenSlot{head: head, hash: h, n: uint32(len(tok)), off: len(ts.arena)}
			ts.arena = append(ts.arena, tok...)
			if ts.used++; ts.used*2 > len(ts.slots) {
				ts.grow()
			}
			return
		}
		if sl.hash == h && sl.head == head && int(sl.n) == len(tok) &&
			(len(tok) <= 8 || string(ts.arena[sl.off+8:sl.off+int(sl.n)]) == string(tok[8:])) {
			return
		}
	}
}

// grow doubles the table.
func (ts *tokenSet) grow() {
	old := ts.slots
	ts.slots = make([]tokenSlot, 2*len(old))
	mask := uint32(len(ts.slots) - 1)
	for _, sl := range old {
		if sl.n == 0 {
			continue
		}
		j := sl.hash & mask
		for ts.slots[j].n != 0 {
			j = (j + 1) & mask
		}
		ts.slots[j] = sl
	}
}

// tokens returns the distinct tokens of the set, in no order, as slices
// of one string.
func (ts *tokenSet) tokens() []string {
	all := string(ts.arena)
	out := make([]string, 0, ts.used)
	for _, sl := range ts.slots {
		if sl.n != 0 {
			out = append(out, all[sl.off:sl.off+int(sl.n)])
		}
	}
	return out
}

// spaceAt returns the length of the white-space rune at s[i], 0 when it is
// not one.
func spaceAt(s []byte, i int) int {
	c := s[i]
	if c < utf8.RuneSelf {
		if c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r' {
			return 1
		}
		return 0
	}
	r, n := utf8.DecodeRune(s[i:])
	if r != utf8.RuneError && unicode.IsSpace(r) {
		return n
	}
	return 0
}

// dictionary maps tokens to ids; ids only grow, and the token of an id
// never changes, so a view reads a prefix of the list while a sync appends.
// The projecting goroutines look their tokens up themselves (idsOfSet),
// under mu: handing each session's tokens to the collecting goroutine as
// strings copied them, 0.43 GB of a first build's 3.5 GB of allocations at
// 100,000 sessions.
type dictionary struct {
	mu     sync.RWMutex // guards ids and the growth of tokens
	ids    map[string]uint32
	tokens []string
}

func newDictionary() *dictionary { return &dictionary{ids: map[string]uint32{}} }

// idsOfSet returns the sorted ids of the tokens of ts, adding the new ones.
// It may be called from several goroutines at once.
func (d *dictionary) idsOfSet(ts *tokenSet) []uint32 {
	out := make([]uint32, 0, ts.used)
	var missing []tokenSlot
	d.mu.RLock()
	for _, sl := range ts.slots {
		if sl.n == 0 {
			continue
		}
		if id, ok := d.ids[string(ts.arena[sl.off:sl.off+int(sl.n)])]; ok {
			out = append(out, id)
		} else {
			missing = append(missing, sl)
		}
	}
	d.mu.RUnlock()
	if len(missing) > 0 {
		d.mu.Lock()
		for _, sl := range missing {
			t := ts.arena[sl.off : sl.off+int(sl.n)]
			id, ok := d.ids[string(t)]
			if !ok {
				id = uint32(len(d.tokens))
				s := string(t)
				d.ids[s] = id
				d.tokens = append(d.tokens, s)
			}
			out = append(out, id)
		}
		d.mu.Unlock()
	}
	slices.Sort(out)
	return out
}

// list returns the tokens so far, the token of id at index id.
func (d *dictionary) list() []string {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return d.tokens
}

// containing returns the ids of the tokens of dict that hold piece.
func containing(dict []string, piece string) []uint32 {
	var out []uint32
	for i, t := range dict {
		if len(t) >= len(piece) && strings.Contains(t, piece) {
			out = append(out, uint32(i))
		}
	}
	return out
}

// intersects reports whether two sorted id lists share an id.
func intersects(a, b []uint32) bool {
	for i, j := 0, 0; i < len(a) && j < len(b); {
		switch {
		case a[i] == b[j]:
			return true
		case a[i] < b[j]:
			i++
		default:
			j++
		}
	}
	return false
}
