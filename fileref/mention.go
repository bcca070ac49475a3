package fileref

import (
	"os"
	"path/filepath"
	"strings"
	"time"
)

// FileFacts describe what a file mention points at, for hover.
type FileFacts struct {
	// Kind is set when the path exists inside the workspace.
	Kind    Kind
	Size    int64
	ModTime time.Time
	// Missing: nothing exists at the path (or a symlink there dangles).
	Missing bool
	// OutsideWorkspace: the path is absolute, climbs with "..", or
	// resolves (through symlinks) outside the root.
	OutsideWorkspace bool
}

// StatMention looks up the mentioned path rel (root-relative; a trailing
// "/" is allowed) under root, resolving symlinks, and never reports facts
// about anything outside the root.
func StatMention(root, rel string) FileFacts {
	if rel == "" || filepath.IsAbs(rel) || strings.HasPrefix(rel, "/") || strings.ContainsRune(rel, 0) {
		return FileFacts{OutsideWorkspace: true}
	}
	for _, c := range strings.Split(rel, "/") {
		if c == ".." {
			return FileFacts{OutsideWorkspace: true}
		}
	}
	absRoot, err := filepath.Abs(root)
	if err != nil {
		return FileFacts{Missing: true}
	}
	realRoot, err := filepath.EvalSymlinks(absRoot)
	if err != nil {
		return FileFacts{Missing: true}
	}
	real, err := filepath.EvalSymlinks(filepath.Join(absRoot, filepath.FromSlash(rel)))
	if err != nil {
		// Not found, a dangling link, or a non-directory in the middle.
		return FileFacts{Missing: true}
	}
	if !within(realRoot, real) {
		return FileFacts{OutsideWorkspace: true}
	}
	fi, err := os.Stat(real)
	if err != nil {
		return FileFacts{Missing: true}
	}
	facts := FileFacts{Size: fi.Size(), ModTime: fi.ModTime(), Kind: KindFile}
	switch {
	case fi.IsDir():
		facts.Kind = KindDirectory
	case strings.HasSuffix(rel, "/"):
		return FileFacts{Missing: true} // "file/" names a directory that is not there
	}
	return facts
}
