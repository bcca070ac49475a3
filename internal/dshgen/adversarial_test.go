package dshgen

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// rawLines splits a raw log into its lines without the newlines.
func rawLines(t *testing.T, path string) [][]byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))
}

// decodedLines decodes a log (raw or zstd) and splits it into lines.
func decodedLines(t *testing.T, path string) [][]byte {
	t.Helper()
	return bytes.Split(bytes.TrimSuffix(readLogText(t, path), []byte("\n")), []byte("\n"))
}

// unparsableAt returns the indexes of lines that are not JSON.
func unparsableAt(lines [][]byte) []int {
	var out []int
	for i, l := range lines {
		if !json.Valid(l) {
			out = append(out, i)
		}
	}
	return out
}

func TestUnparsableLines(t *testing.T) {
	for _, enc := range []Encoding{Raw, Zstd} {
		t.Run(enc.String(), func(t *testing.T) {
			root := t.TempDir()
			before, err := UnparsableBeforeTurnEnd(root, enc)
			if err != nil {
				t.Fatal(err)
			}
			lines := decodedLines(t, before.Paths[0])
			bad := unparsableAt(lines)
			if len(bad) != 1 || !bytes.Contains(bytes.Join(lines[bad[0]+1:], nil), []byte(`"turn/end"`)) {
				t.Errorf("want one unparsable line followed by a turn/end, bad lines %v", bad)
			}
			if before.Expected.Preparable || !before.Expected.HasTitle {
				t.Errorf("corrupt log facts: %+v", before.Expected)
			}

			after, err := UnparsableAfterTurnEnd(root, enc)
			if err != nil {
				t.Fatal(err)
			}
			lines = decodedLines(t, after.Paths[0])
			bad = unparsableAt(lines)
			if len(bad) != 1 || bad[0] != len(lines)-1 {
				t.Errorf("want only the last line unparsable, got %v of %d", bad, len(lines))
			}
			if !bytes.Contains(lines[len(lines)-2], []byte(`"turn/end"`)) {
				t.Error("the line before the unparsable one is not a turn/end")
			}
			// Inside a complete zstd frame the line is corruption (issue 16 item 2).
			if after.Expected.Preparable != (enc == Raw) || len(after.Expected.Conversation) != 2 {
				t.Errorf("facts: %+v", after.Expected)
			}
		})
	}
}

func TestTornTailCase(t *testing.T) {
	for _, enc := range []Encoding{Raw, Zstd} {
		t.Run(enc.String(), func(t *testing.T) {
			c, err := TornTail(t.TempDir(), enc)
			if err != nil {
				t.Fatal(err)
			}
			data, _ := os.ReadFile(c.Paths[0])
			if enc == Raw && data[len(data)-1] == '\n' {
				t.Error("raw log is not torn")
			}
			if enc == Zstd {
				if _, rest, err := SplitFrames(data); err != nil || len(rest) == 0 {
					t.Errorf("zstd log has no partial frame: rest %d, %v", len(rest), err)
				}
			}
			if c.Expected.LastSeq >= c.After.LastSeq || c.Expected.Title == c.After.Title {
				t.Errorf("before %+v after %+v", c.Expected, c.After)
			}
			if err := c.Finish(); err != nil {
				t.Fatal(err)
			}
			checkAgainstExpected(t, c.Paths[0], *c.After)
		})
	}
}

