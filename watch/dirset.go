package watch

import (
	"path/filepath"
	"slices"
	"strings"
)

// dirSet records the directories under watch. Entries leave the set when
// their directory goes, so it only ever holds what is watched now.
//
// It is flat: one set of paths, and a count of watched subdirectories for
// the few directories that have any. A sessions root of 100,000 session
// directories is nearly all leaves, and a map of each directory's children
// (the first form) held a second entry for every one of them: 11.6 MB at
// 100,000 sessions and a 150,002-file workspace against ~3 MB now. Removing
// a leaf, as deleting a session does, stays O(1); removing a directory
// that has watched subdirectories scans the set once.
type dirSet struct {
	dirs map[string]struct{}
	// kids counts the watched subdirectories of each watched directory
	// that has at least one.
	kids map[string]int32
}

func newDirSet() *dirSet {
	return &dirSet{dirs: make(map[string]struct{}), kids: make(map[string]int32)}
}

// add records dir; it reports false when dir was already present.
func (s *dirSet) add(dir string) bool {
	if _, ok := s.dirs[dir]; ok {
		return false
	}
	s.dirs[dir] = struct{}{}
	if parent := filepath.Dir(dir); parent != dir {
		if _, ok := s.dirs[parent]; ok {
			s.kids[parent]++
		}
	}
	return true
}

func (s *dirSet) has(dir string) bool {
	_, ok := s.dirs[dir]
	return ok
}

func (s *dirSet) len() int { return len(s.dirs) }

// removeTree drops dir and every watched directory below it, calling
// forget for each (deepest first).
func (s *dirSet) removeTree(dir string, forget func(string)) {
	if _, ok := s.dirs[dir]; !ok {
		return
	}
	if s.kids[dir] > 0 {
		prefix := dir
		if !strings.HasSuffix(prefix, string(filepath.Separator)) {
			prefix += string(filepath.Separator)
		}
		var below []string
		for d := range s.dirs {
			if strings.HasPrefix(d, prefix) {
				below = append(below, d)
			}
		}
		// A path below another is longer than it: longest first is
		// deepest first.
		slices.SortFunc(below, func(a, b string) int { return len(b) - len(a) })
		for _, d := range below {
			delete(s.dirs, d)
			delete(s.kids, d)
			forget(d)
		}
	}
	delete(s.dirs, dir)
	delete(s.kids, dir)
	if parent := filepath.Dir(dir); parent != dir {
		if n, ok := s.kids[parent]; ok {
			if n <= 1 {
				delete(s.kids, parent)
			} else {
				s.kids[parent] = n - 1
			}
		}
	}
	forget(dir)
}

// all returns every watched directory, in no particular order.
func (s *dirSet) all() []string {
	out := make([]string, 0, len(s.dirs))
	for d := range s.dirs {
		out = append(out, d)
	}
	return out
}

// clear empties the set, calling forget for each directory.
func (s *dirSet) clear(forget func(string)) {
	for d := range s.dirs {
		forget(d)
	}
	s.dirs = make(map[string]struct{})
	s.kids = make(map[string]int32)
}
