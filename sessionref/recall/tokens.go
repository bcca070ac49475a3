package recall

import (
	"encoding/binary"
	"math/bits"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
	"unsafe"
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
	// short holds the ASCII tokens of up to eight bytes without a NUL
	// (most tokens of conversation text: 97% of dshgen's), each as its
	// head alone, which is the token; 0 is an empty slot. Its length is a
	// power of two; shortUsed counts the tokens in it.
	short     []uint64
	shortUsed int
	// long is set when a token longer than maxTokenBytes was seen.
	long bool

	// filter is the pair filter (pairs.go) of the block being built, as
	// words, and one spare word past them where the tokens that do not
	// pair write; blockLong is set when the block holds a token longer
	// than maxTokenBytes; prevTail is the tail (edgeKeys) of the last
	// token of the message being tokenised, 0 when it is in no pair (a
	// token whose tail is 0 ends in NULs, which no query holds), and gap
	// what followed it (gapBroken...).
	filter    []uint64
	words     int
	blockLong bool
	prevTail  uint64
	gap       uint8

	// masks holds the white space of up to maskRuns runs of 64 bytes of
	// the text addASCII reads, as spaceMasks writes it.
	masks [2 * maskRuns]uint64
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

func newTokenSet() *tokenSet {
	ts := &tokenSet{slots: make([]tokenSlot, 1024), short: make([]uint64, 1024)}
	ts.startBlock(0)
	return ts
}

func (ts *tokenSet) reset() {
	if len(ts.slots) > 1<<16 && ts.used < len(ts.slots)/16 {
		ts.slots = make([]tokenSlot, 1024) // a huge session once: not kept for every next one
	} else {
		clear(ts.slots)
	}
	if len(ts.short) > 1<<16 && ts.shortUsed < len(ts.short)/16 {
		ts.short = make([]uint64, 1024)
	} else {
		clear(ts.short)
	}
	ts.used, ts.shortUsed, ts.arena, ts.long = 0, 0, ts.arena[:0], false
	if cap(ts.arena) > 1<<20 {
		ts.arena = nil
	}
	ts.blockLong, ts.gap = false, gapBroken
	ts.startBlock(0)
}

// startBlock starts the pair filter of a block of n bytes of text.
func (ts *tokenSet) startBlock(n int) {
	words := filterWords(n)
	if cap(ts.filter) > 1<<17 && words < cap(ts.filter)/16 {
		ts.filter = nil // one huge message is not kept for every next block
	}
	ts.filter = slices.Grow(ts.filter[:0], words+1)[:words+1]
	clear(ts.filter)
	ts.words, ts.blockLong = words, false
}

// startMessage starts the tokens of a new message: no pair spans two.
func (ts *tokenSet) startMessage() { ts.gap = gapBroken }

// sawLong records a token longer than maxTokenBytes.
func (ts *tokenSet) sawLong() { ts.long, ts.blockLong = true, true }

// appendFilter appends the pair filter of the block built since
// startBlock to dst, nothing when the block holds a long token.
func (ts *tokenSet) appendFilter(dst []byte) []byte {
	if ts.blockLong {
		return dst
	}
	for _, x := range ts.filter[:ts.words] {
		dst = binary.LittleEndian.AppendUint64(dst, x)
	}
	return dst
}

// addPair adds the pair of the tokens of keys a and b to the filter.
func (ts *tokenSet) addPair(a, b uint64) {
	p := pairOf(a, b)
	ts.filter[(p>>32)*uint64(ts.words)>>32] |= pairBits(p)
}

// endGap records what follows the last token of the text s, which did
// not run to its end, for the next text of the same message: pairAt is
// where a token would have paired with the last one (-1: none would; as
// pairStart gave it when s held no token).
func (ts *tokenSet) endGap(s []byte, pairAt int) {
	switch {
	case len(s) == 0:
	case pairAt == len(s):
		ts.gap = gapSpace
	default:
		ts.gap = gapBroken
	}
}

// add splits folded, the folding of one message, into tokens; those longer
// than maxTokenBytes go to gs as trigrams instead.
func (ts *tokenSet) add(folded []byte, gs *gramSet) {
	gap, prevTail := ts.gap, ts.prevTail
	if ts.addASCII(folded, gs) {
		return
	}
	// Not all ASCII: from the start again, rune by rune where needed
	// (adding the tokens found so far, and their pairs, again changes
	// nothing).
	ts.gap, ts.prevTail = gap, prevTail
	n := len(folded)
	pairAt := ts.pairStart(folded)
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
		var tail, head uint64
		in := false
		if tok := folded[start:i]; len(tok) > maxTokenBytes {
			ts.sawLong()
			gs.add(tok)
		} else {
			ts.insert(tok)
			tail, head, in = edgeKeys(tok)
		}
		if start == pairAt && in {
			ts.addPair(ts.prevTail, head)
		}
		ts.prevTail = tail
		if i == n {
			ts.gap = gapNone
			return
		}
		pairAt = -1
		if folded[i] == ' ' && in {
			pairAt = i + 1
		}
	}
	ts.endGap(folded, pairAt)
}

