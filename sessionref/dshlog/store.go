package dshlog

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/dsh-refls/dsh-refls/sessionref/dshlog/layout"
)

// Log file names of §1.1: the base generation and its successors.
const (
	logBaseName   = "session"
	logRawSuffix  = ".jsonl"
	logZstdSuffix = ".jsonl.zstd"
)

// ResolveRoot returns the sessions root of §1.1: flagValue when set, else
// $DSH_HOME/sessions (a blank DSH_HOME counts as unset), else
// ~/.dsh/sessions.
func ResolveRoot(flagValue string) (string, error) {
	return resolveRoot(flagValue, os.Getenv, os.UserHomeDir)
}

func resolveRoot(flagValue string, getenv func(string) string, home func() (string, error)) (string, error) {
	if flagValue != "" {
		abs, err := filepath.Abs(flagValue)
		if err != nil {
			return "", fmt.Errorf("resolving sessions root %q: %w", flagValue, err)
		}
		return abs, nil
	}
	if dsh := getenv("DSH_HOME"); strings.TrimSpace(dsh) != "" {
		abs, err := filepath.Abs(filepath.Join(dsh, "sessions"))
		if err != nil {
			return "", fmt.Errorf("resolving $DSH_HOME %q: %w", dsh, err)
		}
		return abs, nil
	}
	h, err := home()
	if err != nil {
		return "", fmt.Errorf("finding the home directory for ~/.dsh/sessions: %w", err)
	}
	return filepath.Join(h, ".dsh", "sessions"), nil
}

// LogFile is the chosen log of one session directory.
type LogFile struct {
	Path       string
	Encoding   layout.Encoding
	Generation int
}

// ParseLogName recognises session.jsonl, session.jsonl.zstd,
// session.vN.jsonl and session.vN.jsonl.zstd.
func ParseLogName(name string) (gen int, enc layout.Encoding, ok bool) {
	var stem string
	switch {
	case strings.HasSuffix(name, logZstdSuffix):
		stem, enc = strings.TrimSuffix(name, logZstdSuffix), layout.EncodingZstd
	case strings.HasSuffix(name, logRawSuffix):
		stem, enc = strings.TrimSuffix(name, logRawSuffix), layout.EncodingRaw
	default:
		return 0, "", false
	}
	if stem == logBaseName {
		return 0, enc, true
	}
	rest, found := strings.CutPrefix(stem, logBaseName+".v")
	if !found || rest == "" || rest[0] == '0' || strings.Trim(rest, "0123456789") != "" {
		return 0, "", false // N is decimal digits without a leading zero
	}
	n, err := strconv.Atoi(rest)
	if err != nil || n < 1 {
		return 0, "", false
	}
	return n, enc, true
}

// chooseLog picks the highest generation in a session directory; at equal
// generations the zstd log (dsh's default) wins.
func chooseLog(dir string, names []string) (LogFile, bool) {
	best := LogFile{Generation: -1}
	for _, name := range names {
		gen, enc, ok := ParseLogName(name)
		if !ok {
			continue
		}
		if gen > best.Generation || (gen == best.Generation && enc == layout.EncodingZstd) {
			best = LogFile{Path: filepath.Join(dir, name), Encoding: enc, Generation: gen}
		}
	}
	return best, best.Generation >= 0
}

// SessionDir is a session directory and the log chosen in it. The writer
// keeps one per session, so it holds one string: the directory's path and
// both names are substrings of the log path, located by their lengths.
type SessionDir struct {
	Log LogFile
	// DirModTime is the session directory's modification time (ns) when its
	// log was chosen: while it is unchanged no log file came or went.
	DirModTime int64
	// dirEnd is the length of the directory's path in Log.Path, nameLen
	// that of its name (encodeSegment(id)) at the path's end, and projLen
	// that of the project directory's name (e.g. "--home-u-proj--" or
	// "_no-cwd") before it.
	dirEnd, nameLen, projLen int32
}

// MakeSessionDir returns the SessionDir of the log lf chosen in the
// directory path, named dirName in the project directory projectName. It
// reports false when lf.Path is not path/<log name>, or path not
// <…>/projectName/dirName.
func MakeSessionDir(projectName, dirName, path string, lf LogFile, mod int64) (SessionDir, bool) {
	p, n := lf.Path, len(path)
	nameStart := n - len(dirName)
	projStart := nameStart - 1 - len(projectName)
	if len(p) > math.MaxInt32 || len(p) <= n || p[:n] != path || !os.IsPathSeparator(p[n]) ||
		projStart < 0 || p[nameStart:n] != dirName || !os.IsPathSeparator(p[nameStart-1]) || p[projStart:nameStart-1] != projectName {
		return SessionDir{}, false
	}
	return SessionDir{Log: lf, DirModTime: mod, dirEnd: int32(n), nameLen: int32(len(dirName)), projLen: int32(len(projectName))}, true
}

// Path is the session directory's absolute path.
func (d *SessionDir) Path() string { return d.Log.Path[:d.dirEnd] }

