package fileref

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	"go.uber.org/zap"

	"github.com/dsh-refls/dsh-refls/fileref/ignore"
)

// Kind tells files from directories in candidates and facts.
type Kind string

const (
	// KindFile is a regular file, or a symlink to one inside the workspace.
	KindFile Kind = "file"
	// KindDirectory is a directory (never a symlink to one).
	KindDirectory Kind = "directory"
)

// DefaultExcludedNames returns the directory names skipped when Options
// leaves ExcludedNames nil: version-control internals and dependency trees
// that are rarely what a user means to mention.
func DefaultExcludedNames() []string { return []string{".git", "node_modules"} }

// gitDirName is never indexed nor listed, whatever the configuration says:
// it holds repository internals, not workspace files.
const gitDirName = ".git"

// Ignore file names read in every directory.
const (
	gitignoreName = ".gitignore"
	dshignoreName = ".dshignore"
)

// Options configure Build.
type Options struct {
	// Root is the workspace directory. It must exist.
	Root string
	// ExcludedNames are directory names never entered (nil means
	// DefaultExcludedNames; an empty non-nil slice excludes only .git).
	ExcludedNames []string
	// Logger receives skipped paths and read failures; nil discards them.
	Logger *zap.Logger
	// Parallelism is the number of directory readers; 0 picks a default
	// from GOMAXPROCS.
	Parallelism int
	// GitEnv decides where the git configuration and the global excludes
	// file are looked up; nil reads the process environment.
	GitEnv *ignore.Env
}

// readersPerCore: directory reads block in the kernel part of the time,
// so a little oversubscription keeps both cores busy on a warm cache.
const readersPerCore = 2

// Index is the live file index of one workspace. All methods are safe for
// concurrent use; Apply calls are serialised among themselves.
type Index struct {
	root     string // absolute, cleaned
	realRoot string // root with symlinks resolved
	log      *zap.Logger
	excluded map[string]bool
	env      ignore.Env
	workers  int
	// lists caches parsed ignore and git config files, so that listings
	// typed a keystroke at a time stat them instead of re-reading them.
	lists *ignore.Cache

	snap atomic.Pointer[snapshot]
	// built is set once the whole tree has been read (Build).
	built atomic.Bool

	// applyMu makes Apply the single writer of snap.
	applyMu sync.Mutex

	// cacheMu guards cache, the recent fuzzy results that longer queries
	// narrow instead of rescanning.
	cacheMu sync.Mutex
	cache   []*cachedQuery
}

// snapshot is one immutable generation of the index.
type snapshot struct {
	entries []entry
	files   int
}

// entry is one indexed path.
type entry struct {
	path string // root-relative, "/"-separated, no trailing slash
	low  string // path lower-cased (shares path's bytes when equal); ASCII paths only
	mask uint64 // characters present, for quick rejection (see charMask)
	// bounds bound the score without scoring; ASCII paths only.
	bounds   pathBounds
	baseOff  int32 // byte offset of the base name in path
	dir      bool
	hidden   bool // some component starts with "."
	nonASCII bool
}

// newEntryIn is newEntry for dir+name, with the path (and its lower-case
// form, when different) packed into a.
func newEntryIn(a *arena, dir, name string, isDir, hidden bool) entry {
	path := a.join(dir, name)
	e := entry{path: path, dir: isDir, hidden: hidden}
	e.baseOff = int32(len(dir))
	e.mask, e.nonASCII = charMask(path)
	if !e.nonASCII {
		e.low = path
		if hasUpperASCII(path) {
			e.low = a.lower(path)
		}
		e.bounds = boundsOf(path, int(e.baseOff))
	}
	return e
}

func newEntry(path string, dir, hidden bool) entry {
	e := entry{path: path, dir: dir, hidden: hidden}
	e.baseOff = int32(strings.LastIndexByte(path, '/') + 1)
	e.mask, e.nonASCII = charMask(path)
	if !e.nonASCII {
		e.low = lowerASCII(path)
		e.bounds = boundsOf(path, int(e.baseOff))
	}
	return e
}

