package titles

import (
	"github.com/dsh-refls/dsh-refls/sessionref"
	"github.com/dsh-refls/dsh-refls/sessionref/dshlog"

	"strings"
	"sync"

	"github.com/dsh-refls/dsh-refls/internal/words"
)

// Candidate is one session offered for reference (§2.2).
type Candidate struct {
	SessionID    string  `json:"sessionId"`
	Label        string  `json:"label"`
	DisplayTitle string  `json:"displayTitle"`
	Cwd          *string `json:"cwd,omitempty"`
	// WorkingDirectory is the session's effective directory when its log
	// moved it away from Cwd (Entry.WorkDir); absent otherwise.
	WorkingDirectory *string `json:"workingDirectory,omitempty"`
	SameWorkspace    bool    `json:"sameWorkspace"`
	CreatedAt        int64   `json:"createdAt"`
	Mention          string  `json:"mention"`
}

// CandidateQuery selects candidates.
type CandidateQuery struct {
	Query string
	// TargetID is the session the message is written in; it is never offered.
	TargetID string
	// TargetCwd is the workspace the target runs in; the target's own cwd
	// wins when the target is indexed.
	TargetCwd string
	// Limit caps the result; 0 means the default of 50; negative is invalid.
	Limit int
	// ByActivity ranks sessions of equal group and match quality by their
	// last event (Entry.LastEventAt, else CreatedAt) instead of SPEC §2.2's
	// creation order.
	ByActivity bool
	// Scope narrows the list (completion's scopes and hidden kinds); the
	// zero value lists every session, as SPEC §2.2 does.
	Scope Scope
	// NoMention leaves each candidate's Mention empty, for a caller that
	// writes Mention(DisplayTitle, SessionID) into its own buffer
	// (AppendURIPayload) and would only copy the string.
	NoMention bool
}

// DefaultCandidateLimit is the candidate limit of §2.2.
const DefaultCandidateLimit = 50

// Group ranks of §2.2.
const (
	groupSameCwd = 0
	groupNoCwd   = 1
	groupOther   = 2
)

// Match tiers within a group, best first. They only reorder; every
// substring match stays in the list.
const (
	tierTitlePrefix = iota // the title or display title starts with the query
	tierWordStart          // a word of the title starts with the query
	tierIDPrefix           // the id starts with the query
	tierSubstring          // anywhere in id, cwd, title or display title
)

