package ignore

import (
	"os"
	"path/filepath"
	"testing"
)

// Cases from git's t/t3070-wildmatch.sh.
func TestWildmatch(t *testing.T) {
	tests := []struct {
		text, pattern string
		pathname      bool // WM_PATHNAME result
		plain         bool // result without WM_PATHNAME
	}{
		{"foo", "foo", true, true},
		{"bar", "foo", false, false},
		{"", "", true, true},
		{"foo", "???", true, true},
		{"foo", "??", false, false},
		{"foo", "*", true, true},
		{"foo", "f*", true, true},
		{"foo", "*f", false, false},
		{"foo", "*foo*", true, true},
		{"foobar", "*ob*a*r*", true, true},
		{"aaaaaaabababab", "*ab", true, true},
		{"foo*", `foo\*`, true, true},
		{"foobar", `foo\*bar`, false, false},
		{`f\oo`, `f\\oo`, true, true},
		{"ball", "*[al]?", true, true},
		{"ten", "[ten]", false, false},
		{"ten", "**[!te]", true, true},
		{"ten", "**[!ten]", false, false},
		{"ten", "t[a-g]n", true, true},
		{"ton", "t[!a-g]n", true, true},
		{"ton", "t[^a-g]n", true, true},
		{"a]b", "a[]]b", true, true},
		{"a-b", "a[]-]b", true, true},
		{"a]b", "a[]-]b", true, true},
		{"aab", "a[]-]b", false, false},
		{"aab", "a[]a-]b", true, true},
		{"]", "]", true, true},
		{"foo/baz/bar", "foo*bar", false, true},
		{"foo/baz/bar", "foo**bar", false, true},
		{"foo/baz/bar", "foo/**/bar", true, true},
		{"foo/bar", "foo/**/bar", true, false},
		{"foo/b/a/z/bar", "foo/**/bar", true, true},
		{"foo/b/a/z/bar", "foo/**/**/bar", true, true},
		{"foo/bar", "foo?bar", false, true},
		{"foo/bar", "foo[/]bar", false, true},
		{"foo-bar", "f[^eiu][^eiu][^eiu][^eiu][^eiu]r", true, true},
		{"foo", "**/foo", true, false},
		{"XXX/foo", "**/foo", true, true},
		{"bar/baz/foo", "**/foo", true, true},
		{"bar/baz/foo", "*/foo", false, true},
		{"foo/bar/baz", "**/bar*", false, true},
		{"deep/foo/bar/baz", "**/bar/*", true, true},
		{"deep/foo/bar/baz/", "**/bar/*", false, true},
		{"deep/foo/bar/baz/", "**/bar/**", true, true},
		{"deep/foo/bar", "**/bar/*", false, false},
		{"deep/foo/bar/", "**/bar/**", true, true},
		{"foo/bar/baz/x", "*/bar/**", true, true},
		{"deep/foo/bar/baz/x", "*/bar/**", false, true},
		{"deep/foo/bar/baz/x", "**/bar/*/*", true, true},
		{"a", "[[:alpha:]]", true, true},
		{"1", "[[:digit:]]", true, true},
		{"a", "[[:digit:]]", false, false},
		{"a", "[[:foo:]]", false, false},
		{"-", "[a-]", true, true},
		{"ab", "a[", false, false},
		{"abc", `abc\`, false, false},
	}
	for _, tc := range tests {
		if got := wildmatch(tc.pattern, tc.text, wildPathname); got != tc.pathname {
			t.Errorf("wildmatch(%q, %q, pathname) = %v, want %v", tc.pattern, tc.text, got, tc.pathname)
		}
		if got := wildmatch(tc.pattern, tc.text, 0); got != tc.plain {
			t.Errorf("wildmatch(%q, %q) = %v, want %v", tc.pattern, tc.text, got, tc.plain)
		}
	}
}

func TestListMatch(t *testing.T) {
	data := "\xEF\xBB\xBF# comment\r\n*.log\r\n!keep.log\nbuild/\n/root-only\ndoc/frotz/\ntrail  \nesc\\ \n\\#hash\n\\!bang\n\n   \nsub/**/x\n"
	l := ParseList("", "test", []byte(data))
	tests := []struct {
		path  string
		isDir bool
		want  string // matching pattern, "" for none
	}{
		{"a.log", false, "*.log"},
		{"dir/keep.log", false, "!keep.log"},
		{"build", true, "build/"},
		{"build", false, ""},
		{"x/build", true, "build/"},
		{"root-only", false, "/root-only"},
		{"x/root-only", false, ""},
		{"doc/frotz", true, "doc/frotz/"},
		{"x/doc/frotz", true, ""},
		{"trail", false, "trail"},
		{"esc ", false, `esc\ `},
		{"esc", false, ""},
		{"#hash", false, `\#hash`},
		{"!bang", false, `\!bang`},
		{"sub/x", false, "sub/**/x"},
		{"sub/a/b/x", false, "sub/**/x"},
		{"other/sub/x", false, ""},
		{"# comment", false, ""},
	}
	for _, tc := range tests {
		name := tc.path[lastSlash(tc.path)+1:]
		p := l.Match(tc.path, name, tc.isDir)
		got := ""
		if p != nil {
			got = p.String()
		}
		if got != tc.want {
			t.Errorf("Match(%q, dir=%v) = %q, want %q", tc.path, tc.isDir, got, tc.want)
		}
	}
}

func lastSlash(s string) int {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == '/' {
			return i
		}
	}
	return -1
}

