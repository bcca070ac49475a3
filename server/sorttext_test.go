package server

import (
	"fmt"
	"testing"
)

// TestSortTextPadsAsFmt compares sortText with fmt's zero padding, across
// the width and past it.
func TestSortTextPadsAsFmt(t *testing.T) {
	for _, rank := range []int{1, 2, 9, 10, 99, 100, 999, 1000, 9999, 10000, 99999, 100000, 123456} {
		if got, want := sortText(rank), fmt.Sprintf("%0*d", sortTextWidth, rank); got != want {
			t.Errorf("sortText(%d) = %q, want %q", rank, got, want)
		}
	}
}
