package frecency

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// t0 is the clock of these tests.
var t0 = time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC)

const root = "/home/dev/ledger"

func openAt(t *testing.T, path string, now time.Time) *Store {
	t.Helper()
	s, err := Open(path, root, now)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return s
}

func TestScoreDecaysByHalfLife(t *testing.T) {
	s := openAt(t, "", t0)
	s.Pick(Session, "a", t0)
	s.Pick(Session, "a", t0.Add(HalfLife))
	// The first pick is worth 0.5 a half-life later, plus 1 for the new one.
	if got := s.Table().Score(Session, "a", t0.Add(HalfLife)); math.Abs(got-1.5) > 1e-9 {
		t.Errorf("score after two picks a half-life apart = %v, want 1.5", got)
	}
	if got := s.Table().Score(Session, "a", t0.Add(3*HalfLife)); math.Abs(got-1.5/4) > 1e-9 {
		t.Errorf("score two half-lives later = %v, want %v", got, 1.5/4)
	}
	if got := s.Table().Count(Session, "a"); got != 2 {
		t.Errorf("count = %d, want 2", got)
	}
	// The same key as a file is another entry.
	if got := s.Table().Score(File, "a", t0); got != 0 {
		t.Errorf("file a scored %v, want 0", got)
	}
	// A pick dated before the last one (a clock set back) adds 1 without
	// growing the older ones.
	s.Pick(Session, "a", t0)
	if got := s.Table().Score(Session, "a", t0.Add(HalfLife)); math.Abs(got-2.5) > 1e-9 {
		t.Errorf("score after a pick from the past = %v, want 2.5", got)
	}
}

func TestTenPicksTodayOutrankOneYesterdayAndTenLastMonth(t *testing.T) {
	s := openAt(t, "", t0)
	for i := range 10 {
		s.Pick(Session, "today", t0.Add(-time.Duration(i)*time.Minute))
		s.Pick(Session, "last month", t0.Add(-30*24*time.Hour))
	}
	s.Pick(Session, "yesterday", t0.Add(-24*time.Hour))
	tb := s.Table()
	today, yesterday, month := tb.Score(Session, "today", t0), tb.Score(Session, "yesterday", t0), tb.Score(Session, "last month", t0)
	if !(today > yesterday && yesterday > month) {
		t.Errorf("scores today %v, yesterday %v, last month %v: want that order", today, yesterday, month)
	}
}

func TestInvalidKeysAreNotRecorded(t *testing.T) {
	s := openAt(t, "", t0)
	for _, key := range []string{"", "a\nb", "tab\tpath", "\xff", strings.Repeat("x", MaxKeyBytes+1)} {
		if s.Pick(File, key, t0) {
			t.Errorf("Pick(%q) recorded", key)
		}
	}
	if s.Pick(Kind(9), "a", t0) {
		t.Error("a pick of an unknown kind was recorded")
	}
	if !s.Pick(File, strings.Repeat("x", MaxKeyBytes), t0) || !s.Pick(File, "design notes/rate plan.md", t0) || !s.Pick(Session, "登录", t0) {
		t.Error("a valid key was not recorded")
	}
	if got := s.Table().Len(); got != 3 {
		t.Errorf("%d entries, want 3", got)
	}
}

func TestSaveAndReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cache", "frecency", "x.picks")
	s := openAt(t, path, t0)
	if s.Dirty() {
		t.Fatal("a new store is dirty")
	}
	if err := s.Save(t0); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a save of nothing wrote the file (%v)", err)
	}
	s.Pick(Session, "s-1", t0)
	s.Pick(Session, "s-1", t0)
	s.Pick(File, "src/a.go", t0)
	if !s.Dirty() {
		t.Fatal("picks did not make the store dirty")
	}
	if err := s.Save(t0); err != nil {
		t.Fatal(err)
	}
	if s.Dirty() {
		t.Fatal("dirty after a save")
	}
	if runtime.GOOS != "windows" {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		di, err := os.Stat(filepath.Dir(path))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 || di.Mode().Perm() != 0o700 {
			t.Errorf("file %v, directory %v; want 0600 and 0700", fi.Mode().Perm(), di.Mode().Perm())
		}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(data), "dsh-refls frecency 1\n") {
		t.Errorf("file starts %q", data[:min(40, len(data))])
	}
	if strings.Contains(string(data), root) {
		t.Errorf("the file names the workspace root: %s", data)
	}
	later := t0.Add(time.Hour)
	r := openAt(t, path, later)
	if got, want := r.Table().Score(Session, "s-1", later), s.Table().Score(Session, "s-1", later); got != want || got == 0 {
		t.Errorf("reopened score %v, want %v", got, want)
	}
	if r.Table().Count(Session, "s-1") != 2 || r.Table().Count(File, "src/a.go") != 1 || r.Table().Len() != 2 {
		t.Errorf("reopened table %+v", r.Table())
	}
	// A temporary file of the save is not left behind.
	left, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".picks-*"))
	if len(left) != 0 {
		t.Errorf("left behind: %v", left)
	}
}

// Two servers of one workspace: each save adds its own picks to what the
// file holds, so neither loses the other's.
func TestSavesOfTwoServersMerge(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.picks")
	a, b := openAt(t, path, t0), openAt(t, path, t0)
	a.Pick(Session, "from-a", t0)
	b.Pick(Session, "from-b", t0)
	b.Pick(Session, "both", t0)
	a.Pick(Session, "both", t0)
	if err := a.Save(t0); err != nil {
		t.Fatal(err)
	}
	if err := b.Save(t0); err != nil {
		t.Fatal(err)
	}
	c := openAt(t, path, t0)
	for key, n := range map[string]int{"from-a": 1, "from-b": 1, "both": 2} {
		if got := c.Table().Count(Session, key); got != n {
			t.Errorf("%s counted %d, want %d", key, got, n)
		}
	}
	// b's table is what it wrote: a's picks are visible to it now.
	if b.Table().Count(Session, "from-a") != 1 {
		t.Error("the saving server does not see the other's picks")
	}
}

func TestBoundedEntries(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.picks")
	s := openAt(t, path, t0)
	// The oldest picks go first.
	for i := range MaxEntries + 20 {
		s.Pick(File, fmt.Sprintf("f/%04d.go", i), t0.Add(time.Duration(i)*time.Second))
	}
	s.Pick(File, "f/0000.go", t0.Add(time.Hour)) // no longer held: picked anew
	tb := s.Table()
	if tb.Len() != MaxEntries {
		t.Fatalf("%d entries, want %d", tb.Len(), MaxEntries)
	}
	if tb.Count(File, "f/0001.go") != 0 || tb.Count(File, "f/0021.go") != 1 || tb.Count(File, "f/0000.go") != 1 {
		t.Errorf("evicted the wrong entries: 0001 %d, 0021 %d, 0000 %d", tb.Count(File, "f/0001.go"), tb.Count(File, "f/0021.go"), tb.Count(File, "f/0000.go"))
	}
	// Longest keys, most entries: the file stays within its bound.
	long := strings.Repeat("é", MaxKeyBytes/2)
	for i := range MaxEntries {
		s.Pick(File, fmt.Sprintf("%04d", i)+long[4:], t0.Add(2*time.Hour))
	}
	if err := s.Save(t0.Add(2 * time.Hour)); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() > MaxFileBytes {
		t.Errorf("file of %d bytes, bound %d", fi.Size(), MaxFileBytes)
	}
	if r := openAt(t, path, t0.Add(2*time.Hour)); r.Table().Len() != MaxEntries {
		t.Errorf("reopened %d entries", r.Table().Len())
	}
}

func TestSaveDropsFadedEntries(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.picks")
	s := openAt(t, path, t0)
	s.Pick(Session, "old", t0)
	s.Pick(Session, "new", t0.Add(7*HalfLife))
	if err := s.Save(t0.Add(7 * HalfLife)); err != nil {
		t.Fatal(err)
	}
	if s.Table().Count(Session, "old") != 0 || s.Table().Count(Session, "new") != 1 {
		t.Errorf("after the save: old %d, new %d; want 0 and 1", s.Table().Count(Session, "old"), s.Table().Count(Session, "new"))
	}
}

