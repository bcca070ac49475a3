package fileref

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
	"unsafe"

	"go.uber.org/zap"
)

// walkJob is one directory waiting to be read.
type walkJob struct {
	abs   string
	frame frame // context the directory was entered with
}

// walkQueue is the shared LIFO of directories; LIFO keeps the working set
// close to the leaves, which bounds the queue on deep trees.
type walkQueue struct {
	mu      sync.Mutex
	cond    *sync.Cond
	jobs    []walkJob
	pending int // jobs queued or being processed
	err     error
	// found counts the entries kept so far; when limit is positive and
	// found reaches it, or when the deadline (if set) has passed, full is
	// set and the walk stops early.
	found, limit int
	deadline     time.Time
	full         bool
}

// walkCtxCheckEvery is how many directories a reader handles between
// context checks: often enough to stop within milliseconds.
const walkCtxCheckEvery = 64

// walk reads the given directories and everything below them that is not
// ignored, in parallel, and returns the entries found (the start
// directories themselves are not included). limit > 0 stops the walk once
// about that many entries were found (a directory is always read whole).
func (ix *Index) walk(ctx context.Context, start []walkJob, limit int) ([]rawEntry, error) {
	entries, _, err := ix.walkUntil(ctx, start, limit, time.Time{})
	return entries, err
}

// walkUntil is walk that also stops once deadline (when not zero) has
// passed; cut reports whether the limit or the deadline stopped it.
func (ix *Index) walkUntil(ctx context.Context, start []walkJob, limit int, deadline time.Time) (entries []rawEntry, cut bool, err error) {
	if err := ctx.Err(); err != nil {
		return nil, false, err
	}
	q := &walkQueue{jobs: start, pending: len(start), limit: limit, deadline: deadline}
	q.cond = sync.NewCond(&q.mu)
	results := make([][]rawEntry, ix.workers)
	var wg sync.WaitGroup
	for w := 0; w < ix.workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			results[w] = ix.walkWorker(ctx, q)
		}(w)
	}
	wg.Wait()
	if q.err != nil {
		return nil, false, q.err
	}
	n := 0
	for _, r := range results {
		n += len(r)
	}
	out := make([]rawEntry, 0, n)
	for _, r := range results {
		out = append(out, r...)
	}
	return out, q.full && q.pending > 0, nil
}

func (ix *Index) walkWorker(ctx context.Context, q *walkQueue) []rawEntry {
	var out []rawEntry
	var scratch []byte
	var paths arena
	var children []walkJob
	handled := 0
	for {
		q.mu.Lock()
		for len(q.jobs) == 0 && q.pending > 0 && q.err == nil && !q.full {
			q.cond.Wait()
		}
		if q.pending == 0 || q.err != nil || q.full {
			q.mu.Unlock()
			q.cond.Broadcast()
			return out
		}
		job := q.jobs[len(q.jobs)-1]
		q.jobs = q.jobs[:len(q.jobs)-1]
		q.mu.Unlock()

		handled++
		if handled%walkCtxCheckEvery == 0 {
			if err := ctx.Err(); err != nil {
				q.mu.Lock()
				q.err = err
				q.mu.Unlock()
				q.cond.Broadcast()
				return out
			}
		}
		children = children[:0]
		before := len(out)
		out, children = ix.readDir(job, out, children, &scratch, &paths)

		q.mu.Lock()
		q.jobs = append(q.jobs, children...)
		q.pending += len(children) - 1
		q.found += len(out) - before
		if q.limit > 0 && q.found >= q.limit || !q.deadline.IsZero() && time.Now().After(q.deadline) {
			q.full = true
		}
		done := q.pending == 0 || q.full
		q.mu.Unlock()
		if done || len(children) > 1 {
			q.cond.Broadcast()
		} else if len(children) == 1 {
			q.cond.Signal()
		}
	}
}

