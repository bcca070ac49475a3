package sessionref

import (
	"sort"
	"strings"
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
	type hit struct {
		i, group, tier int
	}
	hits := make([]hit, 0, 64)
	for i := range s.Sessions {
		e := &s.Sessions[i]
		if e.ID == q.TargetID {
			continue
		}
		if query != "" && !strings.Contains(s.keys[i], query) {
			continue
		}
		h := hit{i: i, group: groupOther}
		switch {
		case !e.HasCwd:
			h.group = groupNoCwd
		case hasTargetCwd && e.Cwd == targetCwd:
			h.group = groupSameCwd
		}
		if query != "" {
			h.tier = matchTier(e, query)
		}
		hits = append(hits, h)
	}
	// Sessions are already newest first, so a stable sort on (group, tier)
	// keeps that order within each class.
	sort.SliceStable(hits, func(a, b int) bool {
		if hits[a].group != hits[b].group {
			return hits[a].group < hits[b].group
		}
		return hits[a].tier < hits[b].tier
	})
	capped := len(hits) > limit
	if capped {
		hits = hits[:limit]
	}
	out := make([]Candidate, len(hits))
	for k, h := range hits {
		out[k] = candidateOf(&s.Sessions[h.i], hasTargetCwd, targetCwd)
	}
	return out, capped, nil
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
func matchTier(e *Entry, query string) int {
	best := tierSubstring
	for _, title := range [2]string{e.Title, e.DisplayTitle()} {
		lower := strings.ToLower(title)
		if strings.HasPrefix(lower, query) {
			return tierTitlePrefix
		}
		if best > tierWordStart && hasWordStart(lower, query) {
			best = tierWordStart
		}
	}
	if best > tierIDPrefix && strings.HasPrefix(strings.ToLower(e.ID), query) {
		best = tierIDPrefix
	}
	return best
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
