package completion

import (
	"slices"
	"testing"
)

// TestRankOrdersWhatAPersonMeans: for a typed word, word-start matches of
// titles and file names come first (this workspace's sessions, files,
// other sessions), then sessions whose text holds the word at a word start,
// then matches inside a word; this workspace before others at every level.
func TestRankOrdersWhatAPersonMeans(t *testing.T) {
	type row struct {
		name string
		rank Rank
	}
	rows := []row{
		{"body-only session elsewhere", SessionRank(false, false, true)},
		{"body-only session here", SessionRank(false, true, true)},
		{"src/generated/api.ts", FileRank("src/generated/api.ts", "rate")},
		{"session elsewhere titled Rate cards", SessionRank(true, false, false)},
		{"session here whose title holds 'rate' inside a word", SessionRank(false, true, false)},
		{"design notes/rate plan.md", FileRank("design notes/rate plan.md", "rate")},
		{"session here titled Add rate limiting", SessionRank(true, true, false)},
		{"session elsewhere matched inside a word", SessionRank(false, false, false)},
	}
	slices.SortStableFunc(rows, func(a, b row) int { return int(a.rank) - int(b.rank) })
	var got []string
	for _, r := range rows {
		got = append(got, r.name)
	}
	want := []string{
		"session here titled Add rate limiting",
		"design notes/rate plan.md",
		"session elsewhere titled Rate cards",
		"body-only session here",
		"body-only session elsewhere",
		"session here whose title holds 'rate' inside a word",
		"src/generated/api.ts",
		"session elsewhere matched inside a word",
	}
	if !slices.Equal(got, want) {
		t.Errorf("order:\n%q\nwant:\n%q", got, want)
	}
}

func TestFileRank(t *testing.T) {
	for _, tc := range []struct {
		path, query string
		want        Rank
	}{
		{"design notes/rate plan.md", "rate", RankFile},
		{"design notes/rate plan.md", "RATE", RankFile},
		{"src/generated/api.ts", "rate", RankFileInside},
		{"src/generated/", "gen", RankFile},
		{"docs/migration.md", "rat", RankFileInside},
		{"README.md", "md", RankFile},          // after the dot
		{"src/main.go", "smg", RankFileInside}, // fuzzy only
	} {
		if got := FileRank(tc.path, tc.query); got != tc.want {
			t.Errorf("FileRank(%q, %q) = %d, want %d", tc.path, tc.query, got, tc.want)
		}
	}
}