// addASCII is add for text that is all ASCII without a NUL, and reports
// whether it was: it stops at the first 4 KB (maskRuns) holding a byte
// that is not, having added some of the tokens. Conversation text is
// mostly ASCII, and add found every token end byte by byte through a
// table, a few unpredictable branches per token; here the white space of
// 64 bytes at a time becomes a bitmap (spaceMasks), each token is one run
// of zeros in it, and shortTokens adds the tokens of up to eight bytes
// of each 64 bytes, as one 64-bit word each (which holds no NUL, so it
// is the token). BenchmarkBuildStageTokens on dshgen text, one core:
// 59.4 M instructions per pass over 2 MB before the bitmap, 44.0 M after
// (callgrind, -26%); 4.8-5.9 CPU-s per GB before, 3.3-3.5 after, A/B in
// one run at load 7. Taking each run's token starts and ends as bits
// (asciiRun) and the short tokens in a loop without calls (shortTokens):
// 674.6 M instructions per BenchmarkBuildStageTokens pass before, 540.7 M
// after (-20%); 2.63-3.22 CPU-s per GB before (median 2.70), 2.40-2.71
// after (2.47), six turns each on one core.
func (ts *tokenSet) addASCII(s []byte, gs *gramSet) bool {
	n := len(s)
	// No token is being read yet; the first pairs with the last one before
	// s when pairStart says so.
	sc := asciiRun{tok: -1, want: uint64(ts.pairStart(s) + 1), prevTail: ts.prevTail}
	masks := &ts.masks
	for base, run, runs := 0, 0, 0; base < n; base, run = base+64, run+1 {
		if run == runs { // the masks of the next runs
			full := min(n-base, 64*maskRuns) &^ 63
			if !spaceMasks(s[base:base+full], masks[:]) {
				return false
			}
			run, runs = 0, full/64
			if full < 64*maskRuns && base+full < n { // and the last, short one
				sp, one, ascii := tailMasks(s[base+full:])
				if !ascii {
					return false
				}
				masks[2*runs], masks[2*runs+1] = sp, one
				runs++
			}
		}
		sc.begin(base, masks[2*run], masks[2*run+1])
		for {
			// Room for every token of the run (at most 32), so that
			// shortTokens need not grow the table.
			if (ts.shortUsed+32)*2 > len(ts.short) {
				ts.growShort()
			}
			ts.shortTokens(s, &sc)
			if sc.ends == 0 {
				break
			}
			// A token of more than eight bytes, or too near the end of
			// s to be read as one word: added here.
			e := base + bits.TrailingZeros64(sc.ends)
			tail, head, in := ts.addToken(s, sc.tok, e, gs)
			if uint64(sc.tok+1) == sc.want && in {
				ts.addPair(sc.prevTail, head)
			}
			sc.tok, sc.prevTail, sc.want = -1, tail, 0
			if e < n && s[e] == ' ' && in {
				sc.want = uint64(e + 2)
			}
			sc.ends &= sc.ends - 1
		}
		if sc.starts != 0 { // a token that goes on in the next 64 bytes
			sc.tok = base + bits.TrailingZeros64(sc.starts)
		}
	}
	if sc.tok >= 0 { // a token up to the end of 64 bytes that were the last
		tail, head, in := ts.addToken(s, sc.tok, n, gs)
		if uint64(sc.tok+1) == sc.want && in {
			ts.addPair(sc.prevTail, head)
		}
		ts.prevTail, ts.gap = tail, gapNone
		return true
	}
	ts.prevTail = sc.prevTail
	ts.endGap(s, int(sc.want)-1)
	return true
}

