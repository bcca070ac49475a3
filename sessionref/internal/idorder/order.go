// Package idorder orders session ids as dsh's localeCompare does under
// Node's ICU 78 (Unicode 17): golang.org/x/text's root collation, with the
// characters it does not know (assigned after Unicode 6.2) placed by a
// table generated from Node's ICU (collation_table.go).
package idorder

import (
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/collate"
	"golang.org/x/text/language"
)

// Order compares session ids as dsh's localeCompare does (Node 22: ICU
// 78, Unicode 17): root-locale collation, then bytes where the collation
// sees no difference, so the order is total. golang.org/x/text's tables are
// Unicode 6.2, so every character assigned since (🏳, 🛒, 🤩, 🫠, ₿, new
// scripts and ideographs) would sort as unassigned, after all letters.
// Such a character is replaced, before x/text compares, by its proxy from
// newCollationRuns (generated from Node's ICU): the nearest known character
// before it in ICU order, followed, when it differs from the proxy at the
// primary level, by a plane-15 private-use character that sorts after
// every assigned one and encodes its rank among the new characters after
// that proxy. Ties left by that are broken by those ranks. What this
// cannot order as ICU does (docs/spec-notes.md §2.2): ids holding
// plane-15 private-use characters, and contractions or expansions that
// involve a new character. The zero value is ready; it is not safe for
// concurrent use (the collator keeps buffers).
type Order struct {
	col *collate.Collator
	// pa, pb hold the proxied ids; ta, tb their ranks.
	pa, pb []byte
	ta, tb []int32
}

// Compare returns -1, 0 or +1 as a sorts before, with or after b.
func (o *Order) Compare(a, b string) int {
	if a == b {
		return 0
	}
	if o.col == nil {
		o.col = collate.New(language.Und)
	}
	var pa, pb []byte
	var newA, newB bool
	pa, o.ta, newA = proxied(o.pa[:0], o.ta[:0], a)
	pb, o.tb, newB = proxied(o.pb[:0], o.tb[:0], b)
	o.pa, o.pb = pa, pb
	if !newA && !newB {
		if c := o.col.CompareString(a, b); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	}
	sa, sb := a, b
	if newA {
		sa = string(pa)
	}
	if newB {
		sb = string(pb)
	}
	if c := o.col.CompareString(sa, sb); c != 0 {
		return c
	}
	if c := slices.Compare(o.ta, o.tb); c != 0 {
		return c
	}
	return strings.Compare(a, b)
}

// collationRun places n consecutive new characters from lo: each is
// replaced by proxy (dropped when proxy is -1), the i-th ranking k+i after
// it; mode, when not 0, is the rank of the first one's primary weight
// among those after proxy (the i-th has mode+i), 0 when they equal proxy
// at the primary level.
type collationRun struct {
	lo, n, proxy, k, mode int32
}

// planeFifteen is the first plane-15 private-use code point.
const planeFifteen = 0xF0000

// proxied returns s with each new character replaced as Order describes
// and the ranks of its new characters (0 for known ones) in ranks; found
// is false when s has no new character.
func proxied(dst []byte, ranks []int32, s string) (_ []byte, _ []int32, found bool) {
	for i, r := range s {
		run, ok := newCharacter(r)
		if !ok {
			if found {
				dst = utf8.AppendRune(dst, r)
				ranks = append(ranks, 0)
			}
			continue
		}
		if !found {
			found = true
			dst = append(dst, s[:i]...)
			for range s[:i] {
				ranks = append(ranks, 0)
			}
		}
		k := run.k + r - run.lo
		ranks = append(ranks, k)
		if run.proxy < 0 {
			continue
		}
		dst = utf8.AppendRune(dst, run.proxy)
		if run.mode > 0 {
			dst = utf8.AppendRune(dst, planeFifteen+run.mode+r-run.lo)
		}
	}
	if !found {
		return dst, ranks[:0], false
	}
	return dst, ranks, true
}

// newCharacter finds r's run in newCollationRuns.
func newCharacter(r rune) (collationRun, bool) {
	if r < 0x80 {
		return collationRun{}, false
	}
	i := sort.Search(len(newCollationRuns), func(i int) bool { return newCollationRuns[i].lo+newCollationRuns[i].n > r })
	if i < len(newCollationRuns) && newCollationRuns[i].lo <= r {
		return newCollationRuns[i], true
	}
	return collationRun{}, false
}