// readDir lists one directory, appends its kept entries to out and its
// subdirectories to children.
func (ix *Index) readDir(job walkJob, out []rawEntry, children []walkJob, scratch *[]byte, paths *arena) ([]rawEntry, []walkJob) {
	d, err := os.Open(job.abs)
	if err != nil {
		ix.log.Info("skipping unreadable directory", zap.String("path", job.abs), zap.Error(err))
		return out, children
	}
	des, err := d.ReadDir(-1)
	d.Close()
	if err != nil {
		ix.log.Info("directory listing incomplete", zap.String("path", job.abs), zap.Error(err))
	}
	var hasGit, hasGitignore, hasDshignore bool
	for _, de := range des {
		switch de.Name() {
		case gitDirName:
			hasGit = true
		case gitignoreName:
			hasGitignore = de.Type().IsRegular()
		case dshignoreName:
			hasDshignore = de.Type().IsRegular()
		}
	}
	f := job.frame
	if hasGit || hasGitignore || hasDshignore {
		f = ix.loadDir(f, job.abs, hasGit, hasGitignore, hasDshignore)
	}
	for _, de := range des {
		name := de.Name()
		typ := de.Type()
		isDir := typ.IsDir()
		switch {
		case isDir, typ.IsRegular():
		case typ&fs.ModeSymlink != 0:
			if !ix.symlinkToFileInside(filepath.Join(job.abs, name)) {
				continue
			}
		default:
			continue // sockets, pipes, devices are not mentionable files
		}
		if !utf8.ValidString(name) {
			ix.log.Info(skipInvalidUTF8, zap.String("dir", job.abs), zap.String("name", strconv.Quote(name)))
			continue
		}
		if ix.ignored(&f, name, isDir, scratch) {
			continue
		}
		if len(f.rel)+len(name) > maxIndexedPathLen {
			ix.log.Info("skipping path too long to index", zap.String("dir", job.abs))
			continue
		}
		hidden := f.hidden || strings.HasPrefix(name, ".")
		out = append(out, newRawEntry(paths.join(f.rel, name), isDir, hidden))
		if isDir {
			children = append(children, walkJob{abs: filepath.Join(job.abs, name), frame: f.child(name)})
		}
	}
	return out, children
}

// skipInvalidUTF8 is the logged reason for a name that is not valid
// UTF-8. A mention is text: such a name cannot be written in one and read
// back as the same bytes (an editor shows U+FFFD, and the path built from
// that names no file), so neither the name nor anything below it is ever
// offered. Escaping was rejected: dsh and the agent read a mentioned path
// as written, and no escape would name the file to them.
const skipInvalidUTF8 = "skipping a name that is not valid UTF-8: it cannot be written in a mention"

// symlinkToFileInside reports whether the symlink at abs resolves to a
// regular file inside the workspace. Directory symlinks are never
// followed, and nothing outside the root is ever offered.
func (ix *Index) symlinkToFileInside(abs string) bool {
	_, ok := ix.symlinkFileSize(abs)
	return ok
}

// symlinkFileSize is symlinkToFileInside that also returns the size of
// the file the symlink resolves to.
func (ix *Index) symlinkFileSize(abs string) (int64, bool) {
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return 0, false
	}
	fi, err := os.Stat(real)
	if err != nil || !fi.Mode().IsRegular() || !within(ix.realRoot, real) {
		return 0, false
	}
	return fi.Size(), true
}

// within reports whether path is root or below it (both cleaned, absolute).
func within(root, path string) bool {
	if path == root {
		return true
	}
	if root == string(filepath.Separator) {
		return strings.HasPrefix(path, root)
	}
	return strings.HasPrefix(path, root+string(filepath.Separator))
}

// arenaChunk is the size of the blocks paths are packed into during a
// walk, which spares the allocator one object per path until the
// snapshot packs them into its one text.
const arenaChunk = 64 << 10

// arena packs immutable strings into large blocks. Bytes are only ever
// appended, never rewritten, so the strings handed out stay valid and
// unchanged for as long as they are referenced.
type arena struct {
	buf []byte
}

// join returns dir+name stored in the arena.
func (a *arena) join(dir, name string) string {
	n := len(dir) + len(name)
	if cap(a.buf)-len(a.buf) < n {
		a.buf = make([]byte, 0, max(arenaChunk, n))
	}
	start := len(a.buf)
	a.buf = append(a.buf, dir...)
	a.buf = append(a.buf, name...)
	return unsafe.String(&a.buf[start], n)
}
