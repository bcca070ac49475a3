package titles

import (
	"strings"

	"golang.org/x/text/cases"
	"golang.org/x/text/language"
)

// Case folding and id order as dsh's candidate listing has them (the
// order of tied ids is internal/idorder's).
//
// dsh lowercases the query and every searched field with JavaScript's
// toLocaleLowerCase() (packages/context/session-reference/src/index.ts,
// listCandidates): full Unicode case mapping, so "ΟΣ" becomes "ος" (final
// sigma) and "İ" becomes "i̇" (i and U+0307), not unicode.ToLower per rune.
// It lists sessions newest first with ties ordered by localeCompare of the
// ids (packages/session-query/session-query/src/corpus.ts): "b" before "B",
// "é…" before "t…". golang.org/x/text gives both for the root locale, which
// is what Node answers under the usual en-US default; a dsh started under a
// Turkish or Lithuanian locale would fold "I" differently, which is not
// followed here.

// foldCase is s.toLocaleLowerCase() under the root locale.
func foldCase(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			// A Caser keeps state between calls; one per call keeps
			// foldCase safe for concurrent use.
			return cases.Lower(language.Und).String(s)
		}
	}
	return strings.ToLower(s)
}
