package recall

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// blockOfSize is a block whose size() is n bytes (n > 88).
func blockOfSize(n int) *textBlock { return &textBlock{folded: strings.Repeat("a", n-88)} }

// keyAt is the cache key of the i-th block of one file.
func keyAt(i int) cacheKey { return cacheKey{file: 7, off: int64(i) * 4096} }

// askOrOffer is what a search does with the block at k: the cached block
// if there is one, else it offers the block it read. It reports whether
// the block was found and whether an offered one was kept.
func askOrOffer(c *blockCache, k cacheKey, size int) (found, kept bool) {
	if c.get(k) != nil {
		return true, false
	}
	if !c.wants(k, int64(size)) {
		return false, false
	}
	return false, c.offer(k, blockOfSize(size))
}

func TestBlockCacheKeepsWhatIsAskedForThroughAScan(t *testing.T) {
	const size, held = 1000, 8
	c := newBlockCache(size * held)
	for i := range held {
		for range 3 {
			askOrOffer(c, keyAt(i), size)
		}
	}
	for i := range held {
		if c.get(keyAt(i)) == nil {
			t.Fatalf("block %d, asked for three times while there was room, is not kept", i)
		}
	}
	// A search over 100 blocks asked for once each keeps none of them.
	for i := held; i < held+100; i++ {
		if _, kept := askOrOffer(c, keyAt(i), size); kept {
			t.Fatalf("block %d, asked for once, pushed out blocks asked for four times", i)
		}
	}
	for i := range held {
		if c.get(keyAt(i)) == nil {
			t.Fatalf("block %d was pushed out by the scan", i)
		}
	}
	// A block asked for more often than the least recently used takes its place.
	hot := keyAt(1000)
	for range 6 {
		c.get(hot)
	}
	if !c.offer(hot, blockOfSize(size)) {
		t.Fatal("a block asked for seven times was refused in favour of blocks asked for five")
	}
	if c.get(hot) == nil || c.size() > size*held {
		t.Fatalf("after the offer: kept %v, %d bytes held of %d", c.get(hot) != nil, c.size(), size*held)
	}
	// put, the build's way in, keeps a block whatever was asked.
	c.put(keyAt(2000), blockOfSize(size))
	if c.get(keyAt(2000)) == nil || c.size() > size*held {
		t.Fatalf("a block put is not kept, or the cache holds %d bytes of %d", c.size(), size*held)
	}
}

func TestBlockCacheStopsCopyingWhenSearchesCycleThroughMoreThanItHolds(t *testing.T) {
	const size, held = 1000, 16
	c := newBlockCache(size * held)
	for round := range 6 {
		found, kept := 0, 0
		for i := range 3 * held {
			f, k := askOrOffer(c, keyAt(i), size)
			if f {
				found++
			}
			if k {
				kept++
			}
		}
		switch {
		case round == 0 && (found != 0 || kept != held):
			t.Fatalf("first round: %d found and %d kept, want 0 and %d (the room there was)", found, kept, held)
		case round > 0 && (found != held || kept != 0):
			// Least recently used alone keeps every block and finds
			// none: each is pushed out before it comes round again.
			t.Fatalf("round %d: %d found and %d kept, want %d and 0", round, found, kept, held)
		}
	}
}

func TestFrequencySketchNeverCountsLessAndAges(t *testing.T) {
	var s frequencySketch
	rng := rand.New(rand.NewPCG(1, 2))
	asked := map[cacheKey]int{}
	for range sketchAging - 1 {
		k := keyAt(int(rng.ExpFloat64() * 300))
		asked[k]++
		s.add(k)
	}
	over := 0
	for k, n := range asked {
		e := int(s.estimate(k))
		if e < min(n, 255) {
			t.Fatalf("key %v asked for %d times is estimated at %d", k, n, e)
		}
		if e > n {
			over++
		}
	}
	// Four rows of 4,096 counters for about a thousand keys: an estimate
	// above the count needs a collision in every row.
	if over > len(asked)/20 {
		t.Errorf("%d of %d keys are estimated above their count", over, len(asked))
	}
	top := keyAt(0)
	before := s.estimate(top)
	s.add(keyAt(1 << 20)) // the count that ages the sketch
	if after := s.estimate(top); after != before/2 {
		t.Errorf("after aging, the most asked-for key is estimated at %d, want %d (half of %d)", after, before/2, before)
	}
}
