package ignore

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Env is the part of the process environment that decides where git looks
// for configuration and the global excludes file. Tests point it at
// temporary directories; the product uses EnvFromOS.
type Env struct {
	Home          string // $HOME
	XDGConfigHome string // $XDG_CONFIG_HOME, "" when unset or empty
	ConfigGlobal  string // $GIT_CONFIG_GLOBAL, replaces both global files when set
	ConfigSystem  string // $GIT_CONFIG_SYSTEM or the default system file
	NoSystem      bool   // $GIT_CONFIG_NOSYSTEM is true
}

// defaultSystemConfig is where Debian's git (prefix /usr) keeps its system
// configuration.
const defaultSystemConfig = "/etc/gitconfig"

// EnvFromOS reads Env from the process environment.
func EnvFromOS() Env {
	e := Env{
		Home:          os.Getenv("HOME"),
		XDGConfigHome: os.Getenv("XDG_CONFIG_HOME"),
		ConfigGlobal:  os.Getenv("GIT_CONFIG_GLOBAL"),
		ConfigSystem:  os.Getenv("GIT_CONFIG_SYSTEM"),
		NoSystem:      configBool(os.Getenv("GIT_CONFIG_NOSYSTEM")),
	}
	if e.ConfigSystem == "" {
		e.ConfigSystem = defaultSystemConfig
	}
	return e
}

// configBool interprets a git boolean; an unparsable value counts as false.
func configBool(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "1", "true", "yes", "on":
		return true
	}
	return false
}

// xdgConfigDir is $XDG_CONFIG_HOME/git or ~/.config/git, as git resolves it.
func (e Env) xdgConfigDir() string {
	if e.XDGConfigHome != "" {
		return filepath.Join(e.XDGConfigHome, "git")
	}
	if e.Home == "" {
		return ""
	}
	return filepath.Join(e.Home, ".config", "git")
}

// configFiles lists the configuration files git reads for a repository,
// lowest precedence first.
func (e Env) configFiles(gitDir string) []string {
	var files []string
	if !e.NoSystem && e.ConfigSystem != "" {
		files = append(files, e.ConfigSystem)
	}
	if e.ConfigGlobal != "" {
		files = append(files, e.ConfigGlobal)
	} else {
		if d := e.xdgConfigDir(); d != "" {
			files = append(files, filepath.Join(d, "config"))
		}
		if e.Home != "" {
			files = append(files, filepath.Join(e.Home, ".gitconfig"))
		}
	}
	if gitDir != "" {
		files = append(files, filepath.Join(gitDir, "config"))
	}
	return files
}

// ExcludesFile resolves the global excludes file the way git does: the
// last core.excludesFile value in the configuration files of the repository
// whose git directory is gitDir ("~/" expanded, relative paths taken from
// the working tree worktree); when unset, $XDG_CONFIG_HOME/git/ignore or
// ~/.config/git/ignore. It returns "" when there is none. Unreadable config
// files are reported in errs and otherwise skipped, as git would fail
// loudly and we keep serving.
func (e Env) ExcludesFile(gitDir, worktree string) (path string, errs []error) {
	return e.excludesFile(nil, gitDir, worktree)
}

func (e Env) excludesFile(c *Cache, gitDir, worktree string) (path string, errs []error) {
	value, set := "", false
	for _, f := range e.configFiles(gitDir) {
		v, ok, err := c.readCoreExcludesFile(f)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if ok {
			value, set = v, true
		}
	}
	if !set {
		if d := e.xdgConfigDir(); d != "" {
			return filepath.Join(d, "ignore"), errs
		}
		return "", errs
	}
	if value == "" {
		return "", errs
	}
	if value == "~" || strings.HasPrefix(value, "~/") {
		if e.Home == "" {
			return "", append(errs, fmt.Errorf("core.excludesFile %q: HOME is not set", value))
		}
		value = filepath.Join(e.Home, value[1:])
	}
	if !filepath.IsAbs(value) {
		value = filepath.Join(worktree, value)
	}
	return value, errs
}

// readCoreExcludesFile returns the last core.excludesFile value of one git
// configuration file. A missing file is not an error. include directives
// are not followed. The file may be a symlink (dotfile setups link it),
// but it must be a regular file of at most maxConfigBytes.
func (c *Cache) readCoreExcludesFile(path string) (value string, ok bool, err error) {
	key := cacheKey{path: path, follow: true, config: true}
	if e, hit := c.lookup(key); hit {
		return e.value, e.set, nil
	}
	data, fi, err := readRegular(path, true, maxConfigBytes)
	if err != nil {
		if isAbsent(err) {
			return "", false, nil
		}
		return "", false, fmt.Errorf("reading git config %s: %w", path, err)
	}
	value, ok, err = parseCoreExcludesFile(path, data)
	if err == nil {
		c.store(key, fi, cacheEntry{value: value, set: ok})
	}
	return value, ok, err
}