func TestChecksumFailureCase(t *testing.T) {
	c, err := ChecksumFailure(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(c.Paths[0])
	frames, rest, err := SplitFrames(data)
	if err != nil || len(rest) != 0 || len(frames) != 3 {
		t.Fatalf("want 3 complete frames: %d, rest %d, %v", len(frames), len(rest), err)
	}
	for i, f := range frames {
		_, err := decodeFrame(t, f)
		if (err != nil) != (i == 2) {
			t.Errorf("frame %d decode error %v; only frame 3 must fail", i+1, err)
		}
	}
	title, err := decodeFrame(t, frames[1])
	if err != nil || !bytes.Contains(title, []byte(`"session/title"`)) {
		t.Error("the intact frame 2 does not hold the title")
	}
}

func TestHugeLineCase(t *testing.T) {
	const size = 2 << 20
	for _, enc := range []Encoding{Raw, Zstd} {
		t.Run(enc.String(), func(t *testing.T) {
			c, err := HugeLine(t.TempDir(), enc, size)
			if err != nil {
				t.Fatal(err)
			}
			lines := decodedLines(t, c.Paths[0])
			longest := 0
			for _, l := range lines {
				longest = max(longest, len(l))
				if !json.Valid(l) {
					t.Fatalf("line of %d bytes is not JSON", len(l))
				}
			}
			if longest < size || longest > size+1024 {
				t.Errorf("longest line %d bytes, want about %d", longest, size)
			}
			p := parseLog(t, c.Paths[0], readLogText(t, c.Paths[0]))
			got := foldAndProject(t, p)
			if got.title == nil || *got.title != c.Expected.Title || got.lastSeq != c.Expected.LastSeq {
				t.Errorf("title %v last seq %d, want %q %d", got.title, got.lastSeq, c.Expected.Title, c.Expected.LastSeq)
			}
			if len(got.conversation) != 2 || len(got.conversation[0].Text) != size {
				t.Errorf("huge message has %d bytes", len(got.conversation[0].Text))
			}
			if enc == Zstd {
				data, _ := os.ReadFile(c.Paths[0])
				texts := frameTexts(t, data)
				if len(texts) != 2 || texts[0] != strings.SplitAfter(string(readLogText(t, c.Paths[0])), "\n")[0] {
					t.Errorf("want a header frame and one event frame, got %d frames", len(texts))
				}
			}
		})
	}
}

func TestByteLevelCases(t *testing.T) {
	root := t.TempDir()
	inv, err := InvalidUTF8(root)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(inv.Paths[0])
	if utf8.Valid(data) {
		t.Error("invalid-utf8 log is valid UTF-8")
	}
	checkAgainstExpected(t, inv.Paths[0], *inv.Expected)

	for _, enc := range []Encoding{Raw, Zstd} {
		nul, err := NULInText(root, enc)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(readLogText(t, nul.Paths[0]), []byte(`\u0000`)) || !strings.Contains(nul.Expected.Conversation[0].Text, "\x00") {
			t.Error("NUL not written escaped or not expected in the text")
		}
		checkAgainstExpected(t, nul.Paths[0], *nul.Expected)
	}

	pad, err := NULPadding(root)
	if err != nil {
		t.Fatal(err)
	}
	data, _ = os.ReadFile(pad.Paths[0])
	if !bytes.HasSuffix(data, make([]byte, nulPadding)) {
		t.Error("log does not end in NUL padding")
	}
	complete := data[:bytes.LastIndexByte(data, '\n')+1]
	got := foldAndProject(t, parseLog(t, "nul-padding", complete))
	if got.lastSeq != pad.Expected.LastSeq {
		t.Errorf("complete part ends at seq %d, want %d", got.lastSeq, pad.Expected.LastSeq)
	}

	empty, err := EmptyFile(root)
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(empty.Paths[0]); err != nil || fi.Size() != 0 || empty.Expected != nil {
		t.Errorf("empty file: %v %v", fi, err)
	}
	for _, enc := range []Encoding{Raw, Zstd} {
		ho, err := HeaderOnly(root, enc)
		if err != nil {
			t.Fatal(err)
		}
		if lines := decodedLines(t, ho.Paths[0]); len(lines) != 1 || ho.Expected.LastSeq != -1 {
			t.Errorf("header-only log has %d lines, last seq %d", len(lines), ho.Expected.LastSeq)
		}
		v5, err := Version5(root, enc)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(readLogText(t, v5.Paths[0]), []byte(`{"type":"session","version":5,`)) || v5.Expected.Preparable || !v5.Expected.HasTitle {
			t.Errorf("version 5 case: %+v", v5.Expected)
		}
	}
}

func TestLayoutCases(t *testing.T) {
	root := t.TempDir()
	dup, err := DuplicateIDs(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(dup.Paths) != 2 || filepath.Dir(filepath.Dir(dup.Paths[0])) == filepath.Dir(filepath.Dir(dup.Paths[1])) ||
		filepath.Base(filepath.Dir(dup.Paths[0])) != filepath.Base(filepath.Dir(dup.Paths[1])) {
		t.Errorf("duplicate ids not in two project dirs: %v", dup.Paths)
	}

	idCase, err := IdentityMismatchID(root)
	if err != nil {
		t.Fatal(err)
	}
	header := readHeader(t, idCase.Paths[0])
	if encodeSegment(str(header["id"])) == filepath.Base(filepath.Dir(idCase.Paths[0])) {
		t.Error("identity-mismatch-id: header id matches its directory")
	}
	cwdCase, err := IdentityMismatchCwd(root)
	if err != nil {
		t.Fatal(err)
	}
	header = readHeader(t, cwdCase.Paths[0])
	if encodeSegment(str(header["id"])) != filepath.Base(filepath.Dir(cwdCase.Paths[0])) ||
		projectKey(str(header["cwd"])) == filepath.Base(filepath.Dir(filepath.Dir(cwdCase.Paths[0]))) {
		t.Error("identity-mismatch-cwd: want matching id and mismatching cwd")
	}

	flat, err := FlatLayout(root)
	if err != nil {
		t.Fatal(err)
	}
	if rel, _ := filepath.Rel(root, flat.Paths[0]); strings.Count(rel, string(filepath.Separator)) != 1 {
		t.Errorf("flat layout file at %s", rel)
	}

	loop, err := SymlinkLoop(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range loop.Paths[1:] {
		fi, err := os.Lstat(p)
		if err != nil || fi.Mode()&os.ModeSymlink == 0 {
			t.Errorf("%s is not a symlink: %v", p, err)
		}
		target, err := filepath.EvalSymlinks(p)
		if err != nil || !strings.HasPrefix(root, target) && !strings.HasPrefix(target, root) {
			t.Errorf("%s resolves to %s outside the store: %v", p, target, err)
		}
	}

	unread, err := UnreadableDir(root)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := RestoreReadable(unread); err != nil {
			t.Error(err)
		}
	})
	fi, err := os.Stat(unread.Paths[0])
	if err != nil || fi.Mode().Perm() != 0 {
		t.Errorf("unreadable dir mode %v, %v", fi.Mode(), err)
	}
	if PermissionsEnforced(unread.Paths[0]) {
		if _, err := os.ReadFile(unread.Paths[1]); !errors.Is(err, os.ErrPermission) {
			t.Errorf("reading inside the unreadable dir: %v", err)
		}
	} else {
		t.Log("running with permission checks bypassed (root); mode checked only")
	}
}

// readHeader parses line 1 of a raw log.
func readHeader(t *testing.T, path string) map[string]any {
	t.Helper()
	var h map[string]any
	if err := json.Unmarshal(rawLines(t, path)[0], &h); err != nil {
		t.Fatal(err)
	}
	return h
}

func TestAllCasesWriteDistinctPaths(t *testing.T) {
	root := t.TempDir()
	cases, err := AllCases(root)
	t.Cleanup(func() {
		if err := RestoreAllReadable(cases); err != nil {
			t.Error(err)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]string{}
	for _, c := range cases {
		if c.Want == "" || len(c.Paths) == 0 {
			t.Errorf("%s: no paths or no stated behaviour", c.Name)
		}
		for _, p := range c.Paths {
			if other, ok := seen[p]; ok && other != c.Name {
				t.Errorf("%s and %s share %s", c.Name, other, p)
			}
			seen[p] = c.Name
		}
	}
}

// TestRestoreAllReadable checks that only the UnreadableDir case's
// directory gets its mode back, and that a file of another case keeps its
// own.
func TestRestoreAllReadable(t *testing.T) {
	root := t.TempDir()
	cases, err := AllCases(root)
	t.Cleanup(func() { _ = RestoreAllReadable(cases) })
	if err != nil {
		t.Fatal(err)
	}
	mode := func(path string) os.FileMode {
		t.Helper()
		info, err := os.Lstat(path)
		if err != nil {
			t.Fatal(err)
		}
		return info.Mode().Perm()
	}
	var unreadable, other string
	for _, c := range cases {
		switch {
		case c.Name == unreadableDirName:
			unreadable = c.Paths[0]
		case c.Name == "empty-file":
			other = c.Paths[0]
		}
	}
	if unreadable == "" || other == "" {
		t.Fatalf("AllCases wrote no unreadable-dir (%q) or empty-file (%q) case", unreadable, other)
	}
	otherMode := mode(other)
	if got := mode(unreadable); got != 0 {
		t.Fatalf("unreadable-dir mode %v before, want 0", got)
	}
	if err := RestoreAllReadable(cases); err != nil {
		t.Fatal(err)
	}
	if got := mode(unreadable); got != dirMode {
		t.Errorf("unreadable-dir mode %v after, want %v", got, os.FileMode(dirMode))
	}
	if got := mode(other); got != otherMode {
		t.Errorf("empty-file mode %v after, want %v as before", got, otherMode)
	}
}
