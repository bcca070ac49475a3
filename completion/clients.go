package completion

import (
	"path"
	"strings"
	"unicode"
	"unicode/utf8"
)

// FilterText is the filterText of every item offered for token tok of line:
// one text, the same start for all items, chosen so that the clients that
// filter on their own keep the server's order instead of re-ranking.
//
//   - VS Code fuzzy-matches the text from the edit range's start (the `@`)
//     to the cursor against filterText. That text follows a space at the
//     same place in every item, so all items score alike and sortText
//     decides.
//   - Emacs eglot 1.9 keeps an item only when filterText starts with the
//     symbol before point (for `@rate` that is `rate`, since `@` is
//     punctuation in text and Markdown buffers), so filterText starts with
//     that symbol: EmacsSymbol.
//   - Neovim's own dsh-refls omnifunc and nvim-cmp start at the edit
//     range or the keyword before the cursor; both prefixes match at the
//     start of filterText.
//
// rest (a label, an id) follows for readability and for clients that
// filter a stale list while the next answer is on its way.
func FilterText(line string, tok Token, rest ...string) string {
	typed := line[tok.Start:tok.Cursor]
	covered := line[tok.Start:tok.End]
	parts := make([]string, 0, len(rest)+2)
	if sym := EmacsSymbol(typed); sym != "" {
		parts = append(parts, sym)
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
