package fileref

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// DefaultFactsCap bounds the time DirFacts spends reading the disk: the
// listings of a walk before the index is built, and the sizes not
// measured yet. A hover waits for it at most once; what is counted by then
// is reported as a lower bound.
const DefaultFactsCap = 100 * time.Millisecond

// maxIgnoredNames bounds the ignored names DirFacts lists.
const maxIgnoredNames = 8

// ErrNotIndexedDir is DirFacts' answer for a path that is not a directory
// the index can enter: missing, a file, or a directory symlink (never
// followed).
var ErrNotIndexedDir = errors.New("not a directory of the workspace index")

// DirFactsOptions bound what DirFacts reads and returns.
type DirFactsOptions struct {
	// Depth is how many levels of the tree below the directory are
	// listed (0: none); Width how many entries per level, the others
	// being summed in one Rest.
	Depth, Width int
	// Cap bounds the time spent reading the disk; 0 means
	// DefaultFactsCap.
	Cap time.Duration
}

// DirFacts describe a mentioned directory: what its files add up to, and a
// compact tree of where the bulk is.
type DirFacts struct {
	Totals
	// Partial: the count stopped at the cap before every path below was
	// listed (only before the index is built); the totals are lower
	// bounds.
	Partial bool
	// Ignored: the directory or one of its parents is ignored, so the
	// index holds nothing in it and nothing is counted.
	Ignored bool
	// IgnoredHere are the ignored entries directly in the directory, by
	// name (a directory's with a trailing "/"), sorted, at most
	// maxIgnoredNames; IgnoredCount counts them all.
	IgnoredHere  []string
	IgnoredCount int
	// Tree is the first level below the directory, biggest first (see
	// Node); Rest sums the entries it leaves out.
	Tree []Node
	Rest Rest
}

// Node is one entry of a directory tree: a file (Totals hold its own
// size) or a directory with its Children, Depth levels deep in all.
type Node struct {
	Name     string
	Dir      bool
	Totals   Totals
	Children []Node
	Rest     Rest
}

// Rest sums the entries of one level that a tree leaves out.
type Rest struct {
	Count  int
	Totals Totals
}

// DirFacts counts the files below the directory rel (root-relative, ""
// for the root) and lists its tree, opt.Depth levels deep and opt.Width
// entries wide, biggest first. Ignored paths are never counted; the names
// ignored directly in rel are listed. Once the index is built the count
// comes from it, and only sizes not measured yet are read from disk;
// before, the directory is walked with the index's rules. Either way the
// disk is read for at most opt.Cap: files not measured by then are counted
// in Unmeasured, and a walk stopped by then makes the facts Partial.
func (ix *Index) DirFacts(ctx context.Context, rel string, opt DirFactsOptions) (DirFacts, error) {
	if err := ctx.Err(); err != nil {
		return DirFacts{}, fmt.Errorf("directory facts of %q: %w", rel, err)
	}
	rel, ok := cleanDirQuery(rel)
	if !ok {
		return DirFacts{}, fmt.Errorf("directory facts of %q: %w", rel, ErrNotIndexedDir)
	}
	f, ignored, ok := ix.dirFrame(rel)
	if !ok {
		return DirFacts{}, fmt.Errorf("directory facts of %q: %w", rel, ErrNotIndexedDir)
	}
	capDur := opt.Cap
	if capDur <= 0 {
		capDur = DefaultFactsCap
	}
	deadline := time.Now().Add(capDur)
	var out DirFacts
	if ignored {
		out.Ignored = true
		return out, nil
	}
	abs := filepath.Join(ix.root, filepath.FromSlash(rel))
	ix.ignoredHere(&out, f, abs)

	tb := newTreeBuilder(opt.Depth)
	prefix := ""
	if rel != "" {
		prefix = rel + "/"
	}
	if ix.built.Load() {
		s := ix.snap.Load()
		for i := range s.entries {
			if i%scanCtxCheckEvery == scanCtxCheckEvery-1 && ctx.Err() != nil {
				return DirFacts{}, fmt.Errorf("directory facts of %q: %w", rel, ctx.Err())
			}
			e := &s.entries[i]
			p := s.path(e)
			if !strings.HasPrefix(p, prefix) || p == rel {
				continue
			}
			size := uint32(0)
			if !e.dir() {
				size = s.sizes[i].Load()
				if size == sizeUnknown && time.Now().Before(deadline) {
					ix.measureOne(s, int32(i))
					size = s.sizes[i].Load()
				}
			}
			tb.add(p[len(prefix):], e, size)
		}
	} else {
		entries, cut, err := ix.walkUntil(ctx, []walkJob{{abs: abs, frame: f}}, 0, deadline)
		if err != nil {
			return DirFacts{}, fmt.Errorf("directory facts of %q: %w", rel, err)
		}
		out.Partial = cut
		for _, r := range entries {
			size := uint32(0)
			if !r.e.dir() {
				size = sizeUnknown
				if time.Now().Before(deadline) {
					if fi, err := os.Stat(filepath.Join(ix.root, filepath.FromSlash(r.path))); err == nil {
						size = recordedSize(fi.Size())
					}
				}
			}
			tb.add(r.path[len(prefix):], &r.e, size)
		}
	}
	out.Totals = tb.total
	out.Tree, out.Rest = tb.tree(opt.Width)
	return out, nil
}