// Open prepares the index of the workspace described by opts without
// reading it: listings (an empty query, or one containing "/") are
// answered live from disk at once with the rules of SPEC §3, and fuzzy
// queries from a bounded walk, until Build (or Index.Build) has read the
// whole tree. It fails only when the root itself cannot be used.
func Open(opts Options) (*Index, error) {
	if opts.Root == "" {
		return nil, errors.New("opening file index: no workspace root given")
	}
	root, err := filepath.Abs(opts.Root)
	if err != nil {
		return nil, fmt.Errorf("opening file index: resolving root %s: %w", opts.Root, err)
	}
	fi, err := os.Stat(root)
	if err != nil {
		return nil, fmt.Errorf("opening file index: %w", err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("opening file index: root %s is not a directory", root)
	}
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return nil, fmt.Errorf("opening file index: resolving root %s: %w", root, err)
	}
	ix := &Index{
		root:     root,
		realRoot: realRoot,
		log:      opts.Logger,
		excluded: map[string]bool{gitDirName: true},
		workers:  opts.Parallelism,
		lists:    ignore.NewCache(),
	}
	if ix.log == nil {
		ix.log = zap.NewNop()
	}
	names := opts.ExcludedNames
	if names == nil {
		names = DefaultExcludedNames()
	}
	for _, n := range names {
		ix.excluded[n] = true
	}
	if opts.GitEnv != nil {
		ix.env = *opts.GitEnv
	} else {
		ix.env = ignore.EnvFromOS()
	}
	if ix.workers <= 0 {
		ix.workers = readersPerCore * runtime.GOMAXPROCS(0)
	}
	ix.snap.Store(&snapshot{})
	return ix, nil
}

// Build opens the index of the workspace described by opts and reads the
// whole tree. It fails only when the root itself cannot be used;
// unreadable directories inside it are logged and skipped.
func Build(ctx context.Context, opts Options) (*Index, error) {
	ix, err := Open(opts)
	if err != nil {
		return nil, fmt.Errorf("building file index: %w", err)
	}
	if err := ix.Build(ctx); err != nil {
		return nil, err
	}
	return ix, nil
}

// Build reads the whole tree of an opened index and publishes it; from
// then on fuzzy queries are answered from memory.
func (ix *Index) Build(ctx context.Context) error {
	entries, err := ix.walk(ctx, []walkJob{{abs: ix.root, frame: ix.outerFrame()}}, 0)
	if err != nil {
		return fmt.Errorf("building file index of %s: %w", ix.root, err)
	}
	ix.publish(entries)
	ix.built.Store(true)
	ix.log.Debug("file index built", zap.String("root", ix.root), zap.Int("paths", len(entries)))
	return nil
}

// Root returns the absolute workspace root.
func (ix *Index) Root() string { return ix.root }

// Len returns the number of indexed paths (files and directories).
func (ix *Index) Len() int { return len(ix.snap.Load().entries) }

// Files returns the number of indexed files.
func (ix *Index) Files() int { return ix.snap.Load().files }

// Paths returns every indexed path, directories with a trailing "/", in no
// particular order. It copies; use it for status and tests, not per keystroke.
func (ix *Index) Paths() []string {
	s := ix.snap.Load()
	out := make([]string, len(s.entries))
	for i, e := range s.entries {
		out[i] = e.path
		if e.dir {
			out[i] += "/"
		}
	}
	return out
}

// publish installs a new snapshot and drops narrowing state of the old one.
func (ix *Index) publish(entries []entry) {
	s := &snapshot{entries: entries}
	for i := range entries {
		if !entries[i].dir {
			s.files++
		}
	}
	ix.snap.Store(s)
	ix.cacheMu.Lock()
	ix.cache = nil
	ix.cacheMu.Unlock()
}
