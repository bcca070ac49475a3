package ignore

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestCacheRereadsOnlyChangedFiles: an unchanged ignore file is parsed
// once (the same list comes back), a changed one — other size, or same
// size and a new modification time, or replaced by another file — is
// read again.
func TestCacheRereadsOnlyChangedFiles(t *testing.T) {
	d := t.TempDir()
	path := filepath.Join(d, ".gitignore")
	write := func(data string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	read := func(c *Cache) *List {
		t.Helper()
		l, err := c.ReadList("", path)
		if err != nil || l == nil {
			t.Fatalf("ReadList: %v, %v", l, err)
		}
		return l
	}
	write("*.log\n")
	c := NewCache()
	first := read(c)
	if again := read(c); again != first {
		t.Error("an unchanged file was parsed again")
	}
	if uncached := read(nil); uncached == first {
		t.Error("a nil cache returned a cached list")
	}
	write("*.log\n*.tmp\n")
	grown := read(c)
	if grown == first || len(grown.Patterns) != 2 {
		t.Errorf("a grown file was not read again: %d patterns", len(grown.Patterns))
	}
	write("*.bak\n*.tmp\n") // same size
	later := time.Now().Add(2 * time.Second)
	if err := os.Chtimes(path, later, later); err != nil {
		t.Fatal(err)
	}
	if same := read(c); same == grown || same.Patterns[0].text != "*.bak" {
		t.Errorf("a rewritten file of the same size was not read again: %v", same.Patterns)
	}
	other := filepath.Join(d, "other")
	if err := os.WriteFile(other, []byte("*.bak\n*.tmp\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(other, later, later); err != nil {
		t.Fatal(err)
	}
	before := read(c)
	if err := os.Rename(other, path); err != nil {
		t.Fatal(err)
	}
	if replaced := read(c); replaced == before {
		t.Error("a file replaced by another (same size and time) was not read again")
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if l, err := c.ReadList("", path); l != nil || err != nil {
		t.Errorf("a removed file: %v, %v", l, err)
	}
}
