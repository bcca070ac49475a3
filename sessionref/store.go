package sessionref

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
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
	if !found || rest == "" || (len(rest) > 1 && rest[0] == '0') {
		return 0, "", false
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

// sessionDir is one candidate session directory found on disk.
type sessionDir struct {
	projectName string // e.g. "--home-u-proj--" or "_no-cwd"
	dirName     string // encodeSegment(id)
	log         logFile
}

// isProjectDirName reports whether name is a project directory of §1.1.
func isProjectDirName(name string) bool {
	return name == NoCwdDir || (len(name) >= 4 && strings.HasPrefix(name, "--") && strings.HasSuffix(name, "--"))
}

// discover lists the session directories below root. A root that does not
// exist yet is not an error: it has no sessions.
func discover(root string) ([]sessionDir, []Skipped, error) {
	projects, err := os.ReadDir(root)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("listing sessions root %s: %w", root, err)
	}
	var dirs []sessionDir
	var skipped []Skipped
	for _, p := range projects {
		pPath := filepath.Join(root, p.Name())
		if !p.IsDir() || !isProjectDirName(p.Name()) {
			continue // not a project directory; dsh keeps other files here
		}
		found, skip := discoverProject(pPath, p.Name())
		dirs = append(dirs, found...)
		skipped = append(skipped, skip...)
	}
	return dirs, skipped, nil
}

// discoverProject lists the session directories of one project directory.
func discoverProject(pPath, projectName string) ([]sessionDir, []Skipped) {
	entries, err := os.ReadDir(pPath)
	if err != nil {
		return nil, []Skipped{{Path: pPath, Reason: fmt.Sprintf("project directory unreadable: %v", err)}}
	}
	var dirs []sessionDir
	var skipped []Skipped
	for _, e := range entries {
		ePath := filepath.Join(pPath, e.Name())
		if !e.IsDir() {
			if _, _, ok := parseLogName(strings.TrimPrefix(e.Name(), ".")); ok || isLogLike(e.Name()) {
				skipped = append(skipped, Skipped{Path: ePath, Reason: "flat-layout log directly in a project directory is ignored; dsh keeps each session in its own directory"})
			}
			continue
		}
		if d, skip, ok := discoverSession(pPath, projectName, e.Name()); ok {
			dirs = append(dirs, d)
		} else if skip != nil {
			skipped = append(skipped, *skip)
		}
	}
	return dirs, skipped
}

// discoverSession chooses the log of one session directory.
func discoverSession(pPath, projectName, dirName string) (sessionDir, *Skipped, bool) {
	sPath := filepath.Join(pPath, dirName)
	names, err := readDirNames(sPath)
	if err != nil {
		return sessionDir{}, &Skipped{Path: sPath, Reason: fmt.Sprintf("session directory unreadable: %v", err)}, false
	}
	lf, ok := chooseLog(sPath, names)
	if !ok {
		return sessionDir{}, &Skipped{Path: sPath, Reason: "session directory holds no session log"}, false
	}
	return sessionDir{projectName: projectName, dirName: dirName, log: lf}, nil, true
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
	if want := EncodeSegment(h.ID); want != d.dirName {
		return fmt.Errorf("header id %q encodes to %q, not to its directory name %q", h.ID, want, d.dirName)
	}
	if want := ProjectDir(h.Cwd, h.HasCwd); want != d.projectName {
		return fmt.Errorf("header cwd maps to project directory %q, not %q", want, d.projectName)
	}
	if d.log.generation > 0 && h.Version != d.log.generation {
		return fmt.Errorf("generation %d log has header version %d", d.log.generation, h.Version)
	}
	return nil
}
