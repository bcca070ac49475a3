package recall

// FirstHit returns the bytes [start, end) of text that hold the first hit
// of query's words and phrases, parsed and folded as Search parses them:
// the earliest hit where a term starts a word (internal/words, the rule of
// completion's body matches), else the earliest hit anywhere (dsh/search
// matches substrings); at one offset the longer term wins. ok is false when
// text holds no term. A bad query is a *QueryError. It is what a preview
// opened from a search hit selects in the message (server/preview_hit.go).
func FirstHit(text, query string) (start, end int, ok bool, err error) {
	f := newFolder()
	terms, err := parseQuery(f, query)
	if err != nil {
		return 0, 0, false, err
	}
	folded := f.fold(text)
	for _, wordStart := range []bool{true, false} {
		first, term := -1, ""
		for _, t := range terms {
			i := indexAt(folded, t, wordStart)
			if i >= 0 && (first < 0 || i < first || i == first && len(t) > len(term)) {
				first, term = i, t
			}
		}
		if first < 0 {
			continue
		}
		ascii := isASCII(text)
		starts, ends := mapper{f: f, s: text, ascii: ascii}, mapper{f: f, s: text, ascii: ascii}
		start, _ = starts.runeAt(first)
		_, end = ends.runeAt(first + len(term) - 1)
		return start, end, true, nil
	}
	return 0, 0, false, nil
}
