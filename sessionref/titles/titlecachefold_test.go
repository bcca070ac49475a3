package titles

import "testing"

// TestIsFoldedAgreesWithFoldCase checks the restore's allocation-free id
// check against foldCase itself, for ASCII and non-ASCII ids, folded
// texts that are right, off by one byte, or of another length.
func TestIsFoldedAgreesWithFoldCase(t *testing.T) {
	ids := []string{"", "abc-123", "ABC-123", "Mixed_Case.ID", "İstanbul", "ΣΊΣΥΦΟΣ", "straße", "a\x7fZ"}
	for _, id := range ids {
		folded := foldCase(id)
		texts := []string{folded, id, folded + "x", "x" + folded}
		if folded != "" {
			b := []byte(folded)
			b[len(b)-1] ^= 1
			texts = append(texts, string(b), folded[:len(folded)-1])
		}
		for _, text := range texts {
			want := text == folded
			if got := isFolded([]byte(text), id); got != want {
				t.Errorf("isFolded(%q, %q) = %v, want %v", text, id, got, want)
			}
		}
	}
}
