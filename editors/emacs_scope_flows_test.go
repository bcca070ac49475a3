package editors

import (
	"strings"
	"testing"
)

// scopeFlow drives the session scopes in Emacs (eglot 1.9 and
// dsh-refls.el): M-TAB after "@all:audit" lists the demo's subagent child,
// which "@" hides; eldoc on a mention of it says whose child it is; and
// dsh-refls-session-scope and dsh-refls-show-automation-sessions become
// the server options sessionScope and showAutomationSessions, unless
// dsh-refls-settings has them. It leaves the cursor on an empty line.
func (e *emacsScreen) scopeFlow(t *testing.T) {
	t.Helper()
	e.text("Scope: @all:audit")
	e.keys("M-Tab")
	listed := e.wait(t, "the subagent child in *Completions*", func(s string) bool {
		return strings.Contains(s, "*Completions*") && strings.Contains(s, demoChildTitle)
	})
	t.Logf("M-TAB after @all:audit:\n%s", listed)
	e.keys("C-a", "C-k")
	e.wait(t, "the line cleared", func(s string) bool { return !strings.Contains(s, "Scope: @all:audit") })

	child := demoByDisplayTitle(t, demoChildTitle)
	e.text("Child: " + sessionMention(t, child.DisplayTitle, child.ID))
	e.keys("C-a", "C-s")
	e.text("Audit")
	// Two moves after the search: the first clears isearch's message,
	// which eldoc does not write over.
	e.keys("Enter", "C-b", "C-f")
	// eldoc asks once point rests and shows the hover in the echo area.
	hover := e.wait(t, "eldoc's hover of the child's mention", func(s string) bool {
		return strings.Contains(s, "child of "+demoParentTitle)
	})
	t.Logf("eldoc on the child's mention:\n%s", hover)
	e.keys("C-a", "C-k")
	e.wait(t, "the line cleared", func(s string) bool { return !strings.Contains(s, "Child: @[") })

	got := e.eval(t, `(list`+
		` (equal (plist-get (let ((dsh-refls-session-scope "recent")) (dsh-refls--settings)) :sessionScope) "recent")`+
		` (plist-get (let ((dsh-refls-show-automation-sessions t)) (dsh-refls--settings)) :showAutomationSessions)`+
		` (equal (plist-get (let ((dsh-refls-settings '(:sessionScope "workspace")) (dsh-refls-session-scope "recent")) (dsh-refls--settings)) :sessionScope) "workspace")`+
		` (plist-member (dsh-refls--settings) :sessionScope))`)
	if got != "(t t t nil)" {
		t.Errorf("the scope defcustoms as server options: %s, want (t t t nil)", got)
	}
}
