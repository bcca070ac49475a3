package fileref

import (
	"os"
	"path/filepath"
	"strings"
	"unsafe"

	"go.uber.org/zap"

	"github.com/dsh-refls/dsh-refls/fileref/ignore"
)

// frame is the context in which the entries of one directory are judged.
// Git patterns match repository-relative paths (repoRel), .dshignore
// patterns match workspace-relative paths (rel): .dshignore is a workspace
// setting and applies across nested repositories, while git's own rules
// stop at a repository boundary, as git does.
type frame struct {
	rel     string // directory relative to the root, with trailing "/" ("" for the root)
	repoRel string // the same directory relative to its repository root
	git     *ignore.Stack
	dsh     *ignore.Stack
	hidden  bool // the directory or one of its ancestors starts with "."
}

// outerFrame is the context of the root directory before its own ignore
// files are read: when the root lies inside a repository, that
// repository's info/exclude and the .gitignore files above the root;
// otherwise only the global excludes file (honoured even outside a
// repository, like .gitignore files are, so that a plain folder behaves
// like a fresh checkout).
func (ix *Index) outerFrame() frame {
	f := frame{git: ignore.NewStack(), dsh: ignore.NewStack()}
	if _, _, ok := ignore.GitDirs(ix.root); ok {
		return f // the root is a repository root; loadDir sets it up
	}
	repo := ""
	for d := filepath.Dir(ix.root); ; d = filepath.Dir(d) {
		if _, _, ok := ignore.GitDirs(d); ok {
			repo = d
			break
		}
		if d == filepath.Dir(d) {
			break
		}
	}
	if repo == "" {
		lists, errs := ix.lists.RepoLists(ix.root, ix.env)
		ix.logErrs(errs)
		// Keep only the global list: there is no info/exclude outside a
		// repository, and RepoLists found no git directory.
		f.git = ignore.NewStack(lists...)
		return f
	}
	lists, errs := ix.lists.RepoLists(repo, ix.env)
	ix.logErrs(errs)
	f.git = ignore.NewStack(lists...)
	prefix, err := filepath.Rel(repo, ix.root)
	if err != nil {
		return f
	}
	prefix = filepath.ToSlash(prefix)
	// .gitignore files from the repository root down to the root's parent.
	dir, base := repo, ""
	for _, comp := range strings.Split(prefix, "/") {
		f.git = f.git.Push(ix.readList(base, filepath.Join(dir, gitignoreName)))
		dir = filepath.Join(dir, comp)
		base += comp + "/"
	}
	f.repoRel = base
	return f
}

// loadDir returns the frame for the entries of the directory abs, given
// the frame it was entered with and which ignore-related names it holds.
func (ix *Index) loadDir(f frame, abs string, hasGit, hasGitignore, hasDshignore bool) frame {
	if hasGit {
		if _, _, ok := ignore.GitDirs(abs); ok {
			// A repository root: parent git rules stop here.
			lists, errs := ix.lists.RepoLists(abs, ix.env)
			ix.logErrs(errs)
			f.git = ignore.NewStack(lists...)
			f.repoRel = ""
		}
	}
	if hasGitignore {
		f.git = f.git.Push(ix.readList(f.repoRel, filepath.Join(abs, gitignoreName)))
	}
	if hasDshignore {
		f.dsh = f.dsh.Push(ix.readList(f.rel, filepath.Join(abs, dshignoreName)))
	}
	return f
}

// readList reads one ignore file, logging failures.
func (ix *Index) readList(base, path string) *ignore.List {
	l, err := ix.lists.ReadList(base, path)
	if err != nil {
		ix.log.Warn("skipping unreadable ignore file", zap.Error(err))
		return nil
	}
	return l
}

func (ix *Index) logErrs(errs []error) {
	for _, err := range errs {
		ix.log.Warn("git configuration problem; continuing without it", zap.Error(err))
	}
}

// ignored decides whether the entry name of the directory described by f
// is ignored: excluded directory names first, then .dshignore (whose
// matches win in both directions), then git's rules. scratch is reused to
// build the relative paths without allocating.
func (ix *Index) ignored(f *frame, name string, isDir bool, scratch *[]byte) bool {
	if isDir && ix.excluded[name] || name == gitDirName {
		return true
	}
	if !f.dsh.Empty() {
		b := append((*scratch)[:0], f.rel...)
		b = append(b, name...)
		*scratch = b
		if excl, ok := f.dsh.Match(bytesView(b), name, isDir); ok {
			return excl
		}
	}
	if f.git.Empty() {
		return false
	}
	b := append((*scratch)[:0], f.repoRel...)
	b = append(b, name...)
	*scratch = b
	excl, ok := f.git.Match(bytesView(b), name, isDir)
	return ok && excl
}

// bytesView looks at b as a string without copying; the result must not
// outlive the next change to b. Matching runs per entry, so this saves one
// allocation per ignored path.
func bytesView(b []byte) string {
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// child returns the frame a subdirectory is entered with.
func (f *frame) child(name string) frame {
	return frame{
		rel:     f.rel + name + "/",
		repoRel: f.repoRel + name + "/",
		git:     f.git,
		dsh:     f.dsh,
		hidden:  f.hidden || strings.HasPrefix(name, "."),
	}
}

// dirFrame walks from the root down to the directory rel (cleaned,
// "/"-separated, "" for the root) and returns the frame for its entries.
// ok is false when rel does not exist, is not a real directory, or passes
// through a symlink. ignored reports whether rel or an ancestor is ignored.
func (ix *Index) dirFrame(rel string) (f frame, ignored, ok bool) {
	f = ix.outerFrame()
	f = ix.loadDirByStat(f, ix.root)
	if rel == "" {
		return f, false, true
	}
	abs := ix.root
	var scratch []byte
	for _, comp := range strings.Split(rel, "/") {
		abs = filepath.Join(abs, comp)
		fi, err := os.Lstat(abs)
		if err != nil || !fi.IsDir() {
			return f, ignored, false
		}
		if !ignored && ix.ignored(&f, comp, true, &scratch) {
			ignored = true
		}
		f = f.child(comp)
		f = ix.loadDirByStat(f, abs)
	}
	return f, ignored, true
}

// loadDirByStat is loadDir for a directory whose listing is not at hand.
func (ix *Index) loadDirByStat(f frame, abs string) frame {
	has := func(name string) bool {
		_, err := os.Lstat(filepath.Join(abs, name))
		return err == nil
	}
	regular := func(name string) bool {
		fi, err := os.Lstat(filepath.Join(abs, name))
		return err == nil && fi.Mode().IsRegular()
	}
	return ix.loadDir(f, abs, has(gitDirName), regular(gitignoreName), regular(dshignoreName))
}