// DirName is the session directory's name.
func (d *SessionDir) DirName() string { return d.Log.Path[d.dirEnd-d.nameLen : d.dirEnd] }

// ProjectName is the name of the project directory holding it.
func (d *SessionDir) ProjectName() string {
	end := d.dirEnd - d.nameLen - 1
	return d.Log.Path[end-d.projLen : end]
}

// DirRef names a session directory found by listing a project directory.
type DirRef struct {
	ProjectName, DirName, Path string
}

// IsProjectDirName reports whether name is a project directory of §1.1.
func IsProjectDirName(name string) bool {
	return name == layout.NoCwdDir || (len(name) >= 4 && strings.HasPrefix(name, "--") && strings.HasSuffix(name, "--"))
}

// Discover lists the session directories below root. A root that does not
// exist yet is not an error: it has no sessions.
func Discover(root string) ([]DirRef, []Skipped, error) {
	projects, err := os.ReadDir(root)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("listing sessions root %s: %w", root, err)
	}
	var refs []DirRef
	var skipped []Skipped
	for _, p := range projects {
		if !p.IsDir() || !IsProjectDirName(p.Name()) {
			continue // not a project directory; dsh keeps other files here
		}
		found, skip := DiscoverProject(filepath.Join(root, p.Name()), p.Name())
		refs = append(refs, found...)
		skipped = append(skipped, skip...)
	}
	return refs, skipped, nil
}

// DiscoverProject lists the session directories of one project directory.
func DiscoverProject(pPath, projectName string) ([]DirRef, []Skipped) {
	entries, err := os.ReadDir(pPath)
	if err != nil {
		return nil, []Skipped{{Path: pPath, Reason: fmt.Sprintf("project directory unreadable: %v", err)}}
	}
	var refs []DirRef
	var skipped []Skipped
	for _, e := range entries {
		ePath := joinListed(pPath, e.Name())
		if !e.IsDir() {
			if isLogLike(e.Name()) {
				skipped = append(skipped, Skipped{Path: ePath, Reason: "flat-layout log directly in a project directory is ignored; dsh keeps each session in its own directory"})
			}
			continue
		}
		refs = append(refs, DirRef{ProjectName: projectName, DirName: e.Name(), Path: ePath})
	}
	return refs, skipped
}

// joinListed is filepath.Join(dir, name) for a clean dir and a name listed
// in it (one plain name), without the Clean that Join does for each of a
// store's session directories.
func joinListed(dir, name string) string {
	if strings.HasSuffix(dir, string(filepath.Separator)) { // the filesystem root
		return dir + name
	}
	return dir + string(filepath.Separator) + name
}

// ChooseSessionLog finds the log of one session directory. prior, when not
// nil, is what was chosen last time: it is reused without listing the
// directory while the directory's modification time is unchanged, so a
// restart costs a stat, not a listing.
func ChooseSessionLog(ref DirRef, prior *SessionDir) (SessionDir, *Skipped) {
	dirID, err := StatIdentity(ref.Path)
	if err != nil {
		return SessionDir{}, &Skipped{Path: ref.Path, Reason: fmt.Sprintf("session directory unreadable: %v", err)}
	}
	mod := dirID.ModTime
	if prior != nil && prior.DirModTime == mod && prior.Log.Path != "" {
		return *prior, nil
	}
	names, err := readDirNames(ref.Path)
	if err != nil {
		return SessionDir{}, &Skipped{Path: ref.Path, Reason: fmt.Sprintf("session directory unreadable: %v", err)}
	}
	lf, ok := chooseLog(ref.Path, names)
	if !ok {
		return SessionDir{}, &Skipped{Path: ref.Path, Reason: "session directory holds no session log"}
	}
	d, ok := MakeSessionDir(ref.ProjectName, ref.DirName, ref.Path, lf, mod)
	if !ok { // Discover joins the names it lists: not reached
		return SessionDir{}, &Skipped{Path: ref.Path, Reason: "session directory path is not <root>/<project>/<session>"}
	}
	return d, nil
}

func isLogLike(name string) bool {
	return strings.HasSuffix(name, logRawSuffix) || strings.HasSuffix(name, logZstdSuffix)
}

func readDirNames(dir string) ([]string, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	names, err := f.Readdirnames(-1)
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	return names, nil
}

// CheckIdentity verifies that a header belongs where its log lies (§1.1).
func CheckIdentity(d SessionDir, h Header) error {
	if want := layout.EncodeSegment(h.ID); want != d.DirName() {
		return fmt.Errorf("header id %q encodes to %q, not to its directory name %q", h.ID, want, d.DirName())
	}
	if want := layout.ProjectDir(h.Cwd, h.HasCwd); want != d.ProjectName() {
		return fmt.Errorf("header cwd maps to project directory %q, not %q", want, d.ProjectName())
	}
	if d.Log.Generation > 0 && h.Version != d.Log.Generation {
		return fmt.Errorf("generation %d log has header version %d", d.Log.Generation, h.Version)
	}
	return nil
}
