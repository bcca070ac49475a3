package sessionref

import (
	"strings"

	"golang.org/x/text/cases"
	"golang.org/x/text/collate"
	"golang.org/x/text/language"
)

// Case folding and id order as dsh's candidate listing has them.
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

// idOrder compares session ids as dsh's localeCompare does: root-locale
// collation, then bytes where the collation sees no difference, so the
// order is total. The zero value is ready; it is not safe for concurrent
// use (the collator keeps buffers).
type idOrder struct {
	col *collate.Collator
}

// compare returns -1, 0 or +1 as a sorts before, with or after b.
func (o *idOrder) compare(a, b string) int {
	if a == b {
		return 0
	}
	if o.col == nil {
		o.col = collate.New(language.Und)
	}
	if c := o.col.CompareString(a, b); c != 0 {
		return c
	}
	return strings.Compare(a, b)
}
