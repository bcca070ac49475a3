package sessionref

import (
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
	query := strings.ToLower(q.Query)
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
	out := make([]Candidate, 0, min(limit, len(groups[0])+len(groups[1])+len(groups[2])))
	for _, members := range groups {
		if len(members) == 0 {
			continue
		}
		if len(out) == limit {
			return out, true, nil
		}
		// Sessions are newest first; bucketing by tier keeps that order
		// within each tier without sorting.
		var tiers [tierSubstring + 1][]int32
		if query == "" {
			tiers[0] = members
		} else {
			for _, i := range members {
				t := matchTier(&s.search[i], query)
				tiers[t] = append(tiers[t], i)
			}
		}
		for _, tier := range tiers {
			for _, i := range tier {
				if len(out) == limit {
					return out, true, nil
				}
				out = append(out, candidateOf(&s.Sessions[i], hasTargetCwd, targetCwd))
			}
		}
	}
	return out, false, nil
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
	need := byteMask(query)
	if base != nil {
		for _, i := range base {
			if st := &s.search[i]; need&^st.bytes == 0 && strings.Contains(st.all, query) {
				out = append(out, i)
			}
		}
	} else {
		for i := range s.search {
			if st := &s.search[i]; need&^st.bytes == 0 && strings.Contains(st.all, query) {
				out = append(out, int32(i))
			}
		}
	}
	s.queries.mu.Lock()
	s.queries.entries[s.queries.next] = cachedQuery{query: query, matches: out, valid: true}
	s.queries.next = (s.queries.next + 1) % recentQueries
	s.queries.mu.Unlock()
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
