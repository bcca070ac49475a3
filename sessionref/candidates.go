package sessionref

import (
	"runtime"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

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
		return nil, false, Errorf(CodeInvalidReference, "candidate limit must be positive, got %d", q.Limit)
	}
	targetCwd, hasTargetCwd := q.TargetCwd, q.TargetCwd != ""
	if t, ok := s.Locate(q.TargetID); ok {
		targetCwd, hasTargetCwd = t.Cwd, t.HasCwd
	}
	query := foldCase(q.Query)
	// Split the matches by group first (cheap), then rank only as many
	// groups as the limit reaches: match quality is computed for the
	// sessions that can still make the list, not for every match.
	var groups [groupOther + 1][]int32
	for _, i := range s.matching(query) {
		e := &s.Sessions[i]
		if e.ID == q.TargetID {
			continue
		}
		g := groupOther
		switch {
		case !e.HasCwd:
			g = groupNoCwd
		case hasTargetCwd && e.Cwd == targetCwd:
			g = groupSameCwd
		}
		groups[g] = append(groups[g], i)
	}
	total := len(groups[0]) + len(groups[1]) + len(groups[2])
	capped := total > limit
	out := make([]Candidate, 0, min(limit, total))
	for _, members := range groups {
		need := limit - len(out)
		if need == 0 {
			break
		}
		// Sessions are newest first; bucketing by tier keeps that order
		// within each tier without sorting. Once the best tier alone fills
		// what the list still needs, no later session can displace those,
		// so the rest of the group is not ranked at all.
		var tiers [tierSubstring + 1][]int32
		if query == "" {
			tiers[0] = members
		} else {
			for _, i := range members {
				t := matchTier(&s.search[i], query)
				tiers[t] = append(tiers[t], i)
				if len(tiers[0]) == need && !q.ByActivity {
					break
				}
			}
		}
		if q.ByActivity {
			for t := range tiers {
				tiers[t] = s.mostActive(tiers[t], need)
			}
		}
		for _, tier := range tiers {
			for _, i := range tier {
				if len(out) == limit {
					return out, capped, nil
				}
				out = append(out, candidateOf(&s.Sessions[i], hasTargetCwd, targetCwd))
			}
		}
	}
	return out, capped, nil
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
	query   string
	matches []int32
	valid   bool
}

// matching returns the indices of the sessions whose search text contains
// the lowercased query, in snapshot order. It narrows the matches of the
// longest remembered query that the new one contains instead of scanning
// every session.
func (s *Snapshot) matching(query string) []int32 {
	if query == "" {
		all := make([]int32, len(s.Sessions))
		for i := range all {
			all[i] = int32(i)
		}
		return all
	}
	var base []int32
	s.queries.mu.Lock()
	bestLen := -1
	for _, c := range s.queries.entries {
		if c.valid && len(c.query) > bestLen && strings.Contains(query, c.query) {
			if c.query == query {
				s.queries.mu.Unlock()
				return c.matches
			}
			base, bestLen = c.matches, len(c.query)
		}
	}
	s.queries.mu.Unlock()
	var out []int32
	need, needPairs := byteSetOf(query), pairSetOf(query)
	// A one-byte query is answered by the byte sets alone; longer ones are
	// searched for only where every byte and byte pair may occur.
	contains := func(st *searchText) bool {
		return st.bytes.covers(&need) &&
			(len(query) == 1 || st.pairs.covers(&needPairs) && strings.Contains(st.all, query))
	}
	if base == nil {
		base = make([]int32, len(s.search))
		for i := range base {
			base[i] = int32(i)
		}
	}
	out = filterParallel(base, func(i int32) bool { return contains(&s.search[i]) })
	s.queries.mu.Lock()
	s.queries.entries[s.queries.next] = cachedQuery{query: query, matches: out, valid: true}
	s.queries.next = (s.queries.next + 1) % recentQueries
	s.queries.mu.Unlock()
	return out
}

// parallelFilterMin is the number of sessions above which a query is
// matched on every core: below it, starting goroutines costs more than it
// saves.
const parallelFilterMin = 4096

// filterParallel returns the members of in for which keep is true, in
// order, splitting large inputs across GOMAXPROCS goroutines.
func filterParallel(in []int32, keep func(int32) bool) []int32 {
	workers := runtime.GOMAXPROCS(0)
	if len(in) < parallelFilterMin || workers < 2 {
		var out []int32
		for _, i := range in {
			if keep(i) {
				out = append(out, i)
			}
		}
		return out
	}
	parts := make([][]int32, workers)
	chunk := (len(in) + workers - 1) / workers
	var wg sync.WaitGroup
	for w := range parts {
		lo, hi := min(w*chunk, len(in)), min((w+1)*chunk, len(in))
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, i := range in[lo:hi] {
				if keep(i) {
					parts[w] = append(parts[w], i)
				}
			}
		}()
	}
	wg.Wait()
	var out []int32
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// candidateOf builds the §2.2 candidate of an entry.
func candidateOf(e *Entry, hasTargetCwd bool, targetCwd string) Candidate {
	c := Candidate{
		SessionID:     e.ID,
		Label:         e.Label(),
		DisplayTitle:  e.DisplayTitle(),
		SameWorkspace: e.HasCwd && hasTargetCwd && e.Cwd == targetCwd,
		CreatedAt:     e.CreatedAt,
		Mention:       Mention(e.DisplayTitle(), e.ID),
	}
	if e.HasCwd {
		cwd := e.Cwd
		c.Cwd = &cwd
	}
	return c
}

// matchTier says how well a lowercased query matches an entry.
func matchTier(st *searchText, query string) int {
	if strings.HasPrefix(st.title, query) || strings.HasPrefix(st.display, query) {
		return tierTitlePrefix
	}
	if hasWordStart(st.title, query) || hasWordStart(st.display, query) {
		return tierWordStart
	}
	if strings.HasPrefix(st.id, query) {
		return tierIDPrefix
	}
	return tierSubstring
}

// hasWordStart reports whether query occurs in s right after a non-letter,
// non-digit character.
func hasWordStart(s, query string) bool {
	for off := 0; ; {
		i := strings.Index(s[off:], query)
		if i < 0 {
			return false
		}
		at := off + i
		if at == 0 {
			return true
		}
		prev, _ := utf8.DecodeLastRuneInString(s[:at])
		if !unicode.IsLetter(prev) && !unicode.IsDigit(prev) {
			return true
		}
		off = at + 1
	}
}
