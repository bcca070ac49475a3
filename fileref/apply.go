package fileref

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"go.uber.org/zap"
)

// Change is one change notification: something at Path (absolute, or
// relative to the workspace root) was created, removed or modified. The
// index looks at the disk to learn which.
type Change struct {
	Path string
}

// relOf turns a change path into a clean root-relative path. ok is false
// for paths outside the workspace.
func (ix *Index) relOf(p string) (rel string, ok bool) {
	if filepath.IsAbs(p) {
		p = filepath.Clean(p)
		base := ix.root
		if !within(ix.root, p) && within(ix.realRoot, p) {
			base = ix.realRoot // a watcher may report resolved paths
		}
		r, err := filepath.Rel(base, p)
		if err != nil {
			return "", false
		}
		p = r
	}
	p = filepath.ToSlash(filepath.Clean(p))
	if p == "." {
		return "", true
	}
	if p == ".." || strings.HasPrefix(p, "../") || strings.HasPrefix(p, "/") {
		return "", false
	}
	return p, true
}

// target maps a changed path to the path whose subtree must be
// re-evaluated: an ignore file or a repository's info/exclude changes the
// rules of a whole subtree; other changes inside .git do not matter
// (skip is true).
func target(rel string) (t string, skip bool) {
	parts := strings.Split(rel, "/")
	for i, c := range parts {
		if c != gitDirName {
			continue
		}
		repo := strings.Join(parts[:i], "/")
		rest := parts[i+1:]
		switch {
		case len(rest) == 0, // .git itself appeared or vanished: a repository boundary moved
			len(rest) == 1 && rest[0] == "config", // core.excludesFile may have changed
			len(rest) >= 1 && rest[0] == "info":   // info/exclude
			return repo, false
		}
		return "", true
	}
	switch parts[len(parts)-1] {
	case gitignoreName, dshignoreName:
		return strings.Join(parts[:len(parts)-1], "/"), false
	}
	return rel, false
}

// under reports whether p is t or inside it ("" is the root).
func under(p, t string) bool {
	return t == "" || p == t || strings.HasPrefix(p, t) && len(p) > len(t) && p[len(t)] == '/'
}

