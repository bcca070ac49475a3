package ignore

import (
	"os"
	"sync"
	"time"
)

// maxCachedFiles bounds a Cache; when full it starts over, which costs one
// re-read per file and keeps memory proportional to a directory chain,
// not to the tree.
const maxCachedFiles = 1024

// Cache remembers parsed ignore and configuration files, so that a
// listing typed one keystroke at a time stats them instead of reading and
// parsing them again. An entry is used only while the file keeps its
// identity, size and modification time. A nil *Cache caches nothing. It
// is safe for concurrent use.
type Cache struct {
	mu      sync.Mutex
	entries map[cacheKey]cacheEntry
}

type cacheKey struct {
	path   string
	base   string // the list's base; "" for configuration values
	follow bool
	config bool
}

type cacheEntry struct {
	info    os.FileInfo
	size    int64
	modTime time.Time
	list    *List
	value   string // core.excludesFile of a config file
	set     bool   // value was set in the file
}

// NewCache returns an empty cache.
func NewCache() *Cache { return &Cache{entries: map[cacheKey]cacheEntry{}} }

// lookup returns the entry of key while its file is unchanged. It stats
// the file the way it would be opened (not following a symlink unless
// follow).
func (c *Cache) lookup(key cacheKey) (cacheEntry, bool) {
	if c == nil {
		return cacheEntry{}, false
	}
	c.mu.Lock()
	e, ok := c.entries[key]
	c.mu.Unlock()
	if !ok {
		return cacheEntry{}, false
	}
	stat := os.Lstat
	if key.follow {
		stat = os.Stat
	}
	fi, err := stat(key.path)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() != e.size || !fi.ModTime().Equal(e.modTime) || !os.SameFile(fi, e.info) {
		return cacheEntry{}, false
	}
	return e, true
}

// store remembers e for key, parsed from the file fi describes (its
// fstat when it was read, so a change after the read is noticed).
func (c *Cache) store(key cacheKey, fi os.FileInfo, e cacheEntry) {
	if c == nil {
		return
	}
	e.info, e.size, e.modTime = fi, fi.Size(), fi.ModTime()
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.entries) >= maxCachedFiles {
		c.entries = map[cacheKey]cacheEntry{}
	}
	c.entries[key] = e
}