func TestListBase(t *testing.T) {
	l := ParseList("sub/", "sub/.gitignore", []byte("/a.txt\nb/c\n"))
	tests := []struct {
		path string
		want bool
	}{
		{"sub/a.txt", true},
		{"a.txt", false},
		{"sub/x/a.txt", false},
		{"sub/b/c", true},
		{"subx/b/c", false},
	}
	for _, tc := range tests {
		got := l.Match(tc.path, tc.path[lastSlash(tc.path)+1:], false) != nil
		if got != tc.want {
			t.Errorf("Match(%q) = %v, want %v", tc.path, got, tc.want)
		}
	}
}

func TestStackPrecedence(t *testing.T) {
	global := ParseList("", "global", []byte("*.o\n"))
	info := ParseList("", "info", []byte("!keep.o\n"))
	root := ParseList("", ".gitignore", []byte("*.tmp\n"))
	sub := ParseList("sub/", "sub/.gitignore", []byte("!x.tmp\nkeep.o\n"))
	rootStack := NewStack(global, info).Push(root)
	subStack := rootStack.Push(sub)
	tests := []struct {
		path          string
		excl, matched bool
	}{
		{"a.o", true, true},
		{"keep.o", false, true},
		{"sub/keep.o", true, true},
		{"sub/x.tmp", false, true},
		{"sub/y.tmp", true, true},
		{"x.tmp", true, true},
		{"a.go", false, false},
	}
	for _, tc := range tests {
		s := rootStack
		if len(tc.path) > 4 && tc.path[:4] == "sub/" {
			s = subStack
		}
		excl, matched := s.Match(tc.path, tc.path[lastSlash(tc.path)+1:], false)
		if excl != tc.excl || matched != tc.matched {
			t.Errorf("Match(%q) = %v, %v; want %v, %v", tc.path, excl, matched, tc.excl, tc.matched)
		}
	}
}