// Apply brings the index up to date with a batch of changes and publishes
// the result atomically; searches running meanwhile keep the previous
// snapshot. A created directory is walked, a removed path disappears with
// everything below it, and a changed .gitignore, .dshignore or
// .git/info/exclude re-evaluates the subtree it governs. Paths outside the
// workspace are logged and skipped.
func (ix *Index) Apply(changes []Change) {
	if len(changes) == 0 {
		return
	}
	ix.applyMu.Lock()
	defer ix.applyMu.Unlock()

	var targets []string
	for _, c := range changes {
		rel, ok := ix.relOf(c.Path)
		if !ok {
			ix.log.Info("ignoring change outside the workspace", zap.String("path", c.Path))
			continue
		}
		t, skip := target(rel)
		if !skip {
			targets = append(targets, t)
		}
	}
	if len(targets) == 0 {
		return
	}
	snap := ix.snap.Load()
	old := snap.entries
	targets = escalate(targets, snap)
	outer := outermost(targets)
	var added []rawEntry
	var addedSizes []uint32 // by index of added
	var jobs []walkJob
	var scratch []byte
	type parentState struct {
		f       frame
		ign, ok bool
	}
	parents := make(map[string]parentState) // bursts often touch one directory
	for _, t := range outer {
		if t == "" {
			jobs = append(jobs, walkJob{abs: ix.root, frame: ix.outerFrame()})
			continue
		}
		parent, name := "", t
		if i := strings.LastIndexByte(t, '/'); i >= 0 {
			parent, name = t[:i], t[i+1:]
		}
		ps, seen := parents[parent]
		if !seen {
			ps.f, ps.ign, ps.ok = ix.dirFrame(parent)
			parents[parent] = ps
		}
		f := ps.f
		if !ps.ok || ps.ign {
			continue // the parent is gone or ignored: nothing below it is indexed
		}
		abs := filepath.Join(ix.root, filepath.FromSlash(t))
		fi, err := os.Lstat(abs)
		if err != nil {
			continue // removed
		}
		isDir := fi.IsDir()
		size := fi.Size() // the stat at hand: a changed file needs no measuring
		switch {
		case isDir, fi.Mode().IsRegular():
		case fi.Mode()&os.ModeSymlink != 0:
			var ok bool
			if size, ok = ix.symlinkFileSize(abs); !ok {
				continue
			}
		default:
			continue
		}
		if !utf8.ValidString(t) {
			ix.log.Info(skipInvalidUTF8, zap.String("path", strconv.Quote(t)))
			continue
		}
		if ix.ignored(&f, name, isDir, &scratch) || len(t) > maxIndexedPathLen {
			continue
		}
		added = append(added, newRawEntry(t, isDir, f.hidden || strings.HasPrefix(name, ".")))
		addedSizes = append(addedSizes, recordedSize(size))
		if isDir {
			jobs = append(jobs, walkJob{abs: abs, frame: f.child(name)})
		}
	}
	if len(jobs) > 0 {
		found, err := ix.walk(context.Background(), jobs, 0)
		if err != nil {
			ix.log.Warn("re-walking changed directories failed", zap.Error(err))
		}
		added = append(added, found...)
		for range found {
			addedSizes = append(addedSizes, sizeUnknown) // MeasureSizes reads them
		}
	}
	// The indices of the entries kept, sized for the worst case: the index
	// is large and a grown slice would double it. newSnapshot copies them.
	kept := make([]int32, 0, len(old))
	switch {
	case slices.Contains(outer, ""):
		// The whole tree is re-walked.
	case len(outer) <= smallTargetCount:
		for i := range old {
			gone := false
			for _, t := range outer {
				if under(snap.path(&old[i]), t) {
					gone = true
					break
				}
			}
			if !gone {
				kept = append(kept, int32(i))
			}
		}
	default:
		set := make(map[string]bool, len(outer))
		for _, t := range outer {
			set[t] = true
		}
		for i := range old {
			if !coveredBy(snap.path(&old[i]), set) {
				kept = append(kept, int32(i))
			}
		}
	}

	next := newSnapshot(snap, kept, added, addedSizes)
	ix.publish(next, len(kept)+len(added))
	ix.sumDirs(next)
	ix.log.Debug("file index updated", zap.Int("changes", len(changes)), zap.Int("paths", len(next.entries)))
}

// smallTargetCount: up to this many changed subtrees, comparing prefixes
// directly beats looking every ancestor up in a map.
const smallTargetCount = 16

// escalate replaces a target whose parent directory is not indexed (it was
// created in the same burst and its own notification is missing or comes
// later) by its highest unindexed ancestor, so that no path is indexed
// without its directory.
func escalate(targets []string, old *snapshot) []string {
	needed := make(map[string]bool)
	for _, t := range targets {
		for i := strings.LastIndexByte(t, '/'); i > 0; i = strings.LastIndexByte(t[:i], '/') {
			needed[t[:i]] = false
		}
	}
	if len(needed) == 0 {
		return targets
	}
	for i := range old.entries {
		if e := &old.entries[i]; e.dir() {
			if _, ok := needed[old.path(e)]; ok {
				needed[old.path(e)] = true
			}
		}
	}
	for i, t := range targets {
		for {
			j := strings.LastIndexByte(t, '/')
			if j < 0 || needed[t[:j]] {
				break
			}
			t = t[:j]
		}
		targets[i] = t
	}
	return targets
}

// outermost drops targets inside other targets: re-evaluating a subtree
// covers everything below it.
func outermost(targets []string) []string {
	slices.SortFunc(targets, func(a, b string) int {
		if len(a) != len(b) {
			return len(a) - len(b)
		}
		return strings.Compare(a, b)
	})
	var outer []string
	for _, t := range targets {
		covered := false
		for _, o := range outer {
			if under(t, o) {
				covered = true
				break
			}
		}
		if !covered {
			outer = append(outer, t)
		}
	}
	return outer
}

// coveredBy reports whether p or one of its ancestors is in set.
func coveredBy(p string, set map[string]bool) bool {
	for {
		if set[p] {
			return true
		}
		i := strings.LastIndexByte(p, '/')
		if i < 0 {
			return false
		}
		p = p[:i]
	}
}
