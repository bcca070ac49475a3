package fileref

import (
	"context"
	"errors"
	"fmt"
	"math"
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
	// dirs is the latest snapshot summed by directory (DirTotals): nil
	// until MeasureSizes or Apply summed one.
	dirs atomic.Pointer[dirTable]

	// applyMu makes Apply the single writer of snap.
	applyMu sync.Mutex

	// cacheMu guards cache, the recent fuzzy results that longer queries
	// narrow instead of rescanning, and answers, the recent fuzzy answers.
	cacheMu sync.Mutex
	cache   []*cachedQuery
	answers []*answer
}

// snapshot is one immutable generation of the index. It holds no
// pointer per path: every path (and the lower-case form of those that
// have upper-case letters) is a slice of one string, so the collector has
// one object to look at, not two per path, and a scan reads memory in
// order.
type snapshot struct {
	text    string
	entries []entry
	files   int
	// sizes holds the size in bytes of each file entry (by index; 0 for a
	// directory), sizeUnknown until it is measured. The build reads no
	// sizes (a stat per file would double its cost, docs/files.md): they
	// are measured afterwards by MeasureSizes, which writes them here in
	// place. That is the one change a published snapshot ever sees: a size
	// goes from sizeUnknown to a measured value, once.
	sizes []atomic.Uint32
	// unmeasured counts the files whose size is sizeUnknown.
	unmeasured atomic.Int64
}

// entry is one indexed path, as offsets into its snapshot's text.
type entry struct {
	mask uint64 // characters present, for quick rejection (see maskBit)
	// bounds bound the score without scoring; ASCII paths only.
	bounds  pathBounds
	off     uint32 // path is text[off:off+n]; its lower-case form follows when flagUpper
	n       uint16
	baseOff uint16 // byte offset of the base name in path
	flags   uint8
}

// Entry flags.
const (
	flagDir      = 1 << iota
	flagHidden   // some component starts with "."
	flagNonASCII // scored by the generic rune scorer
	flagUpper    // ASCII with upper-case letters: a lower-case copy follows the path
	flagBinary   // a file whose extension marks it as binary (binaryName)
)

func (e *entry) dir() bool      { return e.flags&flagDir != 0 }
func (e *entry) hidden() bool   { return e.flags&flagHidden != 0 }
func (e *entry) nonASCII() bool { return e.flags&flagNonASCII != 0 }
func (e *entry) binary() bool   { return e.flags&flagBinary != 0 }

// path returns the root-relative, "/"-separated path of e, without a
// trailing slash.
func (s *snapshot) path(e *entry) string { return s.text[e.off : e.off+uint32(e.n)] }

// low returns the lower-case form of an ASCII entry's path.
func (s *snapshot) low(e *entry) string {
	if e.flags&flagUpper != 0 {
		o := e.off + uint32(e.n)
		return s.text[o : o+uint32(e.n)]
	}
	return s.path(e)
}

// rawEntry is a path found by a walk or a change, measured, before it is
// packed into a snapshot (e.off is not set yet).
type rawEntry struct {
	path string // root-relative, "/"-separated, no trailing slash
	e    entry
}

// newRawEntry measures a path: its flags, character mask and, for ASCII,
// the masks that bound its score. Walk workers call it, so that this work
// is spread over the cores.
func newRawEntry(path string, dir, hidden bool) rawEntry {
	e := entry{n: uint16(len(path)), baseOff: uint16(strings.LastIndexByte(path, '/') + 1)}
	if dir {
		e.flags |= flagDir
	}
	if hidden {
		e.flags |= flagHidden
	}
	if !dir && binaryName(path[e.baseOff:]) {
		e.flags |= flagBinary // told once here, not at every summing
	}
	bounds, mask, upper := boundsOf(path, int(e.baseOff))
	e.mask = mask
	switch {
	case mask&(1<<maskNonASCII) != 0:
		e.flags |= flagNonASCII
	case upper:
		e.flags |= flagUpper
		e.bounds = bounds
	default:
		e.bounds = bounds
	}
	return rawEntry{path: path, e: e}
}

