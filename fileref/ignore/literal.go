package ignore

import (
	"strings"
	"sync"
)

// literalIndexMin is the length from which a List finds its literal
// patterns by lookup instead of trying each: below it, trying each costs
// no more. A .gitignore of 100,000 generated names was tried pattern by
// pattern for every path, and every listing of the workspace root took
// 5-9 s.
const literalIndexMin = 64

// literalIndex finds a long List's patterns that hold no glob special (a
// name like "build-1234.log", or a path like "out/gen/a.js") by lookup:
// such a pattern matches exactly one name or path; and the patterns "*."
// + an extension ("*.log"), by the extension of the name. The other
// patterns are tried one by one, as in a short List.
type literalIndex struct {
	// byName holds the patterns without a slash, by the base name each
	// matches; byPath those with one, by the path relative to the List's
	// Base each matches. Indices ascend in every slice.
	byName map[string][]int32
	byPath map[string][]int32
	// byExt holds the patterns "*.<ext>" (no slash, no other special, no
	// other dot) by ext.
	byExt map[string][]int32
	// others holds the indices of every other pattern, ascending.
	others []int32
}

// listIndex is the lazily built literalIndex of a List.
type listIndex struct {
	once sync.Once
	lit  *literalIndex
}

// literals returns the literal index of l, built on first use.
func (l *List) literals() *literalIndex {
	l.index.once.Do(func() {
		ix := &literalIndex{byName: map[string][]int32{}, byPath: map[string][]int32{}, byExt: map[string][]int32{}}
		for i := range l.Patterns {
			p := &l.Patterns[i]
			switch {
			case p.flags&(flagNoDir|flagEndsWith) == flagNoDir|flagEndsWith && strings.HasPrefix(p.text, "*.") && !strings.Contains(p.text[2:], "."):
				ix.byExt[p.text[2:]] = append(ix.byExt[p.text[2:]], int32(i))
			case p.noWildLen != len(p.text):
				ix.others = append(ix.others, int32(i))
			case p.flags&flagNoDir != 0:
				ix.byName[p.text] = append(ix.byName[p.text], int32(i))
			default:
				ix.byPath[p.text] = append(ix.byPath[p.text], int32(i))
			}
		}
		l.index.lit = ix
	})
	return l.index.lit
}

// matchIndexed is Match for a long List: the last matching pattern among
// the literal ones that name exactly name or path, and the others tried
// from the end down to it.
func (l *List) matchIndexed(path, name string, isDir bool) *Pattern {
	ix := l.literals()
	best := int32(-1)
	lastOf := func(candidates []int32) {
		for k := len(candidates) - 1; k >= 0 && candidates[k] > best; k-- {
			if l.matches(int(candidates[k]), path, name, isDir) {
				best = candidates[k]
				return
			}
		}
	}
	lastOf(ix.byName[name])
	if dot := strings.LastIndexByte(name, '.'); dot >= 0 {
		lastOf(ix.byExt[name[dot+1:]])
	}
	if len(path) > len(l.Base) && path[:len(l.Base)] == l.Base {
		lastOf(ix.byPath[path[len(l.Base):]])
	}
	for k := len(ix.others) - 1; k >= 0 && ix.others[k] > best; k-- {
		if l.matches(int(ix.others[k]), path, name, isDir) {
			return &l.Patterns[ix.others[k]]
		}
	}
	if best < 0 {
		return nil
	}
	return &l.Patterns[best]
}