func TestParseConfigValue(t *testing.T) {
	tests := map[string]string{
		" ~/ignore ":              `~/ignore`,
		`"/a b/ignore" # comment`: `/a b/ignore`,
		`/x;comment`:              `/x`,
		`"quoted # not comment"`:  `quoted # not comment`,
		`a\\b`:                    `a\b`,
		`a\"b`:                    `a"b`,
		`  spaced value  `:        `spaced value`,
	}
	for in, want := range tests {
		if got := parseConfigValue(in); got != want {
			t.Errorf("parseConfigValue(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestExcludesFile(t *testing.T) {
	write := func(p, data string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("xdg default", func(t *testing.T) {
		home := t.TempDir()
		env := Env{Home: home, XDGConfigHome: filepath.Join(home, "xdg"), NoSystem: true}
		got, errs := env.ExcludesFile("", "/repo")
		if want := filepath.Join(home, "xdg", "git", "ignore"); got != want || len(errs) != 0 {
			t.Errorf("got %q %v, want %q", got, errs, want)
		}
	})
	t.Run("home default", func(t *testing.T) {
		home := t.TempDir()
		env := Env{Home: home, NoSystem: true}
		got, _ := env.ExcludesFile("", "/repo")
		if want := filepath.Join(home, ".config", "git", "ignore"); got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	})
	t.Run("gitconfig with tilde, local config wins", func(t *testing.T) {
		home := t.TempDir()
		write(filepath.Join(home, ".gitconfig"), "[user]\n\tname = x\n[core]\n\texcludesfile = ~/.gexcl\n")
		env := Env{Home: home, NoSystem: true}
		got, _ := env.ExcludesFile("", "/repo")
		if want := filepath.Join(home, ".gexcl"); got != want {
			t.Errorf("global: got %q, want %q", got, want)
		}
		gitDir := filepath.Join(home, "repo", ".git")
		write(filepath.Join(gitDir, "config"), "[core \"x\"]\n\texcludesFile = /nope\n[core]\n\tExcludesFile = local-excl\n")
		got, _ = env.ExcludesFile(gitDir, filepath.Join(home, "repo"))
		if want := filepath.Join(home, "repo", "local-excl"); got != want {
			t.Errorf("local: got %q, want %q", got, want)
		}
	})
	t.Run("GIT_CONFIG_GLOBAL replaces global files", func(t *testing.T) {
		home := t.TempDir()
		write(filepath.Join(home, ".gitconfig"), "[core]\n\texcludesFile = /from-home\n")
		write(filepath.Join(home, "alt"), "[core]\n\texcludesFile = /from-alt\n")
		env := Env{Home: home, ConfigGlobal: filepath.Join(home, "alt"), NoSystem: true}
		if got, _ := env.ExcludesFile("", "/repo"); got != "/from-alt" {
			t.Errorf("got %q", got)
		}
	})
	t.Run("system config honoured unless disabled", func(t *testing.T) {
		home := t.TempDir()
		sys := filepath.Join(home, "sysconfig")
		write(sys, "[core]\nexcludesFile=/from-system\n")
		env := Env{Home: home, ConfigSystem: sys}
		if got, _ := env.ExcludesFile("", "/repo"); got != "/from-system" {
			t.Errorf("got %q", got)
		}
		env.NoSystem = true
		if got, _ := env.ExcludesFile("", "/repo"); got == "/from-system" {
			t.Errorf("NoSystem ignored")
		}
	})
}

func TestGitDirs(t *testing.T) {
	d := t.TempDir()
	if _, _, ok := GitDirs(d); ok {
		t.Fatal("found a repository in an empty directory")
	}
	if err := os.MkdirAll(filepath.Join(d, "main", ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	wtGit := filepath.Join(d, "main", ".git", "worktrees", "wt")
	if err := os.MkdirAll(wtGit, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(wtGit, "commondir"), []byte("../..\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(d, "wt"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(d, "wt", ".git"), []byte("gitdir: "+wtGit+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitDir, common, ok := GitDirs(filepath.Join(d, "wt"))
	if !ok || gitDir != wtGit || common != filepath.Join(d, "main", ".git") {
		t.Errorf("worktree: %q %q %v", gitDir, common, ok)
	}
}
