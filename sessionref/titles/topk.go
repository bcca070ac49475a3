package titles

import (
	"cmp"
	"slices"
	"sync"
)

// A dense query (the first keystrokes of a common word) matches most
// sessions, yet only the best ranked `limit` are listed. Ranking is by
// group, then match tier, then order (creation or activity), so walking
// each group's sessions in that order and stopping once the best tier
// alone fills what the list still needs gives the same list as ranking
// every match: no session walked later can displace them. The walk gives
// up after a budget of sessions, and the full match set (which the
// narrowing memo remembers) is computed instead; so sparse queries cost no
// more than before.

// walkOrder lists a snapshot's sessions in one ranking order, and again
// grouped by cwd, so a query's group of same-cwd sessions is walked
// without visiting the others.
type walkOrder struct {
	// all is every session in this order; nil means snapshot order.
	all []int32
	// byCwd is all grouped by cwd number, sessions without cwd last;
	// byCwd[cwdAt[c]:cwdAt[c+1]] are cwd c's sessions, in order.
	byCwd []int32
	cwdAt []int32
}

// snapshotOrders builds each walk order of a snapshot once, on its first
// query; snapshots that share their sessions share them.
type snapshotOrders struct {
	created, active lazyOrder
	pairs           lazyPairs
	hidden          lazyHidden
}

type lazyOrder struct {
	once  sync.Once
	order *walkOrder
}

// walkOrder returns the snapshot's sessions in creation order (as listed)
// or by last activity, or nil for a snapshot built without orders.
func (s *Snapshot) walkOrder(byActivity bool) *walkOrder {
	if s.orders == nil {
		return nil
	}
	lo := &s.orders.created
	if byActivity {
		lo = &s.orders.active
	}
	lo.once.Do(func() { lo.order = s.buildWalkOrder(byActivity) })
	return lo.order
}

func (s *Snapshot) buildWalkOrder(byActivity bool) *walkOrder {
	n := len(s.Sessions)
	o := &walkOrder{}
	if byActivity {
		// Most recently active first; equal times keep the snapshot order,
		// as mostActive does.
		at := make([]int64, n)
		o.all = make([]int32, n)
		for i := range s.Sessions {
			at[i], o.all[i] = lastActive(&s.Sessions[i]), int32(i)
		}
		slices.SortFunc(o.all, func(a, b int32) int {
			if c := cmp.Compare(at[b], at[a]); c != 0 {
				return c
			}
			return cmp.Compare(a, b)
		})
	}
	noCwd := int32(len(s.cwds))
	key := func(i int32) int32 {
		if c := s.cwdOf[i]; c >= 0 {
			return c
		}
		return noCwd
	}
	o.cwdAt = make([]int32, noCwd+2)
	for _, c := range s.cwdOf {
		if c < 0 {
			c = noCwd
		}
		o.cwdAt[c+1]++
	}
	for c := 1; c < len(o.cwdAt); c++ {
		o.cwdAt[c] += o.cwdAt[c-1]
	}
	next := slices.Clone(o.cwdAt[:noCwd+1])
	o.byCwd = make([]int32, n)
	for p := range n {
		i := int32(p)
		if o.all != nil {
			i = o.all[p]
		}
		k := key(i)
		o.byCwd[next[k]] = i
		next[k]++
	}
	return o
}

// cwdMembers returns the sessions of cwd number c (-1: no cwd), in order.
func (o *walkOrder) cwdMembers(c int32) []int32 {
	if c < 0 {
		c = int32(len(o.cwdAt) - 2)
	}
	return o.byCwd[o.cwdAt[c]:o.cwdAt[c+1]]
}

// rankQuery is one candidate query, resolved against a snapshot.
type rankQuery struct {
	query string // case-folded; "" matches every session
	limit int
	// target is the session never offered (-1: none); targetCwd the
	// number of the cwd of group 0 (< 0: none).
	target, targetCwd int32
	byActivity        bool
	// scope narrows the list; nil lists every session.
	scope *Scope
}

// lazyBudget is how many sessions a lazy walk may test before it gives up
// for the full match set: a query settled by then is dense enough that
// walking was cheaper than matching every session.
func lazyBudget(sessions int) int {
	return 2048 + sessions/8
}

// rankLazily walks the groups in ranking order and returns the snapshot
// indices of the first limit candidates and whether more matched; ok is
// false when the budget ran out first (or the snapshot has no walk order),
// and nothing is decided.
func (s *Snapshot) rankLazily(rq *rankQuery, sc *queryScratch) (out []int32, capped, ok bool) {
	o := s.walkOrder(rq.byActivity)
	if o == nil {
		return nil, false, false
	}
	need, needPairs := byteSetOf(rq.query), pairSetOf(rq.query)
	budget := lazyBudget(len(s.Sessions))
	out = sc.out[:0]
	defer func() {
		if out != nil {
			sc.out = out[:0]
		}
	}()
	tiers := &sc.tiers
	var stopAt int64 // the activity below which a walk by activity stops
	if rq.scope != nil && rq.byActivity {
		stopAt = rq.scope.ActiveSince
	}
	hideKinds := rq.scope != nil && rq.scope.HideKinds
	for g := groupSameCwd; g <= groupOther; g++ {
		if g != groupSameCwd && rq.scope != nil && rq.scope.WorkspaceOnly {
			break // only this workspace's sessions are in scope
		}
		var members []int32
		switch g {
		case groupSameCwd:
			if rq.targetCwd >= 0 {
				members = o.cwdMembers(rq.targetCwd)
			}
		case groupNoCwd:
			members = o.cwdMembers(-1)
		default:
			members = o.all
		}
		for t := range tiers {
			tiers[t] = tiers[t][:0]
		}
		left := rq.limit - len(out)
		found := 0 // matches of this group so far
		n := len(members)
		if g == groupOther && members == nil {
			n = len(s.Sessions)
		}
		for p := 0; p < n; p++ {
			i := int32(p)
			if members != nil {
				i = members[p]
			}
			if i == rq.target {
				continue
			}
			if g == groupOther {
				if c := s.cwdOf[i]; c < 0 || c == rq.targetCwd {
					continue // walked as group 0 or 1
				}
			}
			if stopAt > 0 && lastActive(&s.Sessions[i]) < stopAt {
				break // walked by activity: every later session is older
			}
			if hideKinds && s.hidden(i) && !s.namedByID(i, rq.query) {
				// A hidden session costs a bit test, not the walk's budget:
				// else a store of many children ran the budget out and
				// matched every session instead.
				continue
			}
			if budget--; budget < 0 {
				return nil, false, false
			}
			if rq.query != "" && !s.search.contains(i, rq.query, &need, &needPairs) {
				continue
			}
			if rq.scope != nil && !s.admits(rq.scope, i, rq.query, rq.targetCwd) {
				continue
			}
			if left == 0 {
				// The list is full: this match is one more than it holds.
				return out, true, true
			}
			found++
			t := tierTitlePrefix
			if rq.query != "" {
				st := s.search.at(i)
				t = matchTier(&st, rq.query)
			}
			tiers[t] = append(tiers[t], i)
			if len(tiers[tierTitlePrefix]) == left {
				// No session walked later outranks these.
				out = append(out, tiers[tierTitlePrefix]...)
				if found > left {
					return out, true, true
				}
				left = 0
			}
		}
		if left == 0 {
			continue
		}
		for _, tier := range tiers {
			for _, i := range tier {
				if len(out) == rq.limit {
					return out, true, true
				}
				out = append(out, i)
			}
		}
	}
	return out, false, true
}
