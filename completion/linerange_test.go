package completion

import (
	"reflect"
	"testing"
)

func TestFileMentionsLineRanges(t *testing.T) {
	lr := func(a, b int) *LineRange { return &LineRange{Start: a, End: b} }
	cases := []struct {
		line string
		want []Mention
	}{
		{"see @src/a.go#L10 now", []Mention{{Start: 4, End: 17, Path: "src/a.go", Lines: lr(10, 10)}}},
		{"@a.go#L10-20.", []Mention{{Start: 0, End: 12, Path: "a.go", Lines: lr(10, 20)}}},
		{"@a.go#L10-L20", []Mention{{Start: 0, End: 13, Path: "a.go", Lines: lr(10, 20)}}},
		{"@a.go#L20-10", []Mention{{Start: 0, End: 12, Path: "a.go", Lines: lr(20, 10)}}},
		{`x @"my notes/plan.md"#L3-4, y`, []Mention{{Start: 2, End: 26, Path: "my notes/plan.md", Quoted: true, Lines: lr(3, 4)}}},
		{`@"a b"#Lx`, []Mention{{Start: 0, End: 6, Path: "a b", Quoted: true}}},
		// Not a range: stays part of the path.
		{"@a.go#intro", []Mention{{Start: 0, End: 11, Path: "a.go#intro"}}},
		{"@a.go#L", []Mention{{Start: 0, End: 7, Path: "a.go#L"}}},
		{"@a.go#L99999999999", []Mention{{Start: 0, End: 18, Path: "a.go#L99999999999"}}},
		{"@#L1", []Mention{{Start: 0, End: 4, Path: "#L1"}}},
	}
	for _, c := range cases {
		if got := FileMentions(c.line); !reflect.DeepEqual(got, c.want) {
			t.Errorf("FileMentions(%q) = %+v, want %+v", c.line, got, c.want)
		}
	}
}

func TestLineRangeString(t *testing.T) {
	for _, c := range []struct {
		r    LineRange
		want string
	}{{LineRange{3, 3}, "L3"}, {LineRange{3, 9}, "L3-9"}} {
		if got := c.r.String(); got != c.want {
			t.Errorf("%+v.String() = %q, want %q", c.r, got, c.want)
		}
	}
	if (LineRange{0, 3}).Valid() || (LineRange{4, 3}).Valid() || !(LineRange{3, 3}).Valid() {
		t.Error("Valid: want only ordered ranges from line 1")
	}
}

func TestRangeAt(t *testing.T) {
	cases := []struct {
		line      string
		cursor    int
		ok        bool
		path      string
		hash, end int
	}{
		{"@a.go#", 6, true, "a.go", 5, 6},
		{"@a.go#L1", 8, true, "a.go", 5, 8},
		{"@a.go#L1-", 7, true, "a.go", 5, 9},
		{`@"a b.go"#L2`, 12, true, "a b.go", 9, 12},
		{"x #", 3, false, "", 0, 0},
		{"@a.go #", 7, false, "", 0, 0},
		{"@a.go#x", 7, false, "", 0, 0},
		{"a@b#", 4, false, "", 0, 0},
	}
	for _, c := range cases {
		tok, ok := RangeAt(c.line, c.cursor)
		if ok != c.ok {
			t.Errorf("RangeAt(%q, %d) ok = %v, want %v", c.line, c.cursor, ok, c.ok)
			continue
		}
		if ok && (tok.Mention.Path != c.path || tok.Hash != c.hash || tok.End != c.end) {
			t.Errorf("RangeAt(%q, %d) = %+v, want path %q hash %d end %d", c.line, c.cursor, tok, c.path, c.hash, c.end)
		}
	}
}
