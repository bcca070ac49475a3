package titles

import (
	"runtime"
	"strings"
	"sync/atomic"
)

// windowsPaths is set where a path names the same directory whatever the
// case of its letters and whichever slash separates its parts.
const windowsPaths = runtime.GOOS == "windows"

// cwdSpelling remembers the last workspace directory a snapshot resolved
// to the spelling of its index (spellingOf): the same one comes with
// every keystroke.
type cwdSpelling struct {
	dir, indexed string
}

// spellingOf returns the cwd of the index that names the directory dir:
// dir itself when the index has it. On Windows it is the indexed cwd equal
// to dir but for the case of its letters and its slashes: a workspace's
// path comes from the editor's file URI, which writes the drive letter in
// lower case (c:\Users\me\proj), where dsh writes what Windows gave it
// (C:\Users\me\proj), and the two must fall in one group (SPEC §2.2) for
// the workspace's sessions to rank as its own.
func (s *Snapshot) spellingOf(dir string) string {
	if _, ok := s.cwds[dir]; ok || !windowsPaths || dir == "" {
		return dir
	}
	if last := s.spelling.Load(); last != nil && last.dir == dir {
		return last.indexed
	}
	indexed := dir
	want := windowsPathKey(dir)
	for c := range s.cwds {
		if windowsPathKey(c) == want {
			indexed = c
			break
		}
	}
	s.spelling.Store(&cwdSpelling{dir: dir, indexed: indexed})
	return indexed
}

// windowsPathKey is p as Windows compares paths: letters in lower case,
// backslashes for slashes, no trailing separator but a root's.
func windowsPathKey(p string) string {
	p = strings.ToLower(strings.ReplaceAll(p, "/", `\`))
	if len(p) > 3 {
		p = strings.TrimSuffix(p, `\`)
	}
	return p
}

// lastSpelling is the snapshot field spellingOf caches in.
type lastSpelling = atomic.Pointer[cwdSpelling]
