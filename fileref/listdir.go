package fileref

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"go.uber.org/zap"
)

// listCtxCheckEvery: entries handled between context checks in a listing.
const listCtxCheckEvery = 1024

// cleanDirQuery turns the directory part of a query into a clean
// root-relative path. ok is false for anything that could leave the
// workspace or enter .git: absolute paths, ".." components, backslashes
// or NUL.
func cleanDirQuery(dir string) (rel string, ok bool) {
	if strings.HasPrefix(dir, "/") || strings.ContainsAny(dir, "\\\x00") {
		return "", false
	}
	var parts []string
	for _, c := range strings.Split(dir, "/") {
		switch c {
		case "", ".":
			continue
		case "..", gitDirName:
			return "", false
		}
		parts = append(parts, c)
	}
	return strings.Join(parts, "/"), true
}

// listDir answers a query that is empty or contains "/": the entries of
// the named directory, read from disk now, filtered by the fragment after
// the last "/" (fuzzy, case-insensitive). Ignored entries appear only when
// the directory itself is ignored (the user named it explicitly), marked
// Ignored; ".git" never appears.
func (ix *Index) listDir(ctx context.Context, query string, limit int) ([]Candidate, bool, error) {
	if strings.HasPrefix(query, "/") {
		return []Candidate{}, false, nil // absolute: outside the workspace
	}
	dirPart, frag := "", query
	if i := strings.LastIndexByte(query, '/'); i >= 0 {
		dirPart, frag = query[:i], query[i+1:]
	}
	rel, ok := cleanDirQuery(dirPart)
	if !ok {
		return []Candidate{}, false, nil
	}
	f, dirIgnored, ok := ix.dirFrame(rel)
	if !ok {
		return []Candidate{}, false, nil
	}
	abs := filepath.Join(ix.root, filepath.FromSlash(rel))
	des, err := os.ReadDir(abs)
	if err != nil && len(des) == 0 {
		return []Candidate{}, false, nil
	}
	hidden := hiddenAllowed(query)
	folded := foldQuery(frag)
	qRunes := []rune(folded)
	prefix := ""
	if rel != "" {
		prefix = rel + "/"
	}
	var out []Candidate
	var scratch []byte
	for n, de := range des {
		if n%listCtxCheckEvery == listCtxCheckEvery-1 {
			if err := ctx.Err(); err != nil {
				return nil, false, fmt.Errorf("listing %q: %w", query, err)
			}
		}
		name := de.Name()
		if name == gitDirName || strings.HasPrefix(name, ".") && !hidden {
			continue
		}
		typ := de.Type()
		isDir := typ.IsDir()
		switch {
		case isDir, typ.IsRegular():
		case typ&fs.ModeSymlink != 0:
			if !ix.symlinkToFileInside(filepath.Join(abs, name)) {
				continue
			}
		default:
			continue
		}
		if !utf8.ValidString(name) {
			ix.log.Debug(skipInvalidUTF8, zap.String("dir", abs), zap.String("name", strconv.Quote(name)))
			continue
		}
		ign := dirIgnored || ix.ignored(&f, name, isDir, &scratch)
		if ign && !dirIgnored {
			continue
		}
		score := 0
		if frag != "" {
			s, ok := scorePath([]rune(name), 0, qRunes)
			if !ok {
				continue
			}
			score = s
		}
		out = append(out, Candidate{Path: prefix + name, Kind: kindOf(isDir), Ignored: ign, Score: score})
	}
	slices.SortFunc(out, func(a, b Candidate) int {
		if a.Score != b.Score {
			return b.Score - a.Score
		}
		if a.Kind != b.Kind { // directories first: they lead somewhere
			if a.Kind == KindDirectory {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Path, b.Path)
	})
	capped := len(out) > limit
	if capped {
		out = out[:limit]
	}
	if out == nil {
		out = []Candidate{}
	}
	return out, capped, nil
}
