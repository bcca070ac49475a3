package main

import (
	"slices"
	"testing"
)

// TestFTS5ClassesTakeWholeWordsAndAdjacentPairs: the last word of a typed
// window may be cut and is left out; a phrase is two adjacent words with
// one space between them in the text, not across punctuation; substrings
// start inside a word.
func TestFTS5ClassesTakeWholeWordsAndAdjacentPairs(t *testing.T) {
	cs := fts5Classes([]string{"Deploy the watcher, retry backo", "to of debounce now"})
	if len(cs) != 3 {
		t.Fatalf("got %d classes, want words, phrases, substrings", len(cs))
	}
	words, phrases, subs := cs[0], cs[1], cs[2]
	if want := []string{issueWord, "deploy", "the", "watcher", "retry", "debounce"}; !slices.Equal(words.terms, want) {
		t.Errorf("words %q, want %q", words.terms, want)
	}
	if want := []string{issuePhrase, "deploy the", "the watcher"}; !slices.Equal(phrases.terms, want) || !phrases.phrase {
		t.Errorf("phrases %q (phrase %v), want %q", phrases.terms, phrases.phrase, want)
	}
	if want := []string{"epl", "eploy", "atc", "atche", "ebo", "eboun"}; !slices.Equal(subs.terms, want) || !subs.substring {
		t.Errorf("substrings %q (substring %v), want %q", subs.terms, subs.substring, want)
	}
	if got := phrases.recallText("deploy the"); got != `"deploy the"` {
		t.Errorf("recall text of a phrase %q", got)
	}
	if got := ftsMatch(`a"b`); got != `"a""b"` {
		t.Errorf("ftsMatch quotes a quote as %q", got)
	}
}
