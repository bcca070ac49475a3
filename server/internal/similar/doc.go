// Package similar measures how alike two names are, for the quick fixes
// that offer a known name in place of an unknown one: bigram similarity
// of titles and edit distance of paths, both folded to lower case.
package similar
