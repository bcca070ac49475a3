package titles

import (
	"strings"
	"sync"

	"github.com/dsh-refls/dsh-refls/sessionref/dshlog"
)

// Scope narrows the sessions a candidate query lists: completion's
// session scopes and hidden kinds (docs/sessions.md). The zero value
// lists every session, as dsh/candidates does (SPEC §2.2).
type Scope struct {
	// WorkspaceOnly lists only the sessions whose effective directory is
	// the target's (SPEC §2.2's first group); with no target directory,
	// none.
	WorkspaceOnly bool
	// ActiveSince, when above 0, lists only the sessions last active (their
	// newest event, else their creation) at or after it, in Unix ms.
	ActiveSince int64
	// HideKinds leaves out the sessions whose Kind is Hidden, except one
	// whose id begins with a query of at least MinHiddenIDPrefix bytes:
	// typing an id names that session.
	HideKinds bool
}

// MinHiddenIDPrefix is the shortest query that lists a hidden session
// whose id it begins: dsh ids are UUIDs, whose first four hex digits a
// person copies on purpose, where one to three letters are the start of
// a word.
const MinHiddenIDPrefix = 4

// narrows reports whether sc leaves any session out.
func (sc *Scope) narrows() bool { return sc.WorkspaceOnly || sc.ActiveSince > 0 || sc.HideKinds }

// admits reports whether session i of s is in scope sc for the
// case-folded query; targetCwd is the number of the target's directory
// (< 0: none).
func (s *Snapshot) admits(sc *Scope, i int32, query string, targetCwd int32) bool {
	if sc.WorkspaceOnly && (targetCwd < 0 || s.cwdOf[i] != targetCwd) {
		return false
	}
	if sc.ActiveSince > 0 && lastActive(&s.Sessions[i]) < sc.ActiveSince {
		return false
	}
	if sc.HideKinds && s.hidden(i) {
		return s.namedByID(i, query)
	}
	return true
}

// namedByID reports whether the case-folded query names session i by its
// id: at least MinHiddenIDPrefix bytes that begin it.
func (s *Snapshot) namedByID(i int32, query string) bool {
	return len(query) >= MinHiddenIDPrefix && strings.HasPrefix(s.search.idAt(i), query)
}

// lazyHidden is a snapshot's bitset of the sessions whose kind is hidden,
// built once (hiddenSet): a scope tests one bit per session it walks, where
// reading each Entry's fields would bring a 256-byte record into the cache.
type lazyHidden struct {
	once sync.Once
	bits []uint64
}

// hiddenSet returns the bitset of the hidden sessions of s (bit i: session
// i), building it on first use; snapshots that share their sessions share
// it. The index builds it as it publishes, so a query does not.
func (s *Snapshot) hiddenSet() []uint64 {
	if s.orders == nil { // a snapshot built without orders
		return hiddenBits(s.Sessions)
	}
	h := &s.orders.hidden
	h.once.Do(func() { h.bits = hiddenBits(s.Sessions) })
	return h.bits
}

// hidden reports whether session i's kind is hidden.
func (s *Snapshot) hidden(i int32) bool {
	return s.hiddenSet()[i>>6]&(1<<(i&63)) != 0
}

// hiddenBits is the bitset of the hidden kinds among sessions.
func hiddenBits(sessions []dshlog.Entry) []uint64 {
	bits := make([]uint64, (len(sessions)+63)/64)
	for i := range sessions {
		if sessions[i].Kind().Hidden() {
			bits[i>>6] |= 1 << (i & 63)
		}
	}
	return bits
}

// Admits reports whether the session id, as listed for a message written
// in target (or in targetCwd when target is not indexed), is in scope sc
// for query as typed: what completion asks of a session found another way
// (by its text). An unknown id is not.
func (s *Snapshot) Admits(sc Scope, id, target, targetCwd, query string) bool {
	i, ok := s.byID[id]
	if !ok {
		return false
	}
	if !sc.narrows() {
		return true
	}
	return s.admits(&sc, int32(i), foldCase(query), s.targetGroup(target, targetCwd))
}

// targetGroup is the number of the directory of a message written in
// target (or in targetCwd when target is not indexed): -2 when no session
// has it.
func (s *Snapshot) targetGroup(target, targetCwd string) int32 {
	dir, has := s.spellingOf(targetCwd), targetCwd != ""
	if t, ok := s.Locate(target); ok {
		dir, has = t.EffectiveCwd()
	}
	if c, ok := s.cwds[dir]; ok && has {
		return c
	}
	return -2
}

// Children are the sessions whose parentSession is one session: its
// subagent children and its forks, the first few of each, newest first.
type Children struct {
	Subagents, Forks         []dshlog.Entry
	SubagentCount, ForkCount int
}

// ChildrenOf returns the children of session id, at most k of each sort
// with their counts. It walks every listed session: a hover asks, not a
// keystroke.
func (s *Snapshot) ChildrenOf(id string, k int) Children {
	var c Children
	if id == "" {
		return c
	}
	for i := range s.Sessions {
		e := &s.Sessions[i]
		if e.ParentSession != id || e.ID == id {
			continue
		}
		if e.IsSubagent() {
			if c.SubagentCount++; len(c.Subagents) < k {
				c.Subagents = append(c.Subagents, *e)
			}
		} else if c.ForkCount++; len(c.Forks) < k {
			c.Forks = append(c.Forks, *e)
		}
	}
	return c
}
