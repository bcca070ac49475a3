package recall

import "sync"

// filterCacheSlots and filterSlotBytes size the filter cache: 1,024
// filters of up to 2 KiB (the filter of a block of up to 30 KB of text,
// filterWords), 2 MiB in all, allocated at the first filter kept.
const (
	filterCacheSlots = 1024
	filterSlotBytes  = 2 << 10
)

// filterCache keeps the pair filters (pairs.go) of the blocks that
// phrase searches read lately and that the filter spared: such a block is
// read only as far as its filter, and a phrase of common words reads many
// of them at every search (`"session poll"` at 10,000 sessions: 198, one
// pread and one checksum each). Kept in memory, in turns in one process
// on the stored 10,000-session index, that search took 1.21–1.24 ms of
// CPU at its median against 1.58–1.64 ms reading them.
//
// Its slots are fixed and replaced by the clock algorithm: a filter asked
// for again since the hand last passed it stays one more round, so one
// search over many old sessions does not push out the filters typing asks
// for again and again. A filter larger than a slot is not kept. Keys never
// name another filter later: a data file is never written again at an
// offset (blockCache has the same keys).
type filterCache struct {
	mu    sync.Mutex
	slots []filterSlot
	bytes []byte // slot i's filter at i*filterSlotBytes
	at    map[cacheKey]int32
	hand  int
	held  int64
}

// filterSlot is one kept filter: its key, its length (0: the slot is
// free) and whether it was asked for since the clock's hand last passed.
type filterSlot struct {
	key    cacheKey
	n      int32
	wanted bool
}

// get appends the filter kept for k to dst[:0] and reports whether there
// was one.
func (c *filterCache) get(k cacheKey, dst []byte) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	i, ok := c.at[k]
	if !ok {
		return dst, false
	}
	s := &c.slots[i]
	s.wanted = true
	at := int(i) * filterSlotBytes
	return append(dst[:0], c.bytes[at:at+int(s.n)]...), true
}

// put keeps a copy of filter as the one for k, in place of the first
// filter the clock's hand finds not asked for since it last passed.
func (c *filterCache) put(k cacheKey, filter []byte) {
	if len(filter) == 0 || len(filter) > filterSlotBytes {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.at[k]; ok {
		return
	}
	if c.slots == nil {
		c.slots = make([]filterSlot, filterCacheSlots)
		c.bytes = make([]byte, filterCacheSlots*filterSlotBytes)
		c.at = make(map[cacheKey]int32, filterCacheSlots)
	}
	for {
		s := &c.slots[c.hand]
		i := c.hand
		c.hand = (c.hand + 1) % len(c.slots)
		if s.n != 0 && s.wanted {
			s.wanted = false
			continue
		}
		if s.n != 0 {
			delete(c.at, s.key)
			c.held -= int64(s.n)
		}
		*s = filterSlot{key: k, n: int32(len(filter))}
		copy(c.bytes[i*filterSlotBytes:], filter)
		c.at[k] = int32(i)
		c.held += int64(len(filter))
		return
	}
}

// size is the bytes of the filters kept.
func (c *filterCache) size() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.held
}
