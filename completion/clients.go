package completion

import (
	"path"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Client is a family of LSP clients that compare the same text before
// the cursor with an item's filterText.
type Client int

const (
	// ClientSymbol compares the symbol before the cursor (for `@rate`,
	// `rate`): Emacs eglot 1.9 keeps an item only when filterText starts
	// with it. VS Code and Helix fuzzy-match, so they find it too: VS Code
	// matches the text from the edit range's start (`@rate`) after the
	// same space in every item, so all items score alike and sortText
	// decides; Helix matches the word before the cursor (`rate`) at the
	// start of every item, and its ties keep the server's order. This is
	// the family of every client that does not say who it is.
	ClientSymbol Client = iota
	// ClientEditRange compares the text from the start of the item's edit
	// range to the cursor (`@rate`), keeping an item only when filterText
	// starts with it: Neovim 0.11+'s vim.lsp.completion (and its omnifunc,
	// vim.lsp.omnifunc). The dsh-refls plugin's own omnifunc and nvim-cmp
	// start at the edit range too.
	ClientEditRange
)

// ClientOf is the family of the client that named itself name in
// initialize's clientInfo ("" when it sent none, as eglot 1.9 does).
func ClientOf(name string) Client {
	if strings.EqualFold(name, "Neovim") {
		return ClientEditRange
	}
	return ClientSymbol
}

// FilterText is the filterText of every item offered for token tok of line
// to a client of family c: one text, the same start for all items, chosen
// so that the client keeps every item the server listed, in the server's
// order, instead of dropping or re-ranking them (Client says what each
// family compares). rest (a label, an id) follows for readability and for
// clients that filter a stale list while the next answer is on its way.
func FilterText(c Client, line string, tok Token, rest ...string) string {
	typed := line[tok.Start:tok.Cursor]
	covered := line[tok.Start:tok.End]
	parts := make([]string, 0, len(rest)+2)
	if c == ClientSymbol {
		if sym := EmacsSymbol(typed); sym != "" {
			parts = append(parts, sym)
		}
	}
	parts = append(parts, covered)
	for _, r := range rest {
		if r != "" {
			parts = append(parts, r)
		}
	}
	return strings.Join(parts, " ")
}

// EmacsSymbol is the symbol Emacs finds right before the end of typed, with
// the syntax of text-mode and markdown-mode buffers: letters, digits, `'`
// and the symbol characters `_-+*/&|<>=`. Other punctuation (`@`, `.`,
// `,`, `:`, `"`, `#`, `~`…) and whitespace end it.
func EmacsSymbol(typed string) string {
	start := len(typed)
	for start > 0 {
		r, size := utf8.DecodeLastRuneInString(typed[:start])
		if !isEmacsSymbolRune(r) {
			break
		}
		start -= size
	}
	return typed[start:]
}

// isEmacsSymbolRune reports whether r is a word or symbol constituent in
// Emacs's standard and text-mode syntax tables.
func isEmacsSymbolRune(r rune) bool {
	if unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r) {
		return true
	}
	return strings.ContainsRune("_-+*/&|<>='", r)
}

// EditorTemporary reports whether a workspace path names a file an editor
// keeps beside the one being edited: an Emacs auto-save file `#name#` or
// lock `.#name`, a Vim swap file (`.name.swp`, `.swo`, … `.swa`, and
// `name.swp` where 'directory' puts it elsewhere) or a backup `name~`.
// Such files are never offered as mentions.
func EditorTemporary(p string) bool {
	base := path.Base(strings.TrimSuffix(p, "/"))
	switch {
	case base == "" || base == "." || base == "/":
		return false
	case strings.HasSuffix(base, "~"):
		return true
	case len(base) > 2 && strings.HasPrefix(base, "#") && strings.HasSuffix(base, "#"):
		return true
	case strings.HasPrefix(base, ".#"):
		return true
	}
	ext := path.Ext(base)
	if ext == ".swp" {
		return true
	}
	// Vim's further swap names count down from .swo to .swa, always for a
	// hidden name (.prompt.md.swo).
	return strings.HasPrefix(base, ".") && len(ext) == 4 && strings.HasPrefix(ext, ".sw") && ext[3] >= 'a' && ext[3] <= 'o'
}
