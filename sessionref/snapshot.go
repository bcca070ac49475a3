package sessionref

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"go.uber.org/zap"
)

// Snapshot is an immutable view of the title index. Readers may keep it as
// long as they like; the index publishes a new one after every change.
type Snapshot struct {
	// Root is the sessions root.
	Root string
	// Sessions are the listed sessions, newest first (createdAt descending,
	// ties by id).
	Sessions []Entry
	// Skipped are sessions and files left out, with reasons.
	Skipped []Skipped
	// Updated is when this snapshot was published.
	Updated time.Time
	// Building is true until the first build finished.
	Building bool

	byID map[string]int
	keys []string // lowercased search text, parallel to Sessions
}

// Locate finds a listed session by id. It implements Locator.
func (s *Snapshot) Locate(id string) (Entry, bool) {
	i, ok := s.byID[id]
	if !ok {
		return Entry{}, false
	}
	return s.Sessions[i], true
}

// searchKey is the lowercased text a query matches: id, cwd, title and
// display title, separated by a byte no query can span.
func searchKey(e *Entry) string {
	return strings.ToLower(e.ID + "\x00" + e.Cwd + "\x00" + e.Title + "\x00" + e.DisplayTitle())
}

// publishLocked builds and publishes a snapshot from the writer's state.
func (ix *Index) publishLocked(building bool) {
	snap := &Snapshot{Root: ix.root, Updated: time.Now(), Building: building}
	byID := map[string][]*tracked{}
	for _, t := range ix.tracked {
		if t.skip != "" {
			continue
		}
		byID[t.entry.ID] = append(byID[t.entry.ID], t)
	}
	type row struct {
		entry Entry
		key   string
	}
	rows := make([]row, 0, len(byID))
	for id, ts := range byID {
		if len(ts) > 1 {
			for _, t := range ts {
				reason := fmt.Sprintf("session id %q appears in %d directories; all are skipped", id, len(ts))
				snap.Skipped = append(snap.Skipped, Skipped{Path: t.dir.path, Reason: reason})
			}
			continue
		}
		rows = append(rows, row{entry: ts[0].entry, key: ts[0].key})
	}
	sort.Slice(rows, func(i, j int) bool {
		a, b := &rows[i].entry, &rows[j].entry
		if a.CreatedAt != b.CreatedAt {
			return a.CreatedAt > b.CreatedAt
		}
		return a.ID < b.ID
	})
	snap.Sessions = make([]Entry, len(rows))
	snap.keys = make([]string, len(rows))
	snap.byID = make(map[string]int, len(rows))
	for i, r := range rows {
		snap.Sessions[i], snap.keys[i] = r.entry, r.key
		snap.byID[r.entry.ID] = i
	}
	for _, t := range ix.tracked {
		if t.skip != "" {
			snap.Skipped = append(snap.Skipped, Skipped{Path: t.dir.path, Reason: t.skip})
		}
	}
	for _, s := range ix.skipped {
		snap.Skipped = append(snap.Skipped, s)
	}
	sort.Slice(snap.Skipped, func(i, j int) bool { return snap.Skipped[i].Path < snap.Skipped[j].Path })
	prev := ix.snap.Load()
	ix.snap.Store(snap)
	ix.logNewSkips(prev, snap)
}

// logNewSkips logs each skip reason once, when it first appears.
func (ix *Index) logNewSkips(prev, next *Snapshot) {
	old := map[Skipped]bool{}
	if prev != nil {
		for _, s := range prev.Skipped {
			old[s] = true
		}
	}
	for _, s := range next.Skipped {
		if !old[s] {
			ix.log.Info("session skipped", zap.String("path", s.Path), zap.String("reason", s.Reason))
		}
	}
}