// asciiRun is where addASCII is in its text: the tokens of the run of 64
// bytes at base still to add, and what the last token added leaves to
// the next.
type asciiRun struct {
	base int
	// starts and ends have bit k set where a token starts at base+k or
	// ends before it (at white space); one has bit k set where a ' ' is.
	// Starts and ends alternate, so the lowest end closes the lowest
	// start, or tok, the token carried in from the run before.
	starts, ends, one uint64
	// tok is where the token being read starts, -1 between tokens. A
	// token starting at want-1 pairs with the one before it, whose tail
	// is prevTail (pairs.go); want is 0 when none does.
	tok            int
	want, prevTail uint64
}

// begin sets r to the run of 64 bytes at base whose white space is sp
// (bit k: the byte at base+k is white space, or past the end) and whose
// spaces are one, carrying in the token being read.
func (r *asciiRun) begin(base int, sp, one uint64) {
	carried := uint64(r.tok)>>63 ^ 1 // 1: a token goes on from the run before
	after := ^sp<<1 | carried        // bit k: the byte before base+k is in a token
	r.base, r.starts, r.ends, r.one = base, ^sp&^after, sp&after, one
}

// shortTokens adds the tokens of r's run that end in it, up to the first
// that is longer than eight bytes or starts less than eight bytes before
// the end of s, which it leaves in r (r.tok and the lowest bit of
// r.ends); the table of short tokens must have room for all of them.
// Each is one 64-bit word, looked up in the table of short tokens right
// here, and its pair goes into the filter by masks rather than branches
// (which way they go is the text's choice). No call is made, so that the
// loop's state stays in registers: with the call for a longer token in
// the loop the compiler kept it on the stack, 15 instructions per token
// of loop alone.
func (ts *tokenSet) shortTokens(s []byte, r *asciiRun) {
	base, starts, ends, one, tok, want, prevTail := r.base, r.starts, r.ends, r.one, r.tok, r.want, r.prevTail
	filter, words := ts.filter, uint64(ts.words)
	short, used := ts.short, 0
	mask := uint64(len(short) - 1)
	last := len(s) - 8 // the last start a word can be read at
	for ; ends != 0; ends &= ends - 1 {
		if tok < 0 {
			tok = base + bits.TrailingZeros64(starts)
			starts &= starts - 1
		}
		off := bits.TrailingZeros64(ends)
		k := base + off - tok
		if k > 8 || tok > last {
			break
		}
		// No NUL: spaceMasks saw none.
		head := binary.LittleEndian.Uint64(s[tok:]) & lowBytes[k&15]
		for j := head * shortMul >> 32 & mask; ; j = (j + 1) & mask {
			if c := short[j]; c == head {
				break
			} else if c == 0 {
				short[j] = head
				used++
				break
			}
		}
		// The edges are edgeKeys'; the bits of a token that does not
		// pair go to the spare word past the filter.
		in := uint64(k+8-minPairToken) >> 3 // 1: k >= minPairToken
		p := pairOf(prevTail, head&(1<<(8*headBytes)-1))
		at := (p >> 32) * words >> 32
		pairs := -(in & eq(uint64(tok+1), want)) // all ones: it pairs
		filter[at&pairs|words&^pairs] |= pairBits(p)
		want = uint64(base+off+2) & -(one >> (off & 63) & in)
		tok, prevTail = -1, head // the whole token: its tail
	}
	ts.shortUsed += used
	r.starts, r.ends, r.tok, r.want, r.prevTail = starts, ends, tok, want, prevTail
}

// pairStart is where the first token of s must start to pair with the
// last token before s (pair): -1 when none may.
func (ts *tokenSet) pairStart(s []byte) int {
	switch {
	case ts.prevTail == 0:
	case ts.gap == gapSpace:
		return 0
	case ts.gap == gapNone && len(s) > 0 && s[0] == ' ':
		return 1
	}
	return -1
}

// eq is 1 when a == b, else 0.
func eq(a, b uint64) uint64 {
	x := a ^ b
	return ((x | -x) >> 63) ^ 1
}

