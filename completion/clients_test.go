package completion

import "testing"

func TestEditorTemporary(t *testing.T) {
	for p, want := range map[string]bool{
		"#prompt.md#": true, "notes/#prompt.md#": true, ".#prompt.md": true,
		".prompt.md.swp": true, ".prompt.md.swo": true, ".prompt.md.swa": true, "prompt.md.swp": true,
		"prompt.md~": true, "dir/prompt.md~": true,
		"prompt.md": false, "#": false, "##": false, "#tag.md": false, "movie.swf": false, ".config.swz": false, ".config.sw": false,
		"a~b.md": false, ".hidden": false, "notes/": false,
	} {
		if got := EditorTemporary(p); got != want {
			t.Errorf("EditorTemporary(%q) = %v, want %v", p, got, want)
		}
	}
}

func TestEmacsSymbol(t *testing.T) {
	for typed, want := range map[string]string{
		"@": "", "@rate": "rate", "@src/ma": "src/ma", "@main.g": "g", "@main.": "", `@"my d`: "d",
		"@my-file_2": "my-file_2", "@grüße": "grüße", "@a:b": "b",
	} {
		if got := EmacsSymbol(typed); got != want {
			t.Errorf("EmacsSymbol(%q) = %q, want %q", typed, got, want)
		}
	}
}

func TestFilterTextStartsWithWhatEachClientCompares(t *testing.T) {
	line := `see @ra and @"design no`
	tok, ok := At(line, len("see @ra"))
	if !ok {
		t.Fatal("no token")
	}
	quoted, _ := At(line, len(line))
	for _, tc := range []struct {
		client       Client
		plain, quote string
	}{
		// eglot 1.9 compares the symbol before point, "ra" and "no".
		{ClientSymbol, "ra @ra Rate plan s-1", `no @"design no design notes/`},
		// Neovim 0.11+ compares the text from the edit range's start.
		{ClientEditRange, "@ra Rate plan s-1", `@"design no design notes/`},
	} {
		if got := FilterText(tc.client, line, tok, "Rate plan", "s-1"); got != tc.plain {
			t.Errorf("client %d: FilterText = %q, want %q", tc.client, got, tc.plain)
		}
		if got := FilterText(tc.client, line, quoted, "design notes/", ""); got != tc.quote {
			t.Errorf("client %d: quoted FilterText = %q, want %q", tc.client, got, tc.quote)
		}
	}
}

func TestClientOf(t *testing.T) {
	for name, want := range map[string]Client{
		"Neovim": ClientEditRange, "neovim": ClientEditRange,
		"": ClientSymbol, "Eglot": ClientSymbol, "Visual Studio Code": ClientSymbol, "code-server": ClientSymbol, "helix": ClientSymbol,
	} {
		if got := ClientOf(name); got != want {
			t.Errorf("ClientOf(%q) = %d, want %d", name, got, want)
		}
	}
}
