package recall

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// A query word holds no white space, so it occurs in a session exactly
// when it is a substring of one of the session's tokens: the maximal runs
// of folded text without white space (unicode.IsSpace, as the query is
// split; folding never turns a non-space rune into a space). The index
// therefore keeps a dictionary of every token up to maxTokenBytes and, per
// token, the sessions holding it: a word's sessions are the union of the
// postings of the dictionary tokens containing it, found by scanning the
// dictionary, with no text read. Conversation text has few distinct tokens
// (dshgen's 10,000-session store: about 1,100 in 400 sessions, 300 per
// session), so the scan takes microseconds where the trigram postings left
// nearly every session to be read: in dshgen text every trigram is in every
// session, and a word whose trigrams are all common but which is itself
// rare made a search decode whole sessions (p99 46 ms in-process on the
// 300-session store, 68 ms for one query).
//
// Longer tokens (paths, URLs, CJK text, which has no spaces) are not in
// the dictionary: their trigrams are posted instead, for the sessions
// holding any (doc.long), and a word found that way is checked in the
// session's text. Phrases with spaces are checked in the text too, after
// each of their pieces passed the dictionary.
const maxTokenBytes = 64

// tokenSet collects the distinct tokens of one session.
type tokenSet struct {
	seen map[string]struct{}
	// long is set when a token longer than maxTokenBytes was seen.
	long bool
}

func newTokenSet() *tokenSet { return &tokenSet{seen: map[string]struct{}{}} }

func (ts *tokenSet) reset() {
	clear(ts.seen)
	ts.long = false
}

// add splits folded, the folding of one message, into tokens; those longer
// than maxTokenBytes go to gs as trigrams instead.
func (ts *tokenSet) add(folded []byte, gs *gramSet) {
	for i := 0; i < len(folded); {
		n := spaceAt(folded, i)
		if n > 0 {
			i += n
			continue
		}
		j := i
		for j < len(folded) && spaceAt(folded, j) == 0 {
			if folded[j] < utf8.RuneSelf {
				j++
			} else {
				_, sz := utf8.DecodeRune(folded[j:])
				j += sz
			}
		}
		tok := folded[i:j]
		if len(tok) > maxTokenBytes {
			ts.long = true
			gs.add(tok)
		} else if _, ok := ts.seen[string(tok)]; !ok {
			ts.seen[string(tok)] = struct{}{}
		}
		i = j
	}
}

// spaceAt returns the length of the white-space rune at s[i], 0 when it is
// not one.
func spaceAt(s []byte, i int) int {
	c := s[i]
	if c < utf8.RuneSelf {
		if c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r' {
			return 1
		}
		return 0
	}
	r, n := utf8.DecodeRune(s[i:])
	if r != utf8.RuneError && unicode.IsSpace(r) {
		return n
	}
	return 0
}

// dictionary maps tokens to ids; ids only grow, and the token of an id
// never changes, so a view reads a prefix of the list while a sync appends.
type dictionary struct {
	ids    map[string]uint32
	tokens []string
}

func newDictionary() *dictionary { return &dictionary{ids: map[string]uint32{}} }

// idsOf returns the sorted ids of tokens, adding the new ones.
func (d *dictionary) idsOf(tokens map[string]struct{}) []uint32 {
	out := make([]uint32, 0, len(tokens))
	for t := range tokens {
		id, ok := d.ids[t]
		if !ok {
			id = uint32(len(d.tokens))
			d.ids[t] = id
			d.tokens = append(d.tokens, t)
		}
		out = append(out, id)
	}
	slices.Sort(out)
	return out
}

// containing returns the ids of the tokens of dict that hold piece.
func containing(dict []string, piece string) []uint32 {
	var out []uint32
	for i, t := range dict {
		if len(t) >= len(piece) && strings.Contains(t, piece) {
			out = append(out, uint32(i))
		}
	}
	return out
}

// intersects reports whether two sorted id lists share an id.
func intersects(a, b []uint32) bool {
	for i, j := 0, 0; i < len(a) && j < len(b); {
		switch {
		case a[i] == b[j]:
			return true
		case a[i] < b[j]:
			i++
		default:
			j++
		}
	}
	return false
}