func TestForget(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.picks")
	s := openAt(t, path, t0)
	s.Pick(Session, "a", t0)
	if err := s.Save(t0); err != nil {
		t.Fatal(err)
	}
	s.Pick(Session, "b", t0)
	if err := s.Forget(); err != nil {
		t.Fatal(err)
	}
	if !s.Table().Empty() || s.Dirty() {
		t.Errorf("after Forget: %d entries, dirty %v", s.Table().Len(), s.Dirty())
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the file is still there (%v)", err)
	}
	if err := s.Forget(); err != nil {
		t.Errorf("forgetting twice: %v", err)
	}
	if r := openAt(t, path, t0); !r.Table().Empty() {
		t.Error("a reopened store remembers")
	}
}

func TestFailuresAreReported(t *testing.T) {
	// A file where the state's directory should be: nothing can be
	// written or removed below it, whoever runs the test.
	blocker := filepath.Join(t.TempDir(), "blocker")
	if err := os.WriteFile(blocker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := Open(filepath.Join(blocker, "x.picks"), root, t0)
	var u *Unusable
	if !errors.As(err, &u) {
		t.Fatalf("Open below a file = %v, want Unusable", err)
	}
	s.Pick(Session, "a", t0)
	if err := s.Save(t0); err == nil {
		t.Error("Save below a file reported no error")
	}
	if !s.Dirty() || s.Table().Count(Session, "a") != 1 {
		t.Error("a failed save lost its picks")
	}
	if err := s.Forget(); err == nil {
		t.Error("Forget below a file reported no error")
	}
}

// Every state file that cannot be used is ignored with its reason, the
// store starts empty, and the next save replaces the file.
func TestUnusableFilesAreIgnoredAndReplaced(t *testing.T) {
	good := func() []byte {
		path := filepath.Join(t.TempDir(), "g.picks")
		s := openAt(t, path, t0)
		s.Pick(Session, "s-1", t0)
		s.Pick(File, "a.go", t0)
		if err := s.Save(t0); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return data
	}()
	body := string(good[strings.IndexByte(string(good), '\n')+1:])
	entry := func(kind, key string, score float64, at int64, count int) string {
		return fmt.Sprintf(`{"kind":%q,"key":%q,"score":%v,"at":%d,"count":%d}`, kind, key, score, at, count)
	}
	ws := body[:strings.Index(body, `"picks"`)]
	cases := []struct {
		name, data, reason string
	}{
		{"empty", "", "not a frecency state file"},
		{"other format", "dsh-refls title index\n{}", "not a frecency state file"},
		{"newer version", "dsh-refls frecency 2\n" + body, `format version "2"`},
		{"truncated", string(good[:len(good)-10]), "corrupt"},
		{"truncated header", "dsh-refls frec", "not a frecency state file"},
		{"not JSON", "dsh-refls frecency 1\n\x00\x01\x02", "corrupt"},
		{"data after", string(good) + "{}", "corrupt: data after"},
		{"other workspace", "dsh-refls frecency 1\n" + strings.Replace(body, `"workspace":"`, `"workspace":"0`, 1), "another workspace"},
		{"unknown kind", "dsh-refls frecency 1\n" + ws + `"picks":[` + entry("tab", "a", 1, t0.UnixMilli(), 1) + "]}", `kind "tab"`},
		{"control in key", "dsh-refls frecency 1\n" + ws + `"picks":[` + entry("file", "a\nb", 1, t0.UnixMilli(), 1) + "]}", "invalid key"},
		{"negative score", "dsh-refls frecency 1\n" + ws + `"picks":[` + entry("file", "a", -1, t0.UnixMilli(), 1) + "]}", "score -1"},
		{"huge score", "dsh-refls frecency 1\n" + ws + `"picks":[` + entry("file", "a", 1e300, t0.UnixMilli(), 1) + "]}", "score 1e+300"},
		{"far future", "dsh-refls frecency 1\n" + ws + `"picks":[` + entry("file", "a", 1, t0.Add(48*time.Hour).UnixMilli(), 1) + "]}", "time"},
		{"no count", "dsh-refls frecency 1\n" + ws + `"picks":[` + entry("file", "a", 1, t0.UnixMilli(), 0) + "]}", "count 0"},
		{"repeated key", "dsh-refls frecency 1\n" + ws + `"picks":[` + entry("file", "a", 1, t0.UnixMilli(), 1) + "," + entry("file", "a", 1, t0.UnixMilli(), 1) + "]}", "repeats"},
		{"too many", "dsh-refls frecency 1\n" + ws + `"picks":[` + strings.TrimSuffix(strings.Repeat(entry("file", "a", 1, t0.UnixMilli(), 1)+",", MaxEntries+1), ",") + "]}", "entries, more than"},
		{"too large", "dsh-refls frecency 1\n" + ws + `"picks":[],"pad":"` + strings.Repeat("x", MaxFileBytes) + `"}`, "larger than"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "x.picks")
			if err := os.WriteFile(path, []byte(c.data), 0o600); err != nil {
				t.Fatal(err)
			}
			s, err := Open(path, root, t0)
			var u *Unusable
			if !errors.As(err, &u) || !strings.Contains(u.Reason, c.reason) || !strings.Contains(err.Error(), "replaced on the next save") {
				t.Fatalf("Open = %v, want an Unusable error saying %q", err, c.reason)
			}
			if s == nil || !s.Table().Empty() {
				t.Fatal("the store is not an empty, usable one")
			}
			s.Pick(Session, "s-2", t0)
			if err := s.Save(t0); err != nil {
				t.Fatal(err)
			}
			r, err := Open(path, root, t0)
			if err != nil || r.Table().Count(Session, "s-2") != 1 || r.Table().Len() != 1 {
				t.Errorf("after the save: %v, %d entries", err, r.Table().Len())
			}
		})
	}
	// The good file itself is read.
	path := filepath.Join(t.TempDir(), "x.picks")
	if err := os.WriteFile(path, good, 0o600); err != nil {
		t.Fatal(err)
	}
	if s := openAt(t, path, t0); s.Table().Len() != 2 {
		t.Errorf("the good file gave %d entries", s.Table().Len())
	}
}