// noNUL reports whether none of the low k bytes of head, a token of k
// bytes (k ≤ 8) padded with zeros, is NUL: the padding counts as not NUL.
func noNUL(head uint64, k int) bool {
	v := head | ^lowBytes[k&15]
	return (v-0x0101010101010101)&^v&0x8080808080808080 == 0
}

// lowBytes[k] has the low k bytes set, for k up to 8 (a table: the shifts
// by a variable took a sixth of addASCII's instructions).
var lowBytes = [16]uint64{0, 0xff, 0xffff, 0xffffff, 0xffffffff, 0xffffffffff, 0xffffffffffff, 0xffffffffffffff, 0xffffffffffffffff}

// addToken adds s[start:end], a token of ASCII text that addASCII did not
// add itself, to the set, or its trigrams to gs when it is longer than
// maxTokenBytes, and returns its edges for the pair filter (edgeKeys; in
// no pair when it is long: its block has no filter).
func (ts *tokenSet) addToken(s []byte, start, end int, gs *gramSet) (tail, head uint64, in bool) {
	tok := s[start:end]
	if len(tok) > maxTokenBytes {
		ts.sawLong()
		gs.add(tok)
		return 0, 0, false
	}
	ts.insert(tok)
	return edgeKeys(tok)
}

// insertShort adds the token whose head is key (no NUL, at most eight
// bytes: key is the token) unless it is in the set.
func (ts *tokenSet) insertShort(key uint64) {
	mask := uint64(len(ts.short) - 1)
	for j := shortSlot(key) & mask; ; j = (j + 1) & mask {
		switch ts.short[j] {
		case key:
			return
		case 0:
			ts.short[j] = key
			if ts.shortUsed++; ts.shortUsed*2 > len(ts.short) {
				ts.growShort()
			}
			return
		}
	}
}

// shortMul is the multiplier short tokens are hashed with.
const shortMul = 0x9e3779b97f4a7c15

// shortSlot hashes the key of a short token; its table takes the low bits.
func shortSlot(key uint64) uint64 { return key * shortMul >> 32 }

// growShort doubles the table of short tokens.
func (ts *tokenSet) growShort() {
	old := ts.short
	ts.short = make([]uint64, 2*len(old))
	mask := uint64(len(ts.short) - 1)
	for _, key := range old {
		if key == 0 {
			continue
		}
		j := shortSlot(key) & mask
		for ts.short[j] != 0 {
			j = (j + 1) & mask
		}
		ts.short[j] = key
	}
}