// Candidates returns the sessions a message may reference (§2.2), ranked:
// by group (same cwd, no cwd, other), then, for a non-empty query, by match
// quality, then newest first. capped reports that the limit cut the list.
func (s *Snapshot) Candidates(q CandidateQuery) ([]Candidate, bool, error) {
	limit := q.Limit
	if limit == 0 {
		limit = DefaultCandidateLimit
	}
	if limit < 0 {
		return nil, false, sessionref.Errorf(sessionref.CodeInvalidReference, "candidate limit must be positive, got %d", q.Limit)
	}
	targetCwd, hasTargetCwd := s.spellingOf(q.TargetCwd), q.TargetCwd != ""
	if t, ok := s.Locate(q.TargetID); ok {
		targetCwd, hasTargetCwd = t.EffectiveCwd()
	}
	query := foldCase(q.Query)
	sc := s.lendScratch()
	defer s.returnScratch(sc)
	target := int32(-1)
	if i, ok := s.byID[q.TargetID]; ok {
		target = int32(i)
	}
	targetGroup := int32(-2) // no session's cwd
	if c, ok := s.cwds[targetCwd]; ok && hasTargetCwd {
		targetGroup = c
	}
	var scope *Scope // nil: every session is in scope
	if q.Scope.narrows() {
		scope = &q.Scope
	}
	if !s.narrowable(query, len(s.Sessions)) && !s.sparse(query, sc) {
		rq := rankQuery{query: query, limit: limit, target: target, targetCwd: targetGroup, byActivity: q.ByActivity, scope: scope}
		if ranked, capped, ok := s.rankLazily(&rq, sc); ok {
			out := make([]Candidate, 0, len(ranked))
			cwds := make([]string, len(ranked))
			for _, i := range ranked {
				out = append(out, candidateOf(&s.Sessions[i], hasTargetCwd, targetCwd, &cwds[len(out)], !q.NoMention))
			}
			return out, capped, nil
		}
	}
	// Split the matches by group first (cheap), then rank only as many
	// groups as the limit reaches: match quality is computed for the
	// sessions that can still make the list, not for every match.
	groups := &sc.groups
	put := func(i int32) {
		if i == target || scope != nil && !s.admits(scope, i, query, targetGroup) {
			return
		}
		g := groupOther
		switch c := s.cwdOf[i]; {
		case c < 0:
			g = groupNoCwd
		case c == targetGroup:
			g = groupSameCwd
		}
		groups[g] = append(groups[g], i)
	}
	if query == "" {
		for i := range s.Sessions {
			put(int32(i))
		}
	} else {
		for _, i := range s.matching(query, sc) {
			put(i)
		}
	}
	total := len(groups[0]) + len(groups[1]) + len(groups[2])
	capped := total > limit
	out := make([]Candidate, 0, min(limit, total))
	cwds := make([]string, cap(out))
	for _, members := range groups {
		need := limit - len(out)
		if need == 0 {
			break
		}
		// Sessions are newest first; bucketing by tier keeps that order
		// within each tier without sorting. Once the best tier alone fills
		// what the list still needs, no later session can displace those,
		// so the rest of the group is not ranked at all.
		tiers := &sc.tiers
		for t := range tiers {
			tiers[t] = tiers[t][:0]
		}
		if query == "" {
			tiers[0] = append(tiers[0], members...)
		} else {
			for _, i := range members {
				st := s.search.at(i)
				t := matchTier(&st, query)
				tiers[t] = append(tiers[t], i)
				if len(tiers[0]) == need && !q.ByActivity {
					break
				}
			}
		}
		for _, tier := range tiers {
			if q.ByActivity {
				tier = s.mostActive(tier, need)
			}
			for _, i := range tier {
				if len(out) == limit {
					return out, capped, nil
				}
				out = append(out, candidateOf(&s.Sessions[i], hasTargetCwd, targetCwd, &cwds[len(out)], !q.NoMention))
			}
		}
	}
	return out, capped, nil
}

// queryScratch holds the buffers one candidate query works in; they are
// lent from the index's pool so typing does not allocate them per query.
type queryScratch struct {
	res, base matchSet
	parts     []matchSet // one per extra worker of a parallel match
	groups    [groupOther + 1][]int32
	tiers     [tierSubstring + 1][]int32
	out       []int32 // a lazy walk's ranked list
	// cand holds the sessions that may contain candQuery, from the pair
	// index (candOK: set; it is nil when too many to list).
	acc       []uint64
	cand      []int32
	candQuery string
	candOK    bool
}

// maxScratchKeep is the largest buffer (in indices) returned to the pool;
// a larger one is left to the collector so one huge query does not pin
// its buffers.
const maxScratchKeep = 1 << 18

func (s *Snapshot) lendScratch() *queryScratch {
	if s.scratch != nil {
		if sc, ok := s.scratch.Get().(*queryScratch); ok {
			return sc
		}
	}
	return &queryScratch{}
}

func (s *Snapshot) returnScratch(sc *queryScratch) {
	if s.scratch == nil {
		return
	}
	keep := func(b []int32) []int32 {
		if cap(b) > maxScratchKeep {
			return nil
		}
		return b[:0]
	}
	keepSet := func(m *matchSet) {
		m.ids, m.ent = keep(m.ids), keep(m.ent)
		if cap(m.off) > maxScratchKeep {
			m.off = nil
		}
	}
	keepSet(&sc.res)
	keepSet(&sc.base)
	for w := range sc.parts {
		keepSet(&sc.parts[w])
	}
	for g := range sc.groups {
		sc.groups[g] = keep(sc.groups[g])
	}
	for t := range sc.tiers {
		sc.tiers[t] = keep(sc.tiers[t])
	}
	sc.out = keep(sc.out)
	sc.cand = keep(sc.cand)
	if cap(sc.acc) > maxScratchKeep {
		sc.acc = nil
	}
	sc.candQuery, sc.candOK = "", false
	s.scratch.Put(sc)
}

