package ignore

// Stack is the chain of lists that applies inside one directory, lowest
// precedence first: the global excludes file, .git/info/exclude, then the
// .gitignore files from the repository root down to the directory. A Stack
// is immutable; Push returns a new one, so a directory walk can hand the
// same Stack to many goroutines.
type Stack struct {
	lists []*List
}

// NewStack returns a stack holding lists, lowest precedence first. Nil
// lists are skipped.
func NewStack(lists ...*List) *Stack {
	s := &Stack{}
	for _, l := range lists {
		if l != nil && len(l.Patterns) > 0 {
			s.lists = append(s.lists, l)
		}
	}
	return s
}

// Push returns a stack with l added at the highest precedence. It returns
// s itself when l has no patterns.
func (s *Stack) Push(l *List) *Stack {
	if l == nil || len(l.Patterns) == 0 {
		return s
	}
	lists := make([]*List, len(s.lists)+1)
	copy(lists, s.lists)
	lists[len(s.lists)] = l
	return &Stack{lists: lists}
}

// Empty reports whether the stack holds no pattern at all.
func (s *Stack) Empty() bool { return s == nil || len(s.lists) == 0 }

// Match applies git's precedence: the deepest list with a matching pattern
// decides, and inside a list the last matching pattern decides. matched is
// false when no pattern matches; otherwise excluded tells whether the
// deciding pattern excludes (true) or re-includes with "!" (false).
func (s *Stack) Match(path, name string, isDir bool) (excluded, matched bool) {
	if s == nil {
		return false, false
	}
	for i := len(s.lists) - 1; i >= 0; i-- {
		if p := s.lists[i].Match(path, name, isDir); p != nil {
			return !p.Negative(), true
		}
	}
	return false, false
}
