package completion

import "testing"

func TestSplitSwitch(t *testing.T) {
	for _, tt := range []struct {
		line string
		sw   Switch
		rest string
	}{
		{"@here:", SwitchHere, ""},
		{"@here:rate", SwitchHere, "rate"},
		{"@recent:login", SwitchRecent, "login"},
		{"@all:", SwitchAll, ""},
		{"@all:2161e130", SwitchAll, "2161e130"},
		{"@all:here:x", SwitchAll, "here:x"}, // one switch; the rest is the query
		// Not switches: the words alone, other cases, other words, files.
		{"@all", SwitchNone, "all"},
		{"@allowed.go", SwitchNone, "allowed.go"},
		{"@here-doc.md", SwitchNone, "here-doc.md"},
		{"@All:rate", SwitchNone, "All:rate"},
		{"@workspace:rate", SwitchNone, "workspace:rate"},
		{"@src/all:x", SwitchNone, "src/all:x"},
		{`@"all: notes`, SwitchNone, "all: notes"},
	} {
		tok, ok := At(tt.line, len(tt.line))
		if !ok {
			t.Fatalf("no token in %q", tt.line)
		}
		sw, rest := SplitSwitch(tok)
		if sw != tt.sw || rest != tt.rest {
			t.Errorf("SplitSwitch(%q) = %v %q, want %v %q", tt.line, sw, rest, tt.sw, tt.rest)
		}
	}
	for sw, want := range map[Switch]string{SwitchNone: "", SwitchHere: "here:", SwitchRecent: "recent:", SwitchAll: "all:"} {
		if got := sw.String(); got != want {
			t.Errorf("%d.String() = %q, want %q", sw, got, want)
		}
	}
}

// TestFilterTextKeepsTheSwitch: every client family keeps the items of a
// switched token, because filterText starts with what the client compares:
// the token from its `@` (Neovim), or the symbol before the cursor, which
// ends at the ':' (eglot 1.9), then the token (VS Code, Helix).
func TestFilterTextKeepsTheSwitch(t *testing.T) {
	for _, tt := range []struct {
		line   string
		client Client
		want   string
	}{
		{"see @all:", ClientEditRange, "@all: Audit call sites"},
		{"see @all:aud", ClientEditRange, "@all:aud Audit call sites"},
		{"see @all:", ClientSymbol, "@all: Audit call sites"},
		{"see @all:aud", ClientSymbol, "aud @all:aud Audit call sites"},
		{"see @here:", ClientSymbol, "@here: Audit call sites"},
	} {
		tok, _ := At(tt.line, len(tt.line))
		if got := FilterText(tt.client, tt.line, tok, "Audit call sites"); got != tt.want {
			t.Errorf("FilterText(%v, %q) = %q, want %q", tt.client, tt.line, got, tt.want)
		}
	}
}
