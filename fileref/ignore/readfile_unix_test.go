//go:build unix

package ignore

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// readDeadline is how long reading any one hostile file may take: a FIFO
// once blocked the reader until a writer appeared, /dev/zero never ended.
const readDeadline = 5 * time.Second

// withDeadline runs f and fails the test if it does not return in time.
func withDeadline(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(readDeadline):
		t.Fatalf("%s did not return within %v", what, readDeadline)
	}
}

// TestReadListRefusesSpecialFiles: ignore files that are FIFOs, devices,
// symlinks (to a device or to a regular file) or larger than MaxFileBytes
// are refused with a reason, at once; a regular file is read.
func TestReadListRefusesSpecialFiles(t *testing.T) {
	d := t.TempDir()
	fifo := filepath.Join(d, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("cannot make a FIFO: %v", err)
	}
	regular := filepath.Join(d, "regular")
	if err := os.WriteFile(regular, []byte("*.log\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	zeroLink := filepath.Join(d, "zero-link")
	if err := os.Symlink("/dev/zero", zeroLink); err != nil {
		t.Fatal(err)
	}
	regularLink := filepath.Join(d, "regular-link")
	if err := os.Symlink(regular, regularLink); err != nil {
		t.Fatal(err)
	}
	huge := filepath.Join(d, "huge")
	if err := os.WriteFile(huge, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(huge, 2<<30); err != nil { // sparse: 2 GiB of NUL
		t.Fatal(err)
	}
	tests := []struct {
		path string
		want string // in the error
	}{
		{fifo, "is a FIFO"},
		{"/dev/zero", "is a character device"},
		{zeroLink, "is a symlink, which is not followed"},
		{regularLink, "is a symlink, which is not followed"},
		{d, "is a directory"},
		{huge, "more than the 1048576 read"},
	}
	for _, tt := range tests {
		withDeadline(t, "ReadList("+tt.path+")", func() {
			l, err := ReadList("", tt.path)
			if err == nil || !strings.Contains(err.Error(), tt.want) || l != nil {
				t.Errorf("ReadList(%s) = %v, %v; want an error saying %q", tt.path, l, err, tt.want)
			}
		})
	}
	l, err := ReadList("", regular)
	if err != nil || l == nil || len(l.Patterns) != 1 {
		t.Errorf("ReadList(regular) = %v, %v", l, err)
	}
	if l, err := ReadList("", filepath.Join(d, "absent")); l != nil || err != nil {
		t.Errorf("ReadList(absent) = %v, %v; want nil, nil", l, err)
	}
}

// TestRepoListsWithHostileExcludes: core.excludesFile set to /dev/zero or
// a FIFO, info/exclude a FIFO or a link to /dev/zero, the global config a
// FIFO: each is reported and skipped at once, and a regular excludes file
// behind a symlink (a dotfiles setup) is still read.
func TestRepoListsWithHostileExcludes(t *testing.T) {
	mkRepo := func(t *testing.T) (repo, gitDir string) {
		repo = t.TempDir()
		gitDir = filepath.Join(repo, ".git")
		if err := os.MkdirAll(filepath.Join(gitDir, "info"), 0o755); err != nil {
			t.Fatal(err)
		}
		return repo, gitDir
	}
	env := func(t *testing.T) Env {
		h := t.TempDir()
		return Env{Home: h, XDGConfigHome: filepath.Join(h, "xdg"), NoSystem: true}
	}
	t.Run("excludesFile /dev/zero", func(t *testing.T) {
		repo, gitDir := mkRepo(t)
		if err := os.WriteFile(filepath.Join(gitDir, "config"), []byte("[core]\n\texcludesFile = /dev/zero\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		withDeadline(t, "RepoLists", func() {
			lists, errs := RepoLists(repo, env(t))
			if len(lists) != 0 || len(errs) != 1 || !strings.Contains(errs[0].Error(), "character device") {
				t.Errorf("lists %v, errs %v; want one error about the device", lists, errs)
			}
		})
	})
	t.Run("excludesFile and info/exclude FIFOs", func(t *testing.T) {
		repo, gitDir := mkRepo(t)
		fifo := filepath.Join(t.TempDir(), "fifo")
		if err := syscall.Mkfifo(fifo, 0o644); err != nil {
			t.Skipf("cannot make a FIFO: %v", err)
		}
		if err := syscall.Mkfifo(filepath.Join(gitDir, "info", "exclude"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(gitDir, "config"), []byte("[core]\n\texcludesFile = "+fifo+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		withDeadline(t, "RepoLists", func() {
			lists, errs := RepoLists(repo, env(t))
			if len(lists) != 0 || len(errs) != 2 {
				t.Errorf("lists %v, errs %v; want two errors", lists, errs)
			}
			for _, err := range errs {
				if !strings.Contains(err.Error(), "FIFO") {
					t.Errorf("error %v does not say FIFO", err)
				}
			}
		})
	})
	t.Run("info/exclude linked to /dev/zero", func(t *testing.T) {
		repo, gitDir := mkRepo(t)
		if err := os.Symlink("/dev/zero", filepath.Join(gitDir, "info", "exclude")); err != nil {
			t.Fatal(err)
		}
		withDeadline(t, "RepoLists", func() {
			lists, errs := RepoLists(repo, env(t))
			if len(lists) != 0 || len(errs) != 1 || !strings.Contains(errs[0].Error(), "not followed") {
				t.Errorf("lists %v, errs %v; want one error about the link", lists, errs)
			}
		})
	})
	t.Run("global config a FIFO", func(t *testing.T) {
		repo, _ := mkRepo(t)
		e := env(t)
		if err := syscall.Mkfifo(filepath.Join(e.Home, ".gitconfig"), 0o644); err != nil {
			t.Skipf("cannot make a FIFO: %v", err)
		}
		withDeadline(t, "RepoLists", func() {
			_, errs := RepoLists(repo, e)
			if len(errs) != 1 || !strings.Contains(errs[0].Error(), "FIFO") {
				t.Errorf("errs %v; want one error about the FIFO", errs)
			}
		})
	})
	t.Run("excludesFile behind a symlink is read", func(t *testing.T) {
		repo, gitDir := mkRepo(t)
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "real"), []byte("*.tmp\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(filepath.Join(dir, "real"), filepath.Join(dir, "link")); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(gitDir, "config"), []byte("[core]\n\texcludesFile = "+filepath.Join(dir, "link")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		lists, errs := RepoLists(repo, env(t))
		if len(lists) != 1 || len(errs) != 0 {
			t.Errorf("lists %v, errs %v; want the linked list", lists, errs)
		}
	})
}
