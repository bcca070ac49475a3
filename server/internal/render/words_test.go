package render

import (
	"testing"
	"time"
)

// TestHumanAgeWords checks each unit of Age and its boundaries.
func TestHumanAgeWords(t *testing.T) {
	now := time.UnixMilli(1_800_000_000_000)
	for _, c := range []struct {
		ago  time.Duration
		want string
	}{
		{0, "just now"}, {59 * time.Second, "just now"}, {time.Minute, "1m ago"}, {59*time.Minute + 59*time.Second, "59m ago"},
		{time.Hour, "1h ago"}, {47 * time.Hour, "47h ago"}, {48 * time.Hour, "2d ago"}, {400 * 24 * time.Hour, "400d ago"},
	} {
		if got := Age(now, now.Add(-c.ago).UnixMilli()); got != c.want {
			t.Errorf("Age(%v ago) = %q, want %q", c.ago, got, c.want)
		}
	}
}