// parseCoreExcludesFile finds the last core.excludesFile value in the
// configuration file data read from path.
func parseCoreExcludesFile(path string, data []byte) (value string, ok bool, err error) {
	section := ""
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	pending := ""
	for sc.Scan() {
		line := pending + sc.Text()
		pending = ""
		// A backslash at the very end continues the value on the next line.
		if strings.HasSuffix(line, "\\") && !strings.HasSuffix(line, "\\\\") {
			pending = line[:len(line)-1]
			continue
		}
		s := strings.TrimSpace(line)
		if s == "" || s[0] == '#' || s[0] == ';' {
			continue
		}
		if s[0] == '[' {
			end := strings.IndexByte(s, ']')
			if end < 0 {
				return "", false, fmt.Errorf("parsing git config %s: bad section header %q", path, s)
			}
			section = strings.TrimSpace(s[1:end])
			rest := strings.TrimSpace(s[end+1:])
			section = strings.ToLower(section)
			if rest == "" || rest[0] == '#' || rest[0] == ';' {
				continue
			}
			s = rest
		}
		if section != "core" {
			continue
		}
		key, val, hasEq := strings.Cut(s, "=")
		if !strings.EqualFold(strings.TrimSpace(key), "excludesfile") {
			continue
		}
		if !hasEq {
			// A bare key is boolean true, which is not a path.
			continue
		}
		value, ok = parseConfigValue(val), true
	}
	if err := sc.Err(); err != nil {
		return "", false, fmt.Errorf("reading git config %s: %w", path, err)
	}
	return value, ok, nil
}

// parseConfigValue applies git's value syntax: surrounding whitespace
// dropped, "#" and ";" start a comment outside quotes, double quotes group,
// and \" \\ \n \t \b are escapes.
func parseConfigValue(v string) string {
	var b strings.Builder
	inQuote := false
	v = strings.TrimLeft(v, " \t")
	trailing := 0 // count of unquoted trailing spaces written
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c == '"':
			inQuote = !inQuote
			trailing = 0
		case c == '\\' && i+1 < len(v):
			i++
			switch v[i] {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'b':
				b.WriteByte('\b')
			default:
				b.WriteByte(v[i])
			}
			trailing = 0
		case !inQuote && (c == '#' || c == ';'):
			return b.String()[:b.Len()-trailing]
		case !inQuote && (c == ' ' || c == '\t'):
			b.WriteByte(c)
			trailing++
		default:
			b.WriteByte(c)
			trailing = 0
		}
	}
	s := b.String()
	return s[:len(s)-trailing]
}

// GitDirs resolves the git directory of the working tree dir: dir/.git when
// it is a directory, or the target of a "gitdir: " file (worktrees,
// submodules). commonDir is where info/exclude lives (it differs for linked
// worktrees). ok is false when dir has no .git entry.
func GitDirs(dir string) (gitDir, commonDir string, ok bool) {
	dotGit := filepath.Join(dir, ".git")
	fi, err := os.Lstat(dotGit)
	if err != nil {
		return "", "", false
	}
	switch {
	case fi.IsDir():
		gitDir = dotGit
	case fi.Mode().IsRegular():
		data, _, err := readRegular(dotGit, false, maxSmallFileBytes)
		if err != nil {
			return "", "", false
		}
		line, _, _ := strings.Cut(string(data), "\n")
		target, found := strings.CutPrefix(strings.TrimSpace(line), "gitdir:")
		if !found {
			return "", "", false
		}
		target = strings.TrimSpace(target)
		if !filepath.IsAbs(target) {
			target = filepath.Join(dir, target)
		}
		gitDir = target
	default:
		return "", "", false
	}
	commonDir = gitDir
	if data, _, err := readRegular(filepath.Join(gitDir, "commondir"), false, maxSmallFileBytes); err == nil {
		c := strings.TrimSpace(string(data))
		if !filepath.IsAbs(c) {
			c = filepath.Join(gitDir, c)
		}
		commonDir = c
	}
	return gitDir, commonDir, true
}

// RepoLists returns the repository-wide lists for the working tree dir,
// lowest precedence first: the global excludes file and info/exclude. Lists
// that do not exist are omitted; read failures other than absence are
// returned in errs.
func RepoLists(dir string, env Env) (lists []*List, errs []error) {
	return (*Cache)(nil).RepoLists(dir, env)
}

// RepoLists is the package's RepoLists, reading through the cache.
func (c *Cache) RepoLists(dir string, env Env) (lists []*List, errs []error) {
	gitDir, commonDir, ok := GitDirs(dir)
	if !ok {
		gitDir, commonDir = "", ""
	}
	excl, cerrs := env.excludesFile(c, gitDir, dir)
	errs = append(errs, cerrs...)
	if excl != "" {
		l, err := c.readList("", excl, true)
		if err != nil {
			errs = append(errs, err)
		} else if l != nil {
			lists = append(lists, l)
		}
	}
	if commonDir != "" {
		l, err := c.ReadList("", filepath.Join(commonDir, "info", "exclude"))
		if err != nil {
			errs = append(errs, err)
		} else if l != nil {
			lists = append(lists, l)
		}
	}
	return lists, errs
}

// ReadList reads and parses one ignore file of a repository or workspace
// (.gitignore, .dshignore, info/exclude). A missing file gives a nil list
// and no error. Like git (since 2.32) for in-tree ignore files, a symlink
// is not followed, so no link can lead the reader out of the repository;
// FIFOs, devices and files over MaxFileBytes are refused with an error
// saying why, and never block or grow memory.
func ReadList(base, path string) (*List, error) { return (*Cache)(nil).readList(base, path, false) }

// ReadList is the package's ReadList, reading through the cache.
func (c *Cache) ReadList(base, path string) (*List, error) { return c.readList(base, path, false) }

// readList is ReadList; follow lets the last component be a symlink, for
// the user's own global excludes file.
func (c *Cache) readList(base, path string, follow bool) (*List, error) {
	key := cacheKey{path: path, base: base, follow: follow}
	if e, ok := c.lookup(key); ok {
		return e.list, nil
	}
	data, fi, err := readRegular(path, follow, MaxFileBytes)
	if err != nil {
		if isAbsent(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("reading ignore file %s: %w", path, err)
	}
	l := ParseList(base, path, data)
	c.store(key, fi, cacheEntry{list: l})
	return l, nil
}