// shortToken writes the token of key to buf and returns it.
func shortToken(buf *[8]byte, key uint64) []byte {
	binary.LittleEndian.PutUint64(buf[:], key)
	return buf[:8-bits.LeadingZeros64(key)/8]
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
func (ts *tokenSet) insert(tok []byte) { ts.insertHead(tok, headOf(tok)) }

// insertHead is insert of tok whose head (headOf) is head. A token of up
// to eight bytes without a NUL goes to the table of short ones (a NUL
// would make its head that of a shorter token), whatever text it came
// from, so that no token is in both tables.
func (ts *tokenSet) insertHead(tok []byte, head uint64) {
	if len(tok) <= 8 {
		if noNUL(head, len(tok)) {
			ts.insertShort(head)
			return
		}
	}
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
	out := make([]string, 0, ts.used+ts.shortUsed)
	for _, sl := range ts.slots {
		if sl.n != 0 {
			out = append(out, all[sl.off:sl.off+int(sl.n)])
		}
	}
	var buf [8]byte
	for _, key := range ts.short {
		if key != 0 {
			out = append(out, string(shortToken(&buf, key)))
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
	ids    idTable
	tokens []string

	// joinMu guards joined and ends: the tokens from the first on, each
	// followed by a space (which no token and no query piece holds), and
	// the offset of each token's space, extended as views ask for more
	// (joinedOf). Bytes below the length handed out are never written
	// again.
	joinMu sync.Mutex
	joined []byte
	ends   []uint32
}

func newDictionary() *dictionary { return &dictionary{ids: newIDTable()} }

// idsOfSet returns the sorted ids of the tokens of ts, adding the new ones.
// It may be called from several goroutines at once.
func (d *dictionary) idsOfSet(ts *tokenSet) []uint32 { return d.appendIDsOfSet(nil, ts) }

// appendIDsOfSet is idsOfSet into the array of dst, which it empties
// first: a first build hands each session's ids back to its workers once
// they are posted.
func (d *dictionary) appendIDsOfSet(dst []uint32, ts *tokenSet) []uint32 {
	out := slices.Grow(dst[:0], ts.used+ts.shortUsed)
	var missing []tokenSlot
	var missingShort []uint64
	var buf [8]byte
	d.mu.RLock()
	for _, sl := range ts.slots {
		if sl.n == 0 {
			continue
		}
		if id, ok := d.ids.find(d.tokens, bytesView(ts.arena[sl.off:sl.off+int(sl.n)])); ok {
			out = append(out, id)
		} else {
			missing = append(missing, sl)
		}
	}
	for _, key := range ts.short {
		if key == 0 {
			continue
		}
		if id, ok := d.ids.find(d.tokens, bytesView(shortToken(&buf, key))); ok {
			out = append(out, id)
		} else {
			missingShort = append(missingShort, key)
		}
	}
	d.mu.RUnlock()
	if len(missing)+len(missingShort) > 0 {
		d.mu.Lock()
		for _, sl := range missing {
			out = append(out, d.idLocked(ts.arena[sl.off:sl.off+int(sl.n)]))
		}
		for _, key := range missingShort {
			out = append(out, d.idLocked(shortToken(&buf, key)))
		}
		d.mu.Unlock()
	}
	slices.Sort(out)
	return out
}

// idLocked returns the id of t, adding it; the caller holds mu.
func (d *dictionary) idLocked(t []byte) uint32 {
	id, ok := d.ids.find(d.tokens, bytesView(t))
	if !ok {
		id = uint32(len(d.tokens))
		d.tokens = append(d.tokens, string(t))
		d.ids.add(d.tokens, id)
	}
	return id
}

// bytesView is b as a string, without a copy: the bytes of b must not
// change while the string is used (a lookup, or joinedOf's bytes, which
// are never written again).
func bytesView(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// list returns the tokens so far, the token of id at index id.
func (d *dictionary) list() []string {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return d.tokens
}

// containing returns the ids of the tokens of dict, a view's tokens of d
// (nil: a view of no dictionary), that hold piece (at a word start, with
// wordStart). A piece holds no white space, so it is searched for in the
// joined tokens (joinedOf) by its two rarest bytes, as in a block's text
// (finder), and each hit names its token: scanning the tokens one by one
// took 15 ns each, 14.7 ms a word at 890,000 tokens, strings.Index over
// the joined tokens 5.3 ms (BenchmarkSearchVocabulary).
func (d *dictionary) containing(dict []string, piece string, wordStart bool) []uint32 {
	if d == nil || piece == "" || strings.ContainsFunc(piece, unicode.IsSpace) {
		return containingScan(dict, piece, wordStart)
	}
	text, ends := d.joinedOf(dict)
	var out []uint32
	id, find := 0, newFinder(piece)
	for at := 0; at < len(text); {
		k := find.index(text[at:], false)
		if k < 0 {
			break
		}
		hit := at + k
		for int(ends[id]) < hit {
			id++
		}
		start := 0
		if id > 0 {
			start = int(ends[id-1]) + 1
		}
		if !wordStart || containsAt(text[start:ends[id]], piece, true) {
			out = append(out, uint32(id))
		}
		at = int(ends[id]) + 1
		id++
	}
	return out
}

// containingScan is containing by a scan of every token.
func containingScan(dict []string, piece string, wordStart bool) []uint32 {
	var out []uint32
	for i, t := range dict {
		if len(t) >= len(piece) && containsAt(t, piece, wordStart) {
			out = append(out, uint32(i))
		}
	}
	return out
}

// joinedOf returns the tokens of dict, a prefix of d's tokens, each
// followed by a space, and the offset of each one's space, joining the
// tokens d has not joined yet.
func (d *dictionary) joinedOf(dict []string) (string, []uint32) {
	d.joinMu.Lock()
	defer d.joinMu.Unlock()
	for _, t := range dict[min(len(d.ends), len(dict)):] {
		d.joined = append(append(d.joined, t...), ' ')
		d.ends = append(d.ends, uint32(len(d.joined)-1))
	}
	n := 0
	if len(dict) > 0 {
		n = int(d.ends[len(dict)-1]) + 1
	}
	return bytesView(d.joined[:n]), d.ends[:len(dict):len(dict)]
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
