package recall

import (
	"container/list"
	"sync"
)

// DefaultCacheBytes bounds the decoded blocks an index keeps by default.
const DefaultCacheBytes = 8 << 20

// blockCache keeps the most recently read blocks decoded, up to a number
// of bytes: the newest sessions a query typed one character at a time
// checks again at every keystroke are then read from memory.
type blockCache struct {
	mu    sync.Mutex
	max   int64
	bytes int64
	lru   *list.List // of *cached, most recent first
	byKey map[cacheKey]*list.Element
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

func (c *blockCache) get(k cacheKey) *textBlock {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.byKey[k]; ok {
		c.lru.MoveToFront(e)
		return e.Value.(*cached).b
	}
	return nil
}

// keeps reports whether put keeps a block of n bytes (size): a huge
// block would push out everything else.
func (c *blockCache) keeps(n int64) bool { return n <= c.max/4 }

func (c *blockCache) put(k cacheKey, b *textBlock) {
	n := b.size()
	if !c.keeps(n) {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.byKey[k]; ok {
		return
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
}

// size is the bytes the cache holds.
func (c *blockCache) size() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bytes
}