// recentQueries is how many query results a snapshot remembers. While a
// user types, each keystroke extends the previous query, so its matches are
// a subset of the previous matches; a few entries cover several clients
// typing at once.
const recentQueries = 8

// queryCache remembers the matches of recent queries on one snapshot. It is
// a cache: results never depend on it.
type queryCache struct {
	// mu guards entries and next.
	mu      sync.Mutex
	entries [recentQueries]cachedQuery
	next    int
}

type cachedQuery struct {
	query string
	set   matchSet
	valid bool
}

// matching returns the indices of the sessions whose search text contains
// the lowercased, non-empty query, in snapshot order; the slice is
// sc's. It starts from the longest remembered query that the new one
// contains (the previous keystroke's, while typing): when that is a prefix
// of the new one, only the added bytes are compared at each of its
// occurrences; otherwise its matches are searched again. Remembered
// results are copied in and out of the scratch buffers under the lock, so
// the cache reuses its own buffers and typing allocates nothing per
// keystroke.
func (s *Snapshot) matching(query string, sc *queryScratch) []int32 {
	hasBase, prefixLen := false, -1
	s.queries.mu.Lock()
	best := -1
	for k := range s.queries.entries {
		c := &s.queries.entries[k]
		if c.valid && (best < 0 || len(c.query) > len(s.queries.entries[best].query)) && strings.Contains(query, c.query) {
			if c.query == query {
				sc.res.copyFrom(&c.set)
				s.queries.mu.Unlock()
				return sc.res.ids
			}
			best = k
		}
	}
	if best >= 0 {
		c := &s.queries.entries[best]
		sc.base.copyFrom(&c.set)
		hasBase = true
		if c.set.hasOcc && strings.HasPrefix(query, c.query) && s.search.occurrences(query) {
			prefixLen = len(c.query)
		}
	}
	s.queries.mu.Unlock()
	switch {
	case hasBase && len(sc.base.ids) == 0:
		sc.res.reset()
	case prefixLen >= 0:
		s.search.extend(query, prefixLen, &sc.base, &sc.res)
	case hasBase:
		base, paired := sc.base.ids, false
		if cand, ok := s.pairCandidates(query, sc, min(len(base), len(s.Sessions)/denseBase)); ok {
			base, paired = cand, true
		}
		s.search.match(query, base, paired, &sc.res, sc)
	default:
		// The pair index narrows a search from scratch to the sessions
		// that may contain the query, unless most may.
		base, paired := s.pairCandidates(query, sc, len(s.Sessions)/denseBase)
		s.search.match(query, base, paired, &sc.res, sc)
	}
	s.queries.mu.Lock()
	slot := &s.queries.entries[s.queries.next]
	slot.query, slot.valid = query, true
	slot.set.copyFrom(&sc.res)
	s.queries.next = (s.queries.next + 1) % recentQueries
	s.queries.mu.Unlock()
	return sc.res.ids
}

// narrowBase is the most remembered matches a query is narrowed from
// instead of walked lazily (plus a share of the sessions): narrowing
// tests each of them, a dense query's walk stops sooner.
const narrowBase = 1024

// narrowable reports whether query's full match set is cheap: remembered,
// or narrowed from a remembered query it contains that matched at most
// narrowBase + sessions/64 sessions (the base matching would pick).
func (s *Snapshot) narrowable(query string, sessions int) bool {
	if query == "" {
		return false
	}
	s.queries.mu.Lock()
	defer s.queries.mu.Unlock()
	best := -1
	for k := range s.queries.entries {
		c := &s.queries.entries[k]
		if c.valid && (best < 0 || len(c.query) > len(s.queries.entries[best].query)) && strings.Contains(query, c.query) {
			if c.query == query {
				return true
			}
			best = k
		}
	}
	return best >= 0 && len(s.queries.entries[best].set.ids) <= narrowBase+sessions/64
}

// sparseCandidates is the most sessions the pair index may leave for a
// query to be matched in full rather than walked lazily: testing each
// costs about what a dense walk does.
func sparseCandidates(sessions int) int {
	return 256 + sessions/128
}

