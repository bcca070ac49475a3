package server

import (
	"context"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
)

// dirListerWalkLimit bounds the walk of a fuzzy query in the fallback file
// source, so a huge workspace cannot stall a keystroke.
const dirListerWalkLimit = 20000

// dirLister is the file source used when no workspace index is configured:
// it lists a named directory live and answers other queries with a bounded
// substring walk. It never follows directory symlinks and skips excluded
// directory names, but it does not read ignore files; the workspace index
// does.
type dirLister struct {
	root     string
	excluded map[string]bool
	count    atomic.Int64
}

// openDirLister is a FilesFactory for dirLister.
func openDirLister(_ context.Context, root string, excluded []string) (Files, error) {
	ex := map[string]bool{}
	for _, e := range excluded {
		ex[e] = true
	}
	return &dirLister{root: root, excluded: ex}, nil
}

// hiddenAllowed reports whether dot-entries may be shown for query (§3).
func hiddenAllowed(query string) bool {
	frag := query[strings.LastIndex(query, "/")+1:]
	return strings.HasPrefix(frag, ".") || strings.Contains(query, "/.")
}

// Search implements Files.
func (d *dirLister) Search(ctx context.Context, query string, limit int) ([]FileCandidate, bool, error) {
	if query == "" || strings.Contains(query, "/") {
		return d.list(query, limit)
	}
	return d.walk(ctx, query, limit)
}

// list lists the directory named by query up to its last slash, filtered by
// the fragment after it.
func (d *dirLister) list(query string, limit int) ([]FileCandidate, bool, error) {
	dir, frag := "", query
	if i := strings.LastIndex(query, "/"); i >= 0 {
		dir, frag = query[:i], query[i+1:]
	}
	clean := path.Clean("/" + dir)
	if clean != "/"+strings.TrimSuffix(dir, "/") && dir != "" {
		return nil, false, nil // ".." or other escapes: nothing to offer
	}
	entries, err := os.ReadDir(filepath.Join(d.root, filepath.FromSlash(dir)))
	if err != nil {
		return nil, false, nil
	}
	showHidden := hiddenAllowed(query)
	lowFrag := strings.ToLower(frag)
	var out []FileCandidate
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") && !showHidden {
			continue
		}
		if name == ".git" || !strings.Contains(strings.ToLower(name), lowFrag) {
			continue
		}
		rel := name
		if dir != "" {
			rel = strings.TrimSuffix(dir, "/") + "/" + name
		}
		kind := FileKindFile
		if e.IsDir() {
			kind = FileKindDirectory
		} else if e.Type()&fs.ModeSymlink != 0 {
			continue // never offer or follow links that may lead outside
		}
		out = append(out, FileCandidate{Path: rel, Kind: kind, Ignored: d.excluded[name]})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	if len(out) > limit {
		return out[:limit], true, nil
	}
	return out, false, nil
}

// walk answers a fuzzy query with a bounded substring walk.
func (d *dirLister) walk(ctx context.Context, query string, limit int) ([]FileCandidate, bool, error) {
	low := strings.ToLower(query)
	showHidden := hiddenAllowed(query)
	var out []FileCandidate
	seen := 0
	capped := false
	err := filepath.WalkDir(d.root, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if p == d.root {
			return nil
		}
		name := e.Name()
		if e.IsDir() && (d.excluded[name] || name == ".git" || (strings.HasPrefix(name, ".") && !showHidden)) {
			return filepath.SkipDir
		}
		if strings.HasPrefix(name, ".") && !showHidden {
			return nil
		}
		seen++
		if seen > dirListerWalkLimit {
			capped = true
			return filepath.SkipAll
		}
		rel, rerr := filepath.Rel(d.root, p)
		if rerr != nil {
			return nil
		}
		rel = filepath.ToSlash(rel)
		if !strings.Contains(strings.ToLower(rel), low) {
			return nil
		}
		kind := FileKindFile
		if e.IsDir() {
			kind = FileKindDirectory
		} else if e.Type()&fs.ModeSymlink != 0 {
			return nil
		}
		if len(out) >= limit {
			capped = true
			return filepath.SkipAll
		}
		out = append(out, FileCandidate{Path: rel, Kind: kind})
		return nil
	})
	if err != nil {
		return nil, false, err
	}
	d.count.Store(int64(seen))
	return out, capped, nil
}

// Count implements Files.
func (d *dirLister) Count() int { return int(d.count.Load()) }

// Close implements Files.
func (d *dirLister) Close() error { return nil }
