package watch

import "path/filepath"

// dirSet records the directories under watch as a tree, so that a removed
// or renamed directory drops its whole subtree in time proportional to that
// subtree rather than to everything watched. Entries leave the set when
// their directory goes, so it only ever holds what is watched now.
type dirSet struct {
	// children maps each watched directory to its watched subdirectories.
	children map[string]map[string]struct{}
}

func newDirSet() *dirSet {
	return &dirSet{children: make(map[string]map[string]struct{})}
}

// add records dir; it reports false when dir was already present.
func (s *dirSet) add(dir string) bool {
	if _, ok := s.children[dir]; ok {
		return false
	}
	s.children[dir] = nil
	parent := filepath.Dir(dir)
	if kids, ok := s.children[parent]; ok && parent != dir {
		if kids == nil {
			kids = make(map[string]struct{})
			s.children[parent] = kids
		}
		kids[dir] = struct{}{}
	}
	return true
}

func (s *dirSet) has(dir string) bool {
	_, ok := s.children[dir]
	return ok
}

func (s *dirSet) len() int { return len(s.children) }

// removeTree drops dir and every watched directory below it, calling
// forget for each (deepest first).
func (s *dirSet) removeTree(dir string, forget func(string)) {
	kids, ok := s.children[dir]
	if !ok {
		return
	}
	for kid := range kids {
		s.removeTree(kid, forget)
	}
	delete(s.children, dir)
	if parentKids := s.children[filepath.Dir(dir)]; parentKids != nil {
		delete(parentKids, dir)
	}
	forget(dir)
}

// all returns every watched directory, in no particular order.
func (s *dirSet) all() []string {
	out := make([]string, 0, len(s.children))
	for d := range s.children {
		out = append(out, d)
	}
	return out
}

// clear empties the set, calling forget for each directory.
func (s *dirSet) clear(forget func(string)) {
	for d := range s.children {
		forget(d)
	}
	s.children = make(map[string]map[string]struct{})
}
