package fileref

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// TestScoreBoundIsACeiling checks scoreBound against the score itself for
// every ASCII path that matches a random typed query, and that the
// ceiling is reached: a bound that is never tight would prune nothing.
func TestScoreBoundIsACeiling(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 15))
	paths := genDiffPaths(rng, 2000)
	ix := memIndex(t, paths)
	snap := ix.snap.Load()
	checked, tight := 0, 0
	for i := 0; i < 400; i++ {
		folded := foldQuery(typedQuery(rng, paths))
		if folded == "" || strings.ContainsAny(folded, "/") {
			continue
		}
		var qMask uint64
		for _, r := range folded {
			qMask |= maskBit(r)
		}
		qb := newQueryBound(folded, qMask)
		for k := range snap.entries {
			e := &snap.entries[k]
			if e.nonASCII() || e.mask&qMask != qMask {
				continue
			}
			path, low := snap.path(e), snap.low(e)
			end, ok := forwardASCII(low, 0, folded)
			if !ok {
				continue
			}
			bend := noBaseMatch
			if b, ok := forwardASCII(low, int(e.baseOff), folded); ok {
				bend = b
			}
			score := scoreASCII(path, low, int(e.baseOff), end, bend, folded)
			bound := qb.scoreBound(e)
			if bound < score {
				t.Fatalf("query %q path %q: ceiling %d below score %d", folded, path, bound, score)
			}
			s := backwardASCII(low, end, folded)
			full := scoreWindowASCII(path, low, s, end, folded) + wordEndASCII(path, end)
			if fb := qb.fullBound(e); fb < full {
				t.Fatalf("query %q path %q: whole-path ceiling %d below its score %d", folded, path, fb, full)
			}
			checked++
			if bound == score {
				tight++
			}
		}
	}
	if checked < 1000 || tight == 0 {
		t.Fatalf("%d paths checked, ceiling reached %d times", checked, tight)
	}
}
