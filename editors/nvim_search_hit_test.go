package editors

import (
	"strconv"
	"strings"
	"testing"
)

// searchHitAtCursor checks the recall preview a :DshSearch match line
// opened (issue 30 item 6): the cursor stands on the hit's words ("twenty
// times", the demo's phrase) in the message below the preview's header,
// and they are highlighted. echo evaluates a Lua expression in Neovim.
func searchHitAtCursor(t *testing.T, echo func(t *testing.T, tag, expr string) string) {
	t.Helper()
	if got := echo(t, "HITWORDS", "vim.api.nvim_get_current_line():sub(vim.fn.col('.'), vim.fn.col('.') + 11):lower()"); got != "twenty times" {
		t.Errorf("the cursor is not on the hit: the text from it is %q, want \"twenty times\"", got)
	}
	if got, err := strconv.Atoi(echo(t, "HITLINE", "vim.fn.line('.')")); err != nil || got <= 5 {
		t.Errorf("the cursor is on line %d (%v), not in the message below the preview's header", got, err)
	}
	marks := echo(t, "HITMARKS", "vim.inspect(vim.api.nvim_buf_get_extmarks(0, vim.api.nvim_create_namespace('dsh_refls_hit'), 0, -1, { details = true })[1][4].hl_group)")
	if !strings.Contains(marks, "Search") {
		t.Errorf("the hit is not highlighted: the preview's extmark is %s", marks)
	}
}

// searchHitFlow runs :DshSearch with the demo's phrase in a fresh Neovim
// and <CR> on the match line: the preview opens at the message, the
// cursor on the hit.
func (f *freshNvim) searchHitFlow(t *testing.T) {
	t.Helper()
	f.text(`:DshSearch "twenty times"`)
	f.keys("Enter")
	results := f.wait(t, "the search results", func(s string) bool {
		return strings.Contains(s, "# dsh-refls search: \"twenty times\"") && strings.Contains(s, "- user #")
	})
	t.Logf(":DshSearch \"twenty times\":\n%s", results)
	f.text(":call search('^- user')")
	f.keys("Enter", "Enter")
	preview := f.wait(t, "the recall preview at the hit", func(s string) bool {
		return strings.Contains(s, "dsh://recall/") && strings.Contains(s, "## Message of event")
	})
	t.Logf("<CR> on the match:\n%s", preview)
	searchHitAtCursor(t, f.echo)
}