func TestUnreadableFileIsIgnored(t *testing.T) {
	// A directory where the file should be cannot be read by anyone.
	dir := filepath.Join(t.TempDir(), "d.picks")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	var u *Unusable
	if _, err := Open(dir, root, t0); !errors.As(err, &u) || !strings.Contains(u.Reason, "unreadable") {
		t.Errorf("Open of a directory = %v, want unreadable", err)
	}
	if runtime.GOOS == "windows" || os.Geteuid() == 0 {
		t.Skip("the rest needs a file the user cannot read (POSIX permissions, not root)")
	}
	path := filepath.Join(t.TempDir(), "x.picks")
	if err := os.WriteFile(path, []byte("dsh-refls frecency 1\n{}"), 0o000); err != nil {
		t.Fatal(err)
	}
	s, err := Open(path, root, t0)
	if !errors.As(err, &u) || !strings.Contains(u.Reason, "unreadable") {
		t.Fatalf("Open = %v, want unreadable", err)
	}
	s.Pick(File, "a.go", t0)
	if err := s.Save(t0); err != nil {
		t.Fatalf("the save does not replace the unreadable file: %v", err)
	}
	if r := openAt(t, path, t0); r.Table().Count(File, "a.go") != 1 {
		t.Error("the replaced file does not hold the pick")
	}
}

func TestDefaultPathIsPerWorkspace(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	a, err := DefaultPath("/home/dev/a")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := DefaultPath("/home/dev/b")
	if a == b || filepath.Dir(a) != filepath.Dir(b) || !strings.HasSuffix(filepath.Dir(a), filepath.Join("dsh-refls", "frecency")) {
		t.Errorf("paths %s and %s", a, b)
	}
	if strings.Contains(a, "home") {
		t.Errorf("the path names the workspace: %s", a)
	}
}
