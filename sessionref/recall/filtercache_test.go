package recall

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"testing"
)

// filterBytesOf is a filter of n bytes that differs for every key with
// an offset below 2^24, and whose first bytes are those of a shorter one.
func filterBytesOf(k cacheKey, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(uint64(k.off)>>(8*(i%3)) ^ k.file<<4 ^ uint64(i))
	}
	return b
}

func TestFilterCacheGivesBackACopyOfWhatItKept(t *testing.T) {
	var c filterCache
	k := cacheKey{file: 7, off: 100}
	if _, ok := c.get(k, nil); ok {
		t.Fatal("an empty cache found a filter")
	}
	want := filterBytesOf(k, 1096)
	c.put(k, want)
	got, ok := c.get(k, make([]byte, 3))
	if !ok || !bytes.Equal(got, want) {
		t.Fatalf("got %d bytes (found %v), want the %d put", len(got), ok, len(want))
	}
	got[0] ^= 0xff
	if again, _ := c.get(k, nil); !bytes.Equal(again, want) {
		t.Error("changing what get returned changed the kept filter")
	}
	if c.size() != int64(len(want)) {
		t.Errorf("size %d, want %d", c.size(), len(want))
	}
	for _, n := range []int{0, filterSlotBytes + 8} {
		big := cacheKey{file: 7, off: int64(200 + n)}
		c.put(big, make([]byte, n))
		if _, ok := c.get(big, nil); ok {
			t.Errorf("a filter of %d bytes was kept (slots hold 1 to %d)", n, filterSlotBytes)
		}
	}
}

// The clock keeps the filters asked for again through a scan of filters
// asked for once, and the cache never holds more than its slots.
func TestFilterCacheKeepsWhatIsAskedForThroughAScan(t *testing.T) {
	var c filterCache
	key := func(i int) cacheKey { return cacheKey{file: 1, off: int64(i)} }
	hot := []cacheKey{{file: 2, off: 1}, {file: 2, off: 2}, {file: 2, off: 3}}
	for _, k := range hot {
		c.put(k, filterBytesOf(k, 64))
	}
	for i := range 3 * filterCacheSlots {
		for _, k := range hot {
			if got, ok := c.get(k, nil); !ok || !bytes.Equal(got, filterBytesOf(k, 64)) {
				t.Fatalf("after %d filters of a scan, the filter %v asked for at each was pushed out", i, k)
			}
		}
		c.put(key(i), filterBytesOf(key(i), 64))
	}
	if len(c.at) != filterCacheSlots {
		t.Errorf("the cache holds %d filters, want its %d slots", len(c.at), filterCacheSlots)
	}
	if want := int64(filterCacheSlots * 64); c.size() != want {
		t.Errorf("size %d, want %d", c.size(), want)
	}
	// The newest of the scan are there, the oldest not.
	last := 3*filterCacheSlots - 1
	if _, ok := c.get(key(last), nil); !ok {
		t.Error("the last filter put is not kept")
	}
	if _, ok := c.get(key(0), nil); ok {
		t.Error("the first filter of the scan is still kept, three times the slots later")
	}
}

// A phrase search keeps the filters it read, and the next one answers the
// same from them without reading them again: after they are damaged on
// disk, a search with the kept filters answers as before, and one without
// them does not.
func TestPhraseSearchesKeepTheFiltersTheyRead(t *testing.T) {
	st := newStore(t, lateFiltersSessions(1)...)
	st.rc.cache = newBlockCache(DefaultCacheBytes) // nothing warm from the build
	first := st.search(`"session poll"`)
	wantIDs(t, `"session poll"`, first, "s-late")
	kept := st.rc.Stats().FilterCacheBytes
	if kept == 0 {
		t.Fatal("a phrase search read filters and kept none")
	}

	// Damage the filters of the blocks they spared on disk, one byte in
	// each: all but the last block of s-late, which holds the phrase.
	data := st.rc.data
	for _, id := range []string{"s-late", "s-other-0"} {
		refs, err := st.rc.docs[id].refsInto(nil)
		if err != nil {
			t.Fatal(err)
		}
		if id == "s-late" {
			refs = refs[:len(refs)-1]
		}
		for _, ref := range refs {
			if _, err := data.f.WriteAt([]byte{0x5a}, ref.off+recordHeaderLen+8); err != nil {
				t.Fatal(err)
			}
		}
	}
	st.rc.cache = newBlockCache(DefaultCacheBytes)
	if again := st.search(`"session poll"`); fmt.Sprint(again) != fmt.Sprint(first) {
		t.Errorf("from the kept filters the answer changed:\n got %v\nwant %v", again, first)
	}
	if st.rc.Stats().FilterCacheBytes != kept {
		t.Error("the same search again kept more filters")
	}
	// Without them, the damage shows: the test damaged what the search reads.
	st.rc.filters = filterCache{}
	st.rc.cache = newBlockCache(DefaultCacheBytes)
	res, err := st.rc.Search(context.Background(), Query{Text: `"session poll"`})
	if err == nil && fmt.Sprint(res) == fmt.Sprint(first) {
		t.Error("with the filters damaged on disk and none kept, the search answered as before")
	}
}

// Searches share the cache: each filter read back is the one kept for
// its key, while others put and get at once (run under -race in CI).
func TestFilterCacheServesConcurrentSearches(t *testing.T) {
	var c filterCache
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var buf []byte
			for i := range 2 * filterCacheSlots {
				k := cacheKey{file: uint64(g % 2), off: int64(i % (filterCacheSlots + 100))}
				want := filterBytesOf(k, 32+2*(i%50))
				if got, ok := c.get(k, buf); ok {
					if len(got) < 32 || !bytes.Equal(got, filterBytesOf(k, len(got))) {
						t.Errorf("the filter read back for %v is not the one kept for it", k)
						return
					}
					buf = got
					continue
				}
				c.put(k, want)
			}
		}()
	}
	wg.Wait()
	if n := len(c.at); n > filterCacheSlots {
		t.Errorf("the cache holds %d filters, more than its %d slots", n, filterCacheSlots)
	}
}
