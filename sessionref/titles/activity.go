package titles

import (
	"slices"

	"github.com/dsh-refls/dsh-refls/sessionref/dshlog"
)

// lastActive is when a session was last active: its newest event's time,
// or its creation when no event carried one.
func lastActive(e *dshlog.Entry) int64 {
	if e.LastEventAt > 0 {
		return e.LastEventAt
	}
	return e.CreatedAt
}

// mostActive returns the at most k members (snapshot indices, newest
// created first) most recently active, most active first; equal times keep
// the snapshot order. It keeps a sorted window of k, so a large group costs
// one pass, not a sort.
func (s *Snapshot) mostActive(members []int32, k int) []int32 {
	if k <= 0 || len(members) == 0 {
		return nil
	}
	top := make([]int32, 0, min(k, len(members)))
	for _, i := range members {
		at := lastActive(&s.Sessions[i])
		if len(top) == k && at <= lastActive(&s.Sessions[top[k-1]]) {
			continue
		}
		// First position whose session is less active than i.
		pos, _ := slices.BinarySearchFunc(top, at, func(j int32, at int64) int {
			if lastActive(&s.Sessions[j]) >= at {
				return -1
			}
			return 1
		})
		if len(top) == k {
			top = top[:k-1]
		}
		top = slices.Insert(top, pos, i)
	}
	return top
}