// maxSnapshotText bounds the packed text, whose offsets are 32 bits
// (and whose size is an int on 32-bit platforms too).
const maxSnapshotText = math.MaxInt32

// newSnapshot packs the entries of old at the indices kept (old is nil
// for a first build) and the added ones into a new snapshot. Kept entries
// keep the sizes old knows; an added file takes addedSizes[i] when
// addedSizes is given, else sizeUnknown. Paths that do not fit in
// maxSnapshotText bytes are left out (publish logs it).
func newSnapshot(old *snapshot, kept []int32, added []rawEntry, addedSizes []uint32) *snapshot {
	size := 0
	for _, k := range kept {
		size += old.entries[k].textLen()
	}
	for i := range added {
		size += added[i].e.textLen()
	}
	size = min(size, maxSnapshotText)
	var b strings.Builder
	b.Grow(size)
	s := &snapshot{entries: make([]entry, 0, len(kept)+len(added)), sizes: make([]atomic.Uint32, len(kept)+len(added))}
	unmeasured := int64(0)
	setSize := func(v uint32) {
		s.sizes[len(s.entries)-1].Store(v)
		if v == sizeUnknown {
			unmeasured++
		}
	}
	for _, k := range kept {
		e := old.entries[k]
		if b.Len()+e.textLen() > size {
			break
		}
		src := old.text[e.off : int(e.off)+e.textLen()]
		e.off = uint32(b.Len())
		b.WriteString(src)
		s.entries = append(s.entries, e)
		if !e.dir() {
			setSize(old.sizes[k].Load())
		}
	}
	for i, r := range added {
		e := r.e
		if len(s.entries) < len(kept) || b.Len()+e.textLen() > size {
			break
		}
		e.off = uint32(b.Len())
		b.WriteString(r.path)
		if e.flags&flagUpper != 0 {
			for i := 0; i < len(r.path); i++ {
				c := r.path[i]
				if c >= 'A' && c <= 'Z' {
					c += 'a' - 'A'
				}
				b.WriteByte(c)
			}
		}
		s.entries = append(s.entries, e)
		switch {
		case e.dir():
		case addedSizes != nil:
			setSize(addedSizes[i])
		default:
			setSize(sizeUnknown)
		}
	}
	s.text = b.String()
	s.sizes = s.sizes[:len(s.entries)]
	for i := range s.entries {
		if !s.entries[i].dir() {
			s.files++
		}
	}
	s.unmeasured.Store(unmeasured)
	return s
}

// textLen is the number of text bytes e uses: its path, and the
// lower-case copy when it has one.
func (e *entry) textLen() int {
	if e.flags&flagUpper != 0 {
		return 2 * int(e.n)
	}
	return int(e.n)
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
	s := newSnapshot(nil, nil, entries, nil)
	ix.publish(s, len(entries))
	ix.built.Store(true)
	ix.log.Debug("file index built", zap.String("root", ix.root), zap.Int("paths", len(s.entries)))
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
	for i := range s.entries {
		e := &s.entries[i]
		out[i] = s.path(e)
		if e.dir() {
			out[i] += "/"
		}
	}
	return out
}

// publish installs a new snapshot and drops narrowing state of the old
// one. wanted is the number of paths found, which is more than the
// snapshot holds only when their text exceeded maxSnapshotText.
func (ix *Index) publish(s *snapshot, wanted int) {
	if len(s.entries) < wanted {
		ix.log.Warn("file index full: paths left out", zap.Int("indexed", len(s.entries)), zap.Int("found", wanted))
	}
	ix.snap.Store(s)
	ix.cacheMu.Lock()
	ix.cache = nil
	ix.answers = nil
	ix.cacheMu.Unlock()
}
