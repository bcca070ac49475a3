package completion

import (
	"strings"

	"github.com/dsh-refls/dsh-refls/internal/words"
)

// Rank is where an item of a completion list for a typed word stands: a
// list is ordered by rank, and items of one rank keep the order their
// source gave them (sessions by group, match tier and recency; files by
// fuzzy score; body matches newest first).
//
// A match at a word start (the typed word begins a word of a session's
// title, its id, or a file's path) is what a person means; a session whose
// text holds the typed word at a word start comes next (the word is
// there, in what was said); a match found only inside a word ("rate" in
// "generated") or letter by letter, or in a session's directory, is the
// weakest. Within each, sessions of this workspace come first, then files,
// then sessions of other directories. (Measured on the ranking set,
// scripts/rankset: a body match ranked below every fuzzy file match put
// the Raft session under 13 files for "raft".)
type Rank int

// The ranks, best first.
const (
	RankWorkspaceSession Rank = iota
	RankFile
	RankOtherSession
	RankWorkspaceSessionText
	RankOtherSessionText
	RankWorkspaceSessionInside
	RankFileInside
	RankOtherSessionInside
	// RankCount is how many ranks there are.
	RankCount = iota
)

// SessionRank is the rank of a session that matched the typed word:
// wordStart says it matched at a word start of its title or id (else
// inside a word, or in its directory), byText that only its text matched.
func SessionRank(wordStart, sameWorkspace, byText bool) Rank {
	if byText {
		if sameWorkspace {
			return RankWorkspaceSessionText
		}
		return RankOtherSessionText
	}
	r := RankWorkspaceSession
	if !wordStart {
		r = RankWorkspaceSessionInside
	}
	if !sameWorkspace {
		r += RankOtherSession - RankWorkspaceSession
	}
	return r
}

// FileRank is the rank of a workspace path the fuzzy file search found for
// query: RankFile when the query starts a word of the path (a path
// segment, or a word of a file name: `rate plan.md`), else RankFileInside.
// Both are compared without regard to case.
func FileRank(path, query string) Rank {
	if query != "" && words.Index(strings.ToLower(path), strings.ToLower(query), 0) >= 0 {
		return RankFile
	}
	return RankFileInside
}
