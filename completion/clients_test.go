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
	if got := FilterText(line, tok, "Rate plan", "s-1"); got != "ra @ra Rate plan s-1" {
		t.Errorf("FilterText = %q", got)
	}
	tok, _ = At(line, len(line))
	if got := FilterText(line, tok, "design notes/", ""); got != `no @"design no design notes/` {
		t.Errorf("quoted FilterText = %q", got)
	}
}