// pairCandidates lists in sc.cand the sessions the pair index leaves for
// query, when there are at most max; ok is false when there are more, or
// the index cannot narrow query.
func (s *Snapshot) pairCandidates(query string, sc *queryScratch, max int) ([]int32, bool) {
	if !pairsUsable(query) {
		return nil, false
	}
	if sc.candQuery == query && sc.candOK {
		return sc.cand, true
	}
	px := s.pairRows()
	if px == nil {
		return nil, false
	}
	var count int
	sc.acc, count = px.candidates(query, sc.acc)
	if count > max {
		return nil, false
	}
	if sc.cand == nil {
		sc.cand = make([]int32, 0, 64) // none is a result, not "no base"
	}
	sc.cand = appendIDs(sc.cand[:0], sc.acc)
	sc.candQuery, sc.candOK = query, true
	return sc.cand, true
}

// sparse reports whether the pair index leaves few sessions for query, so
// that matching them all is cheaper than a lazy walk.
func (s *Snapshot) sparse(query string, sc *queryScratch) bool {
	_, ok := s.pairCandidates(query, sc, sparseCandidates(len(s.Sessions)))
	return ok
}

// candidateOf builds the §2.2 candidate of an entry, with its Mention when
// mention is set. The candidate's cwd, when it has one, is kept in
// *cwdSlot: a list's candidates share one slice of slots instead of a
// string header allocated for each.
func candidateOf(e *dshlog.Entry, hasTargetCwd bool, targetCwd string, cwdSlot *string, mention bool) Candidate {
	dir, hasDir := e.EffectiveCwd()
	c := Candidate{
		SessionID:     e.ID,
		Label:         e.Label(),
		DisplayTitle:  e.DisplayTitle(),
		SameWorkspace: hasDir && hasTargetCwd && dir == targetCwd,
		CreatedAt:     e.CreatedAt,
	}
	if e.WorkDir != "" && (!e.HasCwd || e.WorkDir != e.Cwd) {
		c.WorkingDirectory = &e.WorkDir
	}
	if mention {
		c.Mention = sessionref.Mention(c.DisplayTitle, e.ID)
	}
	if e.HasCwd {
		*cwdSlot = e.Cwd
		c.Cwd = cwdSlot
	}
	return c
}

// WordMatch reports whether query (as typed) starts a word of c's title
// or display title, or begins its id: the matches that rank above those
// found only inside a word or in the cwd (matchTier above tierSubstring).
// Completion ranks sessions among files by it.
func WordMatch(c Candidate, query string) bool {
	// An untitled session's label and display title are its id.
	title := func(s string) string {
		if s == c.SessionID {
			return ""
		}
		return foldCase(s)
	}
	st := searchText{title: title(c.Label), display: title(c.DisplayTitle), id: foldCase(c.SessionID)}
	return matchTier(&st, foldCase(query)) < tierSubstring
}

// matchTier says how well a lowercased query matches an entry.
func matchTier(st *searchText, query string) int {
	if strings.HasPrefix(st.title, query) || strings.HasPrefix(st.display, query) {
		return tierTitlePrefix
	}
	if words.Index(st.title, query, 0) >= 0 || words.Index(st.display, query, 0) >= 0 {
		return tierWordStart
	}
	if strings.HasPrefix(st.id, query) {
		return tierIDPrefix
	}
	return tierSubstring
}

// CandidateOf builds the §2.2 candidate of the listed session id as
// Candidates would for a query from targetID in targetCwd (the target's
// own cwd wins when it is indexed). It is false for an id that is not
// listed and for the target itself, which is never offered.
func (s *Snapshot) CandidateOf(id, targetID, targetCwd string) (Candidate, bool) {
	e, ok := s.Locate(id)
	if !ok || id == targetID {
		return Candidate{}, false
	}
	targetCwd, hasTargetCwd := s.spellingOf(targetCwd), targetCwd != ""
	if t, ok := s.Locate(targetID); ok {
		targetCwd, hasTargetCwd = t.EffectiveCwd()
	}
	return candidateOf(&e, hasTargetCwd, targetCwd, new(string), true), true
}
