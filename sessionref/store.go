package sessionref

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/dsh-refls/dsh-refls/sessionref/dshlog"
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

// logFile is the chosen log of one session directory.
type logFile struct {
	path       string
	encoding   Encoding
	generation int
}

// parseLogName recognises session.jsonl, session.jsonl.zstd,
// session.vN.jsonl and session.vN.jsonl.zstd.
func parseLogName(name string) (gen int, enc Encoding, ok bool) {
	var stem string
	switch {
	case strings.HasSuffix(name, logZstdSuffix):
		stem, enc = strings.TrimSuffix(name, logZstdSuffix), EncodingZstd
	case strings.HasSuffix(name, logRawSuffix):
		stem, enc = strings.TrimSuffix(name, logRawSuffix), EncodingRaw
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
func chooseLog(dir string, names []string) (logFile, bool) {
	best := logFile{generation: -1}
	for _, name := range names {
		gen, enc, ok := parseLogName(name)
		if !ok {
			continue
		}
		if gen > best.generation || (gen == best.generation && enc == EncodingZstd) {
			best = logFile{path: filepath.Join(dir, name), encoding: enc, generation: gen}
		}
	}
	return best, best.generation >= 0
}

// sessionDir is a session directory and the log chosen in it. The writer
// keeps one per session, so it holds one string: the directory's path and
// both names are substrings of the log path, located by their lengths.
type sessionDir struct {
	log logFile
	// dirModTime is the session directory's modification time (ns) when its
	// log was chosen: while it is unchanged no log file came or went.
	dirModTime int64
	// dirEnd is the length of the directory's path in log.path, nameLen
	// that of its name (encodeSegment(id)) at the path's end, and projLen
	// that of the project directory's name (e.g. "--home-u-proj--" or
	// "_no-cwd") before it.
	dirEnd, nameLen, projLen int32
}

// makeSessionDir returns the sessionDir of the log lf chosen in the
// directory path, named dirName in the project directory projectName. It
// reports false when lf.path is not path/<log name>, or path not
// <…>/projectName/dirName.
func makeSessionDir(projectName, dirName, path string, lf logFile, mod int64) (sessionDir, bool) {
	p, n := lf.path, len(path)
	nameStart := n - len(dirName)
	projStart := nameStart - 1 - len(projectName)
	if len(p) > math.MaxInt32 || len(p) <= n || p[:n] != path || !os.IsPathSeparator(p[n]) ||
		projStart < 0 || p[nameStart:n] != dirName || !os.IsPathSeparator(p[nameStart-1]) || p[projStart:nameStart-1] != projectName {
		return sessionDir{}, false
	}
	return sessionDir{log: lf, dirModTime: mod, dirEnd: int32(n), nameLen: int32(len(dirName)), projLen: int32(len(projectName))}, true
}

// path is the session directory's absolute path.
func (d *sessionDir) path() string { return d.log.path[:d.dirEnd] }

// dirName is the session directory's name.
func (d *sessionDir) dirName() string { return d.log.path[d.dirEnd-d.nameLen : d.dirEnd] }

// projectName is the name of the project directory holding it.
func (d *sessionDir) projectName() string {
	end := d.dirEnd - d.nameLen - 1
	return d.log.path[end-d.projLen : end]
}

// dirRef names a session directory found by listing a project directory.
type dirRef struct {
	projectName, dirName, path string
}

// isProjectDirName reports whether name is a project directory of §1.1.
func isProjectDirName(name string) bool {
	return name == dshlog.NoCwdDir || (len(name) >= 4 && strings.HasPrefix(name, "--") && strings.HasSuffix(name, "--"))
}

// discover lists the session directories below root. A root that does not
// exist yet is not an error: it has no sessions.
func discover(root string) ([]dirRef, []Skipped, error) {
	projects, err := os.ReadDir(root)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("listing sessions root %s: %w", root, err)
	}
	var refs []dirRef
	var skipped []Skipped
	for _, p := range projects {
		if !p.IsDir() || !isProjectDirName(p.Name()) {
			continue // not a project directory; dsh keeps other files here
		}
		found, skip := discoverProject(filepath.Join(root, p.Name()), p.Name())
		refs = append(refs, found...)
		skipped = append(skipped, skip...)
	}
	return refs, skipped, nil
}

// discoverProject lists the session directories of one project directory.
func discoverProject(pPath, projectName string) ([]dirRef, []Skipped) {
	entries, err := os.ReadDir(pPath)
	if err != nil {
		return nil, []Skipped{{Path: pPath, Reason: fmt.Sprintf("project directory unreadable: %v", err)}}
	}
	var refs []dirRef
	var skipped []Skipped
	for _, e := range entries {
		ePath := joinListed(pPath, e.Name())
		if !e.IsDir() {
			if isLogLike(e.Name()) {
				skipped = append(skipped, Skipped{Path: ePath, Reason: "flat-layout log directly in a project directory is ignored; dsh keeps each session in its own directory"})
			}
			continue
		}
		refs = append(refs, dirRef{projectName: projectName, dirName: e.Name(), path: ePath})
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

// chooseSessionLog finds the log of one session directory. prior, when not
// nil, is what was chosen last time: it is reused without listing the
// directory while the directory's modification time is unchanged, so a
// restart costs a stat, not a listing.
func chooseSessionLog(ref dirRef, prior *sessionDir) (sessionDir, *Skipped) {
	dirID, err := dshlog.StatIdentity(ref.path)
	if err != nil {
		return sessionDir{}, &Skipped{Path: ref.path, Reason: fmt.Sprintf("session directory unreadable: %v", err)}
	}
	mod := dirID.ModTime
	if prior != nil && prior.dirModTime == mod && prior.log.path != "" {
		return *prior, nil
	}
	names, err := readDirNames(ref.path)
	if err != nil {
		return sessionDir{}, &Skipped{Path: ref.path, Reason: fmt.Sprintf("session directory unreadable: %v", err)}
	}
	lf, ok := chooseLog(ref.path, names)
	if !ok {
		return sessionDir{}, &Skipped{Path: ref.path, Reason: "session directory holds no session log"}
	}
	d, ok := makeSessionDir(ref.projectName, ref.dirName, ref.path, lf, mod)
	if !ok { // discover joins the names it lists: not reached
		return sessionDir{}, &Skipped{Path: ref.path, Reason: "session directory path is not <root>/<project>/<session>"}
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

// checkIdentity verifies that a header belongs where its log lies (§1.1).
func checkIdentity(d sessionDir, h Header) error {
	if want := dshlog.EncodeSegment(h.ID); want != d.dirName() {
		return fmt.Errorf("header id %q encodes to %q, not to its directory name %q", h.ID, want, d.dirName())
	}
	if want := dshlog.ProjectDir(h.Cwd, h.HasCwd); want != d.projectName() {
		return fmt.Errorf("header cwd maps to project directory %q, not %q", want, d.projectName())
	}
	if d.log.generation > 0 && h.Version != d.log.generation {
		return fmt.Errorf("generation %d log has header version %d", d.log.generation, h.Version)
	}
	return nil
}
