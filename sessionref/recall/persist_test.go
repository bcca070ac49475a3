package recall

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/dsh-refls/dsh-refls/internal/dshgen"
)

func persistStore(t *testing.T) *store {
	t.Helper()
	return newStore(t,
		dshgen.NewSession("s-bucket").CreatedAt(3000).Title("Rate limits", "auto").
			UserText("How should the Token Bucket refill?").AssistantText("Refill it lazily on each request."),
		dshgen.NewSession("s-login").CreatedAt(2000).Title("Tests", "auto").
			UserText("The login test is flaky: it fails one run in twenty.").AssistantText("Seed the clock."),
		dshgen.NewSession("s-cjk").CreatedAt(1000).Title("i18n", "auto").
			UserText("東京で会いましょう 😀 Straße"))
}

// TestStoredIndexRoundTrip: a saved index loads into a fresh one that
// answers as the original did before any log is read, is 0600, and the
// sync after the load reads no log that did not change.
func TestStoredIndexRoundTrip(t *testing.T) {
	st := persistStore(t)
	path := filepath.Join(t.TempDir(), "cache", "recall-x.idx")
	if err := st.rc.Save(path, st.root); err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS != "windows" && info.Mode().Perm() != 0o600 {
		t.Errorf("stored index mode %v, want 0600", info.Mode().Perm())
	}
	warm := New(Options{})
	if err := warm.Load(path, st.root); err != nil {
		t.Fatal(err)
	}
	if !warm.Synced() || warm.Stats().Sessions != 3 {
		t.Fatalf("loaded index stats %+v", warm.Stats())
	}
	// Loaded, it answers from the stored copy and says so until a sync
	// has compared every session with its log.
	if !warm.Stats().Revalidating {
		t.Errorf("a loaded index does not say it is revalidating: %+v", warm.Stats())
	}
	for _, q := range []string{"token bucket", "FLAKY", "東京", "😀", "strasse", `"one run in twenty"`} {
		want, _ := st.rc.Search(context.Background(), Query{Text: q})
		got, err := warm.Search(context.Background(), Query{Text: q})
		if err != nil || len(got) == 0 || len(got) != len(want) || got[0].SessionID != want[0].SessionID ||
			got[0].Matches[0].Excerpt != want[0].Matches[0].Excerpt {
			t.Errorf("loaded index: search %q = %+v (%v), original %+v", q, got, err, want)
		}
	}
	if err := warm.Sync(context.Background(), st.title.Snapshot()); err != nil {
		t.Fatal(err)
	}
	if warm.Stats().Revalidating {
		t.Errorf("the sync after the load left the index revalidating")
	}
	if p := warm.Stats().Projected; p != 0 {
		t.Errorf("sync after the load projected %d unchanged sessions", p)
	}
	// A log that changed after the save is projected again.
	sess := dshgen.NewSession("s-login").CreatedAt(2000).Title("Tests", "auto").
		UserText("The login test is flaky: it fails one run in twenty.").AssistantText("Seed the clock.").UserText("now about the watchdog")
	if _, err := sess.Save(st.root, dshgen.Raw); err != nil {
		t.Fatal(err)
	}
	if err := st.title.Build(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if err := warm.Sync(context.Background(), st.title.Snapshot()); err != nil {
		t.Fatal(err)
	}
	if p := warm.Stats().Projected; p != 1 {
		t.Errorf("sync after a change projected %d sessions, want 1", p)
	}
	res, _ := warm.Search(context.Background(), Query{Text: "watchdog"})
	wantIDs(t, "watchdog", res, "s-login")
}

// TestCorruptOrForeignStoredIndexIsRebuilt: a stored file that is
// garbage, truncated, of another root or another format is refused with
// ErrStoreUnusable, leaves the index empty, and the sync and save that
// follow replace it with a usable one.
func TestCorruptOrForeignStoredIndexIsRebuilt(t *testing.T) {
	st := persistStore(t)
	dir := t.TempDir()
	good := filepath.Join(dir, "good.idx")
	if err := st.rc.Save(good, st.root); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	flipped := append([]byte(nil), raw...)
	flipped[len(flipped)-3] ^= 0xff
	cases := map[string][]byte{
		"garbage":   []byte("not an index at all\n"),
		"magic":     []byte(storeMagic),
		"truncated": raw[:len(raw)/2],
		"flipped":   flipped,
	}
	for name, body := range cases {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(dir, name+".idx")
			if err := os.WriteFile(path, body, 0o600); err != nil {
				t.Fatal(err)
			}
			ix := New(Options{})
			if err := ix.Load(path, st.root); !errors.Is(err, ErrStoreUnusable) {
				t.Fatalf("Load(%s) = %v, want ErrStoreUnusable", name, err)
			}
			if ix.Synced() || ix.Stats().Sessions != 0 {
				t.Errorf("a refused file left %+v", ix.Stats())
			}
			if err := ix.Sync(context.Background(), st.title.Snapshot()); err != nil {
				t.Fatal(err)
			}
			if p := ix.Stats().Projected; p != 3 {
				t.Errorf("rebuild projected %d sessions, want 3", p)
			}
			if err := ix.Save(path, st.root); err != nil {
				t.Fatal(err)
			}
			again := New(Options{})
			if err := again.Load(path, st.root); err != nil {
				t.Fatalf("the rebuilt file does not load: %v", err)
			}
			res, _ := again.Search(context.Background(), Query{Text: "bucket"})
			wantIDs(t, "bucket", res, "s-bucket")
		})
	}
	if err := New(Options{}).Load(good, st.root+"-other"); !errors.Is(err, ErrStoreUnusable) || !strings.Contains(err.Error(), "indexes") {
		t.Errorf("foreign root: %v", err)
	}
	if err := New(Options{}).Load(filepath.Join(dir, "absent.idx"), st.root); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("absent file: %v", err)
	}
}

