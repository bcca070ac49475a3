package completion

import (
	"strings"
	"testing"

	"github.com/dsh-refls/dsh-refls/fileref"
)

// cursorMarker marks the cursor in test lines.
const cursorMarker = "‸"

// split removes the cursor marker and returns the line and the cursor offset.
func split(t *testing.T, marked string) (string, int) {
	t.Helper()
	i := strings.Index(marked, cursorMarker)
	if i < 0 {
		t.Fatalf("no cursor marker in %q", marked)
	}
	return marked[:i] + marked[i+len(cursorMarker):], i
}

func TestAt(t *testing.T) {
	tests := []struct {
		name      string
		marked    string
		ok        bool
		query     string
		quoted    bool
		tokenText string // the text from Start to End
	}{
		{"lone at", "@‸", true, "", false, "@"},
		{"at line start", "@src/ma‸", true, "src/ma", false, "@src/ma"},
		{"after space", "see @READ‸ME.md now", true, "READ", false, "@README.md"},
		{"after emoji and space", "😀 @fo‸o", true, "fo", false, "@foo"},
		{"email is not a trigger", "a@b.c‸", false, "", false, ""},
		{"no at", "hello‸", false, "", false, ""},
		{"quoted open", `@"my dir/fi‸`, true, "my dir/fi", true, `@"my dir/fi`},
		{"quoted with closing quote", `x @"my fi‸le.txt" y`, true, "my fi", true, `@"my file.txt"`},
		{"quoted closed before cursor", `@"a b" c‸`, false, "", false, ""},
		{"session mention", "@[title](dsh-session:abc‸)", false, "", false, ""},
		{"CJK query", "文 @文件‸", true, "文件", false, "@文件"},
		{"cursor after space", "@foo ‸", false, "", false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			line, cur := split(t, tt.marked)
			tok, ok := At(line, cur)
			if ok != tt.ok {
				t.Fatalf("At(%q, %d) ok = %v, want %v (%+v)", line, cur, ok, tt.ok, tok)
			}
			if !ok {
				return
			}
			if tok.Query != tt.query || tok.Quoted != tt.quoted {
				t.Errorf("query/quoted = %q/%v, want %q/%v", tok.Query, tok.Quoted, tt.query, tt.quoted)
			}
			if got := line[tok.Start:tok.End]; got != tt.tokenText {
				t.Errorf("token text = %q, want %q", got, tt.tokenText)
			}
			if tok.Cursor != cur {
				t.Errorf("cursor = %d, want %d", tok.Cursor, cur)
			}
		})
	}
}

func TestInsertFile(t *testing.T) {
	tests := []struct {
		path   string
		kind   fileref.Kind
		quoted bool
		want   string
	}{
		{"src/main.go", fileref.KindFile, false, "@src/main.go"},
		{"src", fileref.KindDirectory, false, "@src/"},
		{"my dir", fileref.KindDirectory, false, `@"my dir/`},
		{"my file.txt", fileref.KindFile, false, `@"my file.txt"`},
		{"plain.txt", fileref.KindFile, true, `@"plain.txt"`},
	}
	for _, tt := range tests {
		if got := InsertFile(tt.path, tt.kind, tt.quoted); got != tt.want {
			t.Errorf("InsertFile(%q, %s, %v) = %q, want %q", tt.path, tt.kind, tt.quoted, got, tt.want)
		}
	}
}

func TestOfferable(t *testing.T) {
	for path, want := range map[string]bool{"a.txt": true, `a"b`: false, "a\tb": false, "a b": true, "": false} {
		if got := Offerable(path); got != want {
			t.Errorf("Offerable(%q) = %v, want %v", path, got, want)
		}
	}
}

func TestFileMentions(t *testing.T) {
	tests := []struct {
		line  string
		paths []string
	}{
		{"see @README.md, and @\"my file.txt\" too", []string{"README.md", "my file.txt"}},
		{"mail a@b.c and @[t](dsh-session:x)", nil},
		{"@ alone and @\"unclosed", nil},
		{"😀 @src/", []string{"src/"}},
	}
	for _, tt := range tests {
		got := FileMentions(tt.line)
		var paths []string
		for _, m := range got {
			paths = append(paths, m.Path)
			if !strings.HasPrefix(tt.line[m.Start:m.End], "@") {
				t.Errorf("mention %+v does not start at @ in %q", m, tt.line)
			}
		}
		if strings.Join(paths, "|") != strings.Join(tt.paths, "|") {
			t.Errorf("FileMentions(%q) = %q, want %q", tt.line, paths, tt.paths)
		}
	}
}
