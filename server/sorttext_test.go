package server

import (
	"fmt"
	"testing"
	"time"
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

// TestHumanAgeWords checks each unit of humanAge and its boundaries.
func TestHumanAgeWords(t *testing.T) {
	now := time.UnixMilli(1_800_000_000_000)
	for _, c := range []struct {
		ago  time.Duration
		want string
	}{
		{0, "just now"}, {59 * time.Second, "just now"}, {time.Minute, "1m ago"}, {59*time.Minute + 59*time.Second, "59m ago"},
		{time.Hour, "1h ago"}, {47 * time.Hour, "47h ago"}, {48 * time.Hour, "2d ago"}, {400 * 24 * time.Hour, "400d ago"},
	} {
		if got := humanAge(now, now.Add(-c.ago).UnixMilli()); got != c.want {
			t.Errorf("humanAge(%v ago) = %q, want %q", c.ago, got, c.want)
		}
	}
}