// ignoredHere lists into out the entries of the directory abs (whose
// frame is f) that the rules ignore; ".git" is never listed.
func (ix *Index) ignoredHere(out *DirFacts, f frame, abs string) {
	des, err := os.ReadDir(abs)
	if err != nil && len(des) == 0 {
		return
	}
	var scratch []byte
	for _, de := range des {
		name := de.Name()
		typ := de.Type()
		isDir := typ.IsDir()
		if name == gitDirName || !utf8.ValidString(name) || !isDir && !typ.IsRegular() && typ&fs.ModeSymlink == 0 {
			continue
		}
		if !ix.ignored(&f, name, isDir, &scratch) {
			continue
		}
		out.IgnoredCount++
		if isDir {
			name += "/"
		}
		out.IgnoredHere = append(out.IgnoredHere, name)
	}
	slices.Sort(out.IgnoredHere)
	if len(out.IgnoredHere) > maxIgnoredNames {
		out.IgnoredHere = out.IgnoredHere[:maxIgnoredNames]
	}
}

// treeBuilder sums the entries below one directory, given by their paths
// relative to it, into the directory's totals and the nodes of the paths
// at most depth levels below it.
type treeBuilder struct {
	depth int
	total Totals
	nodes map[string]*Node // by relative path
}

func newTreeBuilder(depth int) *treeBuilder {
	return &treeBuilder{depth: depth, nodes: map[string]*Node{}}
}

// add counts the entry e at rel (a file of recorded size size, or a
// directory) in the totals and in the nodes of its first depth levels.
func (b *treeBuilder) add(rel string, e *entry, size uint32) {
	dir, binary := e.dir(), e.binary()
	if dir {
		b.total.Dirs++
	} else {
		b.total.addFile(binary, size)
	}
	pos := 0
	for k := 1; k <= b.depth; k++ {
		end, last := len(rel), true
		if j := strings.IndexByte(rel[pos:], '/'); j >= 0 {
			end, last = pos+j, false
		}
		n := b.nodes[rel[:end]]
		if n == nil {
			n = &Node{Name: rel[pos:end], Dir: dir || !last}
			b.nodes[rel[:end]] = n
		}
		switch {
		case last && !dir:
			n.Totals.addFile(binary, size) // the file itself
		case last:
			// the directory itself: counted by what is below it
		case dir:
			n.Totals.Dirs++
		default:
			n.Totals.addFile(binary, size)
		}
		if last {
			return
		}
		pos = end + 1
	}
}

// tree returns the nodes directly below the directory, biggest first, at
// most width of them (all when width is 0), each with its own level
// below, and the sum of the others.
func (b *treeBuilder) tree(width int) ([]Node, Rest) {
	below := map[string][]string{} // a path's parent → the paths of its nodes
	for p := range b.nodes {
		parent := ""
		if i := strings.LastIndexByte(p, '/'); i >= 0 {
			parent = p[:i]
		}
		below[parent] = append(below[parent], p)
	}
	var level func(parent string) ([]Node, Rest)
	level = func(parent string) ([]Node, Rest) {
		kids := make([]Node, 0, len(below[parent]))
		for _, p := range below[parent] {
			node := *b.nodes[p]
			if node.Dir {
				node.Children, node.Rest = level(p)
			}
			kids = append(kids, node)
		}
		slices.SortFunc(kids, func(a, c Node) int {
			switch {
			case a.Totals.Tokens() != c.Totals.Tokens():
				return cmpDesc(a.Totals.Tokens(), c.Totals.Tokens())
			case a.Totals.Bytes != c.Totals.Bytes:
				return cmpDesc(a.Totals.Bytes, c.Totals.Bytes)
			case a.Totals.Files != c.Totals.Files:
				return cmpDesc(int64(a.Totals.Files), int64(c.Totals.Files))
			}
			return strings.Compare(a.Name, c.Name)
		})
		var rest Rest
		if width > 0 && len(kids) > width {
			for _, n := range kids[width:] {
				rest.Count++
				rest.Totals.add(n.Totals)
				if n.Dir {
					rest.Totals.Dirs++
				}
			}
			kids = kids[:width]
		}
		return kids, rest
	}
	return level("")
}

// cmpDesc orders larger numbers first.
func cmpDesc(a, b int64) int {
	switch {
	case a > b:
		return -1
	case a < b:
		return 1
	}
	return 0
}
