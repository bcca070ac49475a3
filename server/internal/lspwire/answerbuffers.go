package lspwire

import (
	"sync"
	"unsafe"
)

// answerSlots is how many arrays AnswerBuffers lends at once: more calls
// encoded at the same moment get arrays of their own.
const answerSlots = 4

// KeptAnswerBytes is the largest array AnswerBuffers keeps for the next
// answer: one larger (a long completion list) goes with its answer, and
// the server streams a candidate list that large instead (server/encode.go).
const KeptAnswerBytes = 256 << 10

// AnswerBuffers lends the arrays the answers of typing (dsh/candidates,
// completion) are encoded into and takes each back once its answer is
// written (Stream.Write hands it to Hooks.Written) or dropped (a cancelled
// call): those answers, 17-31 KB each, were most of what a keystroke
// allocated, and the collections they caused were the slowest keystrokes
// of a 10,000-session store. It lends only arrays of its own slots and
// takes back only those: an answer's array is told by its address, so any
// other result passed to GiveBack is left alone. An array lent and never
// given back (an answer written in a batch) keeps its slot busy, and
// answers then get arrays of their own. The zero value is ready to use.
type AnswerBuffers struct {
	// mu guards slots.
	mu    sync.Mutex
	slots [answerSlots]answerSlot
}

type answerSlot struct {
	buf  []byte
	lent bool
}

// Get returns an empty array of at least size bytes and the slot that
// lent it, -1 when every slot is lent (the array is then the caller's).
// The caller encodes into it and hands the answer to Settle.
func (a *AnswerBuffers) Get(size int) (dst []byte, slot int) {
	if size > KeptAnswerBytes {
		return make([]byte, 0, size), -1
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for i := range a.slots {
		sl := &a.slots[i]
		if sl.lent {
			continue
		}
		if cap(sl.buf) < size {
			sl.buf = make([]byte, 0, max(size, 4<<10))
		}
		sl.lent = true
		return sl.buf[:0], i
	}
	return make([]byte, 0, size), -1
}

// Settle records the answer encoded into slot's array: GiveBack(answer)
// then frees the slot. An answer that outgrew the array is in an array of
// its own, which the slot takes instead unless it is larger than
// KeptAnswerBytes (the slot is then free at once); a nil answer (the
// encoding failed) frees the slot.
func (a *AnswerBuffers) Settle(slot int, answer []byte) {
	if slot < 0 {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	sl := &a.slots[slot]
	switch {
	case cap(answer) == 0:
		sl.lent = false
	case sameArray(answer, sl.buf):
	case cap(answer) > KeptAnswerBytes:
		sl.lent = false
	default:
		sl.buf = answer[:0]
	}
}

// GiveBack takes back the array of an answer that was written or dropped,
// when a slot lent it; any other array is left alone.
func (a *AnswerBuffers) GiveBack(answer []byte) {
	if cap(answer) == 0 {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for i := range a.slots {
		if sl := &a.slots[i]; sl.lent && sameArray(answer, sl.buf) {
			sl.lent = false
			return
		}
	}
}

// sameArray reports whether a and b begin at the same address.
func sameArray(a, b []byte) bool {
	return cap(a) > 0 && cap(b) > 0 && unsafe.SliceData(a[:cap(a)]) == unsafe.SliceData(b[:cap(b)])
}
