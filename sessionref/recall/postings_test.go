package recall

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"slices"
	"strings"
	"sync"
	"testing"
)

// Token postings are held by key: built, frozen, cut at a step (prefix),
// written to a store and read back, each key keeps its slots, a key no
// slot holds has no posting, and a stored list of keys out of order, with
// a key twice or past the dictionary is refused.
func TestDensePostingsKeepEveryKeysSlots(t *testing.T) {
	want := map[uint32][]int{}
	b := newDenseBuilder()
	b.expect(300)
	for slot := range 300 {
		ids := []uint32{2, uint32(3 + slot%5), 40} // key 0, 1 and 8..39: none
		if slot%50 == 0 {
			ids = append(ids, 60) // a sparse list
		}
		b.add(slot, ids)
		for _, x := range ids {
			want[x] = append(want[x], slot)
		}
	}
	check := func(name string, p *postings, below int) {
		t.Helper()
		for x := range uint32(70) {
			var w []int
			for _, s := range want[x] {
				if s < below {
					w = append(w, s)
				}
			}
			pl, ok := p.get(x)
			var got []int
			pl.each(func(s int) { got = append(got, s) })
			if ok != (len(w) > 0) || !slices.Equal(got, w) {
				t.Fatalf("%s: key %d: %v (posted %v), want %v", name, x, got, ok, w)
			}
		}
	}
	p := b.postings()
	check("frozen", p, 300)
	check("a step", b.prefix(128), 128)
	if p.size() != 8 {
		t.Errorf("%d keys posted, want 8", p.size())
	}

	var buf bytes.Buffer
	bw := bufio.NewWriter(&buf)
	sw := &storeWriter{w: bw, crc: crc32.New(castagnoli)}
	sw.writePostings(p)
	sw.flush(0)
	if err := errors.Join(sw.err, bw.Flush()); err != nil {
		t.Fatal(err)
	}
	r := &reader{b: buf.Bytes(), s: buf.String()}
	back := r.postings(300, 70, true)
	if r.err != nil {
		t.Fatal(r.err)
	}
	check("stored", back, 300)

	for name, keys := range map[string][]uint64{"out of order": {5, 2}, "twice": {5, 5}, "past the dictionary": {70}} {
		raw := binary.AppendUvarint(nil, uint64(len(keys)))
		for _, x := range keys {
			raw = binary.AppendUvarint(raw, x)
			raw = append(raw, 0, 1, 7) // a list of one slot, 7
		}
		r := &reader{b: raw, s: string(raw)}
		r.postings(300, 70, true)
		if r.err == nil || !strings.Contains(r.err.Error(), "key") {
			t.Errorf("keys %v (%s): %v, want an error", keys, name, r.err)
		}
	}
}

// Frozen postings hold arrays of their length: a builder's lists and
// bitsets grow by appending, and the spare capacity stayed allocated.
func TestFrozenPostingsHoldNoSpareCapacity(t *testing.T) {
	for _, expect := range []int{0, 100, 5000} {
		b := newBuilder()
		b.expect(expect)
		for slot := 0; slot < 3000; slot++ {
			grams := []uint32{1} // in every slot: a bitset
			if slot%97 == 0 {
				grams = append(grams, 2) // rare: a list
			}
			b.add(slot, grams)
		}
		p := b.postings()
		for x, pl := range p.m {
			if cap(pl.list) != len(pl.list) || cap(pl.bits) != len(pl.bits) {
				t.Errorf("expect %d, gram %d: list %d/%d, bits %d/%d (len/cap)", expect, x, len(pl.list), cap(pl.list), len(pl.bits), cap(pl.bits))
			}
		}
		if p.m[1].bits == nil || p.m[2].list == nil {
			t.Fatalf("expect %d: gram 1 %+v, gram 2 has %d slots listed", expect, p.m[1].bits != nil, len(p.m[2].list))
		}
		var got []int
		p.m[2].each(func(s int) { got = append(got, s) })
		for i, s := range got {
			if s != 97*i {
				t.Fatalf("expect %d: gram 2's slots %v", expect, got)
			}
		}
		set, _ := p.candidates([]uint32{1})
		n := 0
		for _, w := range set {
			for ; w != 0; w &= w - 1 {
				n++
			}
		}
		if n != 3000 {
			t.Errorf("expect %d: gram 1 in %d slots, want 3000", expect, n)
		}
	}
}

// Workers look their tokens up in the dictionary at once: every token gets
// one id, and each session's ids name exactly its tokens.
func TestDictionaryIdsFromSeveralWorkers(t *testing.T) {
	d := newDictionary()
	const workers, sessions = 4, 50
	var wg sync.WaitGroup
	errs := make(chan error, workers*sessions)
	for k := 0; k < workers; k++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ts, gs := newTokenSet(), newGramSet()
			for s := 0; s < sessions; s++ {
				ts.reset()
				var want []string
				for i := 0; i < 20; i++ {
					tok := fmt.Sprintf("w%d", (s*7+i*k+i)%60)
					want = append(want, tok)
					ts.add([]byte(tok+" "), gs)
				}
				ids := d.idsOfSet(ts)
				if !slices.IsSorted(ids) {
					errs <- fmt.Errorf("ids %v not sorted", ids)
				}
				list := d.list()
				var got []string
				for _, id := range ids {
					got = append(got, list[id])
				}
				slices.Sort(got)
				slices.Sort(want)
				if want = slices.Compact(want); !slices.Equal(got, want) {
					errs <- fmt.Errorf("ids name %v, want %v", got, want)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, tok := range d.list() {
		if id, ok := d.ids.find(d.tokens, tok); seen[tok] || !ok || id != uint32(len(seen)) {
			t.Fatalf("token %q twice or with id %d (%v)", tok, id, ok)
		}
		seen[tok] = true
	}
}
