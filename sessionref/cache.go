package sessionref

import (
	"bufio"
	"crypto/sha256"
	"encoding/gob"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// cacheMagic opens every index cache file; cacheFormat changes whenever the
// cached structures do, so an old or foreign file is discarded, never
// trusted.
const (
	cacheMagic  = "dsh-refls title index\n"
	cacheFormat = 4
)

// cachedSession is one tracked session as the cache stores it.
type cachedSession struct {
	ProjectName string
	DirName     string
	LogPath     string
	Encoding    Encoding
	Generation  int
	DirModTime  int64
	Entry       Entry
	File        fileIdentity
	Skip        string
	IdentityErr string
	Started     bool
	Tail        []byte
	// Search is the entry's lowercased search text, so a restart does not
	// lowercase every title again.
	SearchAll, SearchID, SearchTitle, SearchDisplay string
}

// cacheFile is the whole cache.
type cacheFile struct {
	Format   int
	Root     string
	Sessions []cachedSession
}

// DefaultCachePath is where the index of root is cached: the user cache
// dir + dsh-refls/index-<hash of root>.gob.
func DefaultCachePath(root string) (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("finding the user cache dir: %w", err)
	}
	sum := sha256.Sum256([]byte(root))
	return filepath.Join(dir, "dsh-refls", "index-"+hex.EncodeToString(sum[:8])+".gob"), nil
}

// SaveCache writes the index state to path atomically (a temporary file
// renamed over the old one).
func (ix *Index) SaveCache(path string) error {
	ix.writeMu.Lock()
	cf := cacheFile{Format: cacheFormat, Root: ix.root}
	for _, t := range ix.tracked {
		cf.Sessions = append(cf.Sessions, cachedSession{
			ProjectName: t.dir.projectName, DirName: t.dir.dirName, LogPath: t.dir.log.path,
			Encoding: t.dir.log.encoding, Generation: t.dir.log.generation, DirModTime: t.dir.dirModTime,
			Entry: t.entry, File: t.file, Skip: t.skip, IdentityErr: t.identityErr, Started: t.started, Tail: t.tail,
			SearchAll: t.search.all, SearchID: t.search.id, SearchTitle: t.search.title, SearchDisplay: t.search.display,
		})
	}
	ix.writeMu.Unlock()
	// Saved newest first, so the snapshot published on load sorts a sorted list.
	sort.Slice(cf.Sessions, func(i, j int) bool {
		a, b := &cf.Sessions[i].Entry, &cf.Sessions[j].Entry
		if a.CreatedAt != b.CreatedAt {
			return a.CreatedAt > b.CreatedAt
		}
		return a.ID < b.ID
	})
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("creating cache directory: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".index-*.tmp")
	if err != nil {
		return fmt.Errorf("creating cache file: %w", err)
	}
	defer os.Remove(tmp.Name()) // after a successful rename there is nothing to remove
	w := bufio.NewWriter(tmp)
	if _, err := io.WriteString(w, cacheMagic); err == nil {
		err = gob.NewEncoder(w).Encode(&cf)
	}
	if err == nil {
		err = w.Flush()
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("writing cache %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("replacing cache %s: %w", path, err)
	}
	return nil
}

// ErrCacheUnusable reports a cache file that is corrupt, of another format,
// or of another root. The index is then built from the logs.
var ErrCacheUnusable = errors.New("index cache unusable")

// LoadCache fills an index that has not been built yet from a cache file.
// The cache only tells where reading may resume: the next Build stats
// every log and reads what changed, so a stale cache costs reads, never
// correctness. A missing file returns an error wrapping os.ErrNotExist.
func (ix *Index) LoadCache(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("opening cache: %w", err)
	}
	defer f.Close()
	r := bufio.NewReader(f)
	magic := make([]byte, len(cacheMagic))
	if _, err := io.ReadFull(r, magic); err != nil || string(magic) != cacheMagic {
		return fmt.Errorf("%w: %s is not a dsh-refls index cache", ErrCacheUnusable, path)
	}
	var cf cacheFile
	if err := gob.NewDecoder(r).Decode(&cf); err != nil {
		return fmt.Errorf("%w: decoding %s: %v", ErrCacheUnusable, path, err)
	}
	if cf.Format != cacheFormat {
		return fmt.Errorf("%w: %s has format %d, want %d", ErrCacheUnusable, path, cf.Format, cacheFormat)
	}
	if cf.Root != ix.root {
		return fmt.Errorf("%w: %s indexes %s, not %s", ErrCacheUnusable, path, cf.Root, ix.root)
	}
	const sep = string(filepath.Separator)
	loaded := make(map[string]*tracked, len(cf.Sessions))
	for _, s := range cf.Sessions {
		d := sessionDir{projectName: s.ProjectName, dirName: s.DirName,
			path: ix.root + sep + s.ProjectName + sep + s.DirName,
			log:  logFile{path: s.LogPath, encoding: s.Encoding, generation: s.Generation}, dirModTime: s.DirModTime}
		if !isProjectDirName(s.ProjectName) || strings.ContainsAny(s.DirName, `/\`) || s.DirName == "" ||
			!strings.HasPrefix(s.LogPath, d.path+sep) || strings.ContainsAny(s.LogPath[len(d.path)+1:], `/\`) {
			return fmt.Errorf("%w: %s lists a log outside the root: %s", ErrCacheUnusable, path, s.LogPath)
		}
		t := &tracked{dir: d, entry: s.Entry, file: s.File, skip: s.Skip, identityErr: s.IdentityErr, started: s.Started, tail: s.Tail}
		t.search = searchText{all: s.SearchAll, id: s.SearchID, title: s.SearchTitle, display: s.SearchDisplay, bytes: byteSetOf(s.SearchAll), pairs: pairSetOf(s.SearchAll)}
		if t.skip == "" && t.search.all == "" {
			t.search = newSearchText(&t.entry)
		}
		loaded[d.path] = t
	}
	ix.writeMu.Lock()
	ix.tracked = loaded
	ix.publishLocked(true)
	ix.writeMu.Unlock()
	return nil
}
