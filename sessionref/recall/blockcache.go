package recall

import (
	"container/list"
	"sync"
)

// DefaultCacheBytes bounds the decoded blocks an index keeps by default.
const DefaultCacheBytes = 8 << 20

// blockCache keeps the most recently read blocks decoded, up to a number
// of bytes: the newest sessions a query typed one character at a time
// checks again at every keystroke are then read from memory. Once it is
// full, a block a search read takes the place of the least recently used
// ones only if it was asked for more often than each of them lately
// (offer): searches that read more blocks than it holds, again and again,
// would otherwise copy each block in only to push it out before it is
// asked for again, and one search over many old sessions would push out
// what typing asks for.
type blockCache struct {
	mu    sync.Mutex
	max   int64
	bytes int64
	lru   *list.List // of *cached, most recent first
	byKey map[cacheKey]*list.Element
	asked frequencySketch // every get, found or not
}

type cacheKey struct {
	file uint64
	off  int64
}

type cached struct {
	key cacheKey
	b   *textBlock
	n   int64
}

func newBlockCache(max int64) *blockCache {
	return &blockCache{max: max, lru: list.New(), byKey: map[cacheKey]*list.Element{}}
}

// get is the block at k if the cache holds it, nil if not; either way it
// counts the request.
func (c *blockCache) get(k cacheKey) *textBlock {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.asked.add(k)
	if e, ok := c.byKey[k]; ok {
		c.lru.MoveToFront(e)
		return e.Value.(*cached).b
	}
	return nil
}

// keeps reports whether put keeps a block of n bytes (size): a huge
// block would push out everything else.
func (c *blockCache) keeps(n int64) bool { return n <= c.max/4 }

// put keeps b as the block at k, pushing out the least recently used
// blocks as far as it must: a block just built, whose session is the
// likeliest to be searched next.
func (c *blockCache) put(k cacheKey, b *textBlock) { c.store(k, b, false) }

// offer keeps b as the block at k where there is room for it, or where it
// was asked for more often lately than each block it would push out, and
// reports whether it did. A caller that copies a block only to keep it
// asks wants first.
func (c *blockCache) offer(k cacheKey, b *textBlock) bool { return c.store(k, b, true) }

// wants reports whether offer would keep a block of n bytes at k now.
func (c *blockCache) wants(k cacheKey, n int64) bool {
	if !c.keeps(n) {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	_, held := c.byKey[k]
	return !held && c.admits(k, n)
}

// admits reports whether a block of n bytes at k, not held, may push out
// what it must; c.mu is held.
func (c *blockCache) admits(k cacheKey, n int64) bool {
	need := c.bytes + n - c.max
	asked := c.asked.estimate(k)
	for e := c.lru.Back(); need > 0 && e != nil; e = e.Prev() {
		v := e.Value.(*cached)
		if c.asked.estimate(v.key) >= asked {
			return false
		}
		need -= v.n
	}
	return true
}

// store keeps b as the block at k, where admitted says whether it must be
// admitted first (offer) or may push out any block (put).
func (c *blockCache) store(k cacheKey, b *textBlock, admitted bool) bool {
	n := b.size()
	if !c.keeps(n) {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, held := c.byKey[k]; held || admitted && !c.admits(k, n) {
		return false
	}
	c.byKey[k] = c.lru.PushFront(&cached{key: k, b: b, n: n})
	c.bytes += n
	for c.bytes > c.max {
		e := c.lru.Back()
		v := e.Value.(*cached)
		c.lru.Remove(e)
		delete(c.byKey, v.key)
		c.bytes -= v.n
	}
	return true
}

// size is the bytes the cache holds.
func (c *blockCache) size() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bytes
}