// TestStoredIndexOfAnotherFormatIsRefused writes a file whose header
// names another format.
func TestStoredIndexOfAnotherFormatIsRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "old.idx")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := writeStoreFormat(f, "/r", storeFormat+1); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := New(Options{}).Load(path, "/r"); !errors.Is(err, ErrStoreUnusable) || !strings.Contains(err.Error(), "format") {
		t.Errorf("other format: %v", err)
	}
}

func TestStoredIndexIsNotReadThroughASymlink(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symbolic links need privileges on Windows")
	}
	st := persistStore(t)
	dir := t.TempDir()
	real := filepath.Join(dir, "real.idx")
	if err := st.rc.Save(real, st.root); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.idx")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	if err := New(Options{}).Load(link, st.root); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("Load through a symlink = %v", err)
	}
}

// storedText returns the text file of the index stored at path.
func storedText(t *testing.T, path string) string {
	t.Helper()
	names, err := filepath.Glob(strings.TrimSuffix(path, ".idx") + ".*.dat")
	if err != nil || len(names) != 1 {
		t.Fatalf("text files of %s: %v %v", path, names, err)
	}
	return names[0]
}

// TestStoredIndexWithoutItsTextIsRebuilt: an .idx file whose text file is
// missing, truncated or replaced by another is refused with
// ErrStoreUnusable.
func TestStoredIndexWithoutItsTextIsRebuilt(t *testing.T) {
	st := persistStore(t)
	for _, name := range []string{"missing", "truncated", "other"} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "recall-x.idx")
			if err := st.rc.Save(path, st.root); err != nil {
				t.Fatal(err)
			}
			dat := storedText(t, path)
			switch name {
			case "missing":
				if err := os.Remove(dat); err != nil {
					t.Fatal(err)
				}
			case "truncated":
				info, err := os.Stat(dat)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.Truncate(dat, info.Size()-1); err != nil {
					t.Fatal(err)
				}
			case "other":
				raw, err := os.ReadFile(dat)
				if err != nil {
					t.Fatal(err)
				}
				raw[len(dataMagic)] ^= 1 // another file id
				if err := os.WriteFile(dat, raw, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			ix := New(Options{})
			if err := ix.Load(path, st.root); !errors.Is(err, ErrStoreUnusable) {
				t.Fatalf("Load with the text file %s = %v, want ErrStoreUnusable", name, err)
			}
			if ix.Synced() {
				t.Errorf("a refused store was published")
			}
		})
	}
}

// TestDamagedTextBlockIsReadAgainFromTheLog: a text block that fails its
// checksum makes the search skip that session, and the next sync reads
// its log again, after which it is found.
func TestDamagedTextBlockIsReadAgainFromTheLog(t *testing.T) {
	st := persistStore(t)
	path := filepath.Join(t.TempDir(), "recall-x.idx")
	if err := st.rc.Save(path, st.root); err != nil {
		t.Fatal(err)
	}
	dat := storedText(t, path)
	raw, err := os.ReadFile(dat)
	if err != nil {
		t.Fatal(err)
	}
	for i := dataHeaderLen + recordHeaderLen; i < len(raw); i++ {
		raw[i] ^= 0x55 // every block's payload
	}
	if err := os.WriteFile(dat, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	ix := New(Options{Path: path})
	t.Cleanup(func() { ix.Close() })
	if err := ix.Load(path, st.root); err != nil {
		t.Fatal(err)
	}
	res, err := ix.Search(context.Background(), Query{Text: "bucket"})
	if err != nil || len(res) != 0 {
		t.Fatalf("search over damaged text = %+v, %v; want no session", res, err)
	}
	if err := ix.Sync(context.Background(), st.title.Snapshot()); err != nil {
		t.Fatal(err)
	}
	if p := ix.Stats().Projected; p != 1 {
		t.Errorf("sync after the damage read %d logs, want the 1 damaged session", p)
	}
	res, _ = ix.Search(context.Background(), Query{Text: "bucket"})
	wantIDs(t, "bucket", res, "s-bucket")
}
