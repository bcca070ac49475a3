package server

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dsh-refls/dsh-refls/completion"
	"github.com/dsh-refls/dsh-refls/internal/dshgen"
	"github.com/dsh-refls/dsh-refls/internal/lsptest"
)

// frecencyItem is a completion item as these tests read it off the wire.
type frecencyItem struct {
	Label    string `json:"label"`
	SortText string `json:"sortText"`
	TextEdit struct {
		Range   lsptest.Range `json:"range"`
		NewText string        `json:"newText"`
	} `json:"textEdit"`
	Command *struct {
		Title     string            `json:"title"`
		Command   string            `json:"command"`
		Arguments []json.RawMessage `json:"arguments"`
	} `json:"command"`
	Data json.RawMessage `json:"data"`
}

// frecencyFixture is a workspace and a store whose names make the cases
// of match quality: in the workspace's directory "Billing export"
// (newest) and "Billing rounding" start with "bill", "Fix billing totals"
// has it at a word start, "Rebilling" only inside a word; in another
// directory "Billing for the shop". The workspace holds an exact
// "a/b/config.go" beside "config.go.orig", and "rate.md" beside
// "src/generated.go" (rate inside a word).
type frecencyFixture struct {
	h    *harness
	ws   string
	root string
	uri  string
}

func newFrecencyFixture(t *testing.T, opts Options, settings map[string]any) *frecencyFixture {
	t.Helper()
	ws, root := t.TempDir(), t.TempDir()
	for _, f := range []string{"a/b/config.go", "config.go.orig", "rate.md", "src/generated.go", "docs/plan-a.md", "docs/plan-b.md"} {
		p := filepath.Join(ws, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(f+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeFrecencyStore(t, root, ws)
	opts.SessionsRoot = root
	h := newHarness(t, opts)
	if settings == nil {
		settings = map[string]any{}
	}
	settings["watch"] = "off"
	settings["recallSearch"] = false
	h.initialize(initOptions{root: ws, settings: settings})
	h.waitReady(t)
	fx := &frecencyFixture{h: h, ws: ws, root: root, uri: pathToURI(filepath.Join(ws, "prompt.md"))}
	if _, err := h.editor.OpenFile(h.ctx, fx.uri, "Please read "+cursor); err != nil {
		t.Fatal(err)
	}
	return fx
}

func writeFrecencyStore(t *testing.T, root, ws string) {
	t.Helper()
	now := time.Now()
	sessions := []struct{ id, cwd, title string }{
		{"f-export", ws, "Billing export"},
		{"f-rounding", ws, "Billing rounding"},
		{"f-totals", ws, "Fix billing totals"},
		{"f-rebilling", ws, "Rebilling"},
		{"f-shop", "/home/dev/shop", "Billing for the shop"},
	}
	for i, s := range sessions {
		title := s.title
		sess := dshgen.NewSession(s.id).Cwd(s.cwd).CreatedAt(now.Add(-time.Duration(i+1) * time.Hour).UnixMilli()).
			Turn(func(t *dshgen.Turn) {
				t.UserText("work on " + title)
				t.Title(title, "provider")
				t.AssistantText("Done.")
			})
		if _, err := sess.Save(root, dshgen.Raw); err != nil {
			t.Fatal(err)
		}
	}
}

// complete sets the prompt to "Please read @query" and returns the list.
func (fx *frecencyFixture) complete(t *testing.T, query string) []frecencyItem {
	t.Helper()
	pos, err := fx.h.editor.SetText(fx.h.ctx, fx.uri, "Please read @"+query+cursor)
	if err != nil {
		t.Fatal(err)
	}
	var list struct {
		Items []frecencyItem `json:"items"`
	}
	fx.h.mustCall("textDocument/completion", map[string]any{"textDocument": map[string]any{"uri": fx.uri}, "position": pos}, &list)
	for i, it := range list.Items {
		if i > 0 && it.SortText <= list.Items[i-1].SortText {
			t.Fatalf("items not in sortText order: %q after %q", it.SortText, list.Items[i-1].SortText)
		}
	}
	return list.Items
}

func labels(items []frecencyItem) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it.Label
	}
	return out
}

func find(t *testing.T, items []frecencyItem, label string) frecencyItem {
	t.Helper()
	for _, it := range items {
		if it.Label == label {
			return it
		}
	}
	t.Fatalf("%q not listed in %q", label, labels(items))
	return frecencyItem{}
}

// resolveItem asks completionItem/resolve for it, as a client does for
// the item it focuses or accepts.
func (fx *frecencyFixture) resolveItem(t *testing.T, it frecencyItem) frecencyItem {
	t.Helper()
	var raw map[string]json.RawMessage
	in, err := json.Marshal(it)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(in, &raw); err != nil {
		t.Fatal(err)
	}
	var out frecencyItem
	fx.h.mustCall("completionItem/resolve", raw, &out)
	return out
}

// runAccepted resolves an item and runs the command that comes with it,
// as a client does.
func (fx *frecencyFixture) runAccepted(t *testing.T, it frecencyItem) {
	t.Helper()
	r := fx.resolveItem(t, it)
	if r.Command == nil {
		t.Fatalf("%q resolves without a command", it.Label)
	}
	fx.h.mustCall("workspace/executeCommand", map[string]any{"command": r.Command.Command, "arguments": r.Command.Arguments}, nil)
}

// pick types @query, accepts the item labelled label (its edit), and runs
// its command when command is set, as VS Code does.
func (fx *frecencyFixture) pick(t *testing.T, query, label string, command bool) {
	t.Helper()
	it := find(t, fx.complete(t, query), label)
	if err := fx.h.editor.EditFile(fx.h.ctx, fx.uri, lsptest.Edit{Range: it.TextEdit.Range, Text: it.TextEdit.NewText}); err != nil {
		t.Fatal(err)
	}
	if command {
		fx.runAccepted(t, it)
	}
}

func (fx *frecencyFixture) status(t *testing.T) frecencyStatus {
	t.Helper()
	var st statusResult
	fx.h.mustCall(MethodStatus, nil, &st)
	if st.Frecency == nil {
		t.Fatal("dsh/status has no frecency")
	}
	return *st.Frecency
}

// before reports whether a is listed before b.
func before(items []frecencyItem, a, b string) bool {
	ls := labels(items)
	i, j := slices.Index(ls, a), slices.Index(ls, b)
	return i >= 0 && j >= 0 && i < j
}

// The list carries no command (its bytes are typing's cost); every
// session and file item resolves with CommandAccepted and its data.
func TestResolvedItemsCarryTheAcceptedCommand(t *testing.T) {
	fx := newFrecencyFixture(t, Options{}, nil)
	items := fx.complete(t, "")
	if len(items) < 5 {
		t.Fatalf("%d items", len(items))
	}
	for _, it := range items {
		if it.Command != nil {
			t.Errorf("item %q carries a command in the list", it.Label)
		}
		r := fx.resolveItem(t, it)
		if r.Command == nil || r.Command.Command != CommandAccepted || len(r.Command.Arguments) != 1 || string(r.Command.Arguments[0]) != string(it.Data) {
			t.Errorf("item %q resolves with command %+v, data %s; want %s with the data", it.Label, r.Command, it.Data, CommandAccepted)
		}
	}
}

// The session picked today ranks first among the sessions of its
// directory at a bare @, and the order is what it was before any pick
// for the rest.
func TestPicksReorderWithinARank(t *testing.T) {
	fx := newFrecencyFixture(t, Options{}, nil)
	start := labels(fx.complete(t, ""))
	if start[0] != "Billing export" {
		t.Fatalf("at @ the newest session comes first, got %q", start)
	}
	fx.pick(t, "", "Fix billing totals", true)
	fx.pick(t, "", "Fix billing totals", true)
	if st := fx.status(t); !st.Enabled || st.Entries != 1 || st.Picks != 2 {
		t.Errorf("status %+v, want one entry of two picks", st)
	}
	now := labels(fx.complete(t, ""))
	want := append([]string{"Fix billing totals"}, slices.DeleteFunc(slices.Clone(start), func(s string) bool { return s == "Fix billing totals" })...)
	if !slices.Equal(now, want) {
		t.Errorf("after two picks @ lists\n%q\nwant\n%q", now, want)
	}
	// A session of another directory picked more often does not rise above
	// this workspace's sessions.
	for range 5 {
		fx.pick(t, "", "Billing for the shop", true)
	}
	items := fx.complete(t, "")
	if !before(items, "Rebilling", "Billing for the shop") {
		t.Errorf("another directory's session rose above this workspace's: %q", labels(items))
	}
}

// A weak match never rises above an exact or better one, however often it
// was picked; among matches of one quality the picks decide.
func TestWeakMatchesNeverRiseAboveBetterOnes(t *testing.T) {
	fx := newFrecencyFixture(t, Options{}, nil)
	for range 20 {
		fx.pick(t, "config.go", "config.go.orig", true)
		fx.pick(t, "rate", "src/generated.go", true)
		fx.pick(t, "bill", "Fix billing totals", true)
		fx.pick(t, "bill", "Rebilling", true)
	}
	cases := []struct{ query, first, then string }{
		{"config.go", "a/b/config.go", "config.go.orig"},      // an exact base name
		{"rate", "rate.md", "src/generated.go"},               // a word start over inside a word (ranks)
		{"bill", "Billing export", "Fix billing totals"},      // the title starts with it over a word of it
		{"bill", "Billing rounding", "Fix billing totals"},    // the same
		{"bill", "Fix billing totals", "Rebilling"},           // a word start over inside a word
		{"bill", "Billing for the shop", "Rebilling"},         // ranks as before
		{"Billing", "Billing export", "Billing for the shop"}, // this workspace first
	}
	for _, c := range cases {
		items := fx.complete(t, c.query)
		if !before(items, c.first, c.then) {
			t.Errorf("@%s lists %q: want %q before %q", c.query, labels(items), c.first, c.then)
		}
	}
	// One pick of the older of two sessions whose titles start with the
	// word puts it first.
	fx.pick(t, "bill", "Billing rounding", true)
	if items := fx.complete(t, "bill"); !before(items, "Billing rounding", "Billing export") {
		t.Errorf("@bill lists %q: want the picked Billing rounding first", labels(items))
	}
	// Files of one band: plan-b after plan-a until it is picked.
	if items := fx.complete(t, "plan"); !before(items, "docs/plan-a.md", "docs/plan-b.md") {
		t.Fatalf("@plan lists %q", labels(items))
	}
	fx.pick(t, "plan", "docs/plan-b.md", true)
	if items := fx.complete(t, "plan"); !before(items, "docs/plan-b.md", "docs/plan-a.md") {
		t.Errorf("@plan lists %q: want the picked plan-b first", labels(items))
	}
}

// A file open in the editor ranks first among files that matched alike,
// until it is closed.
func TestOpenFilesRankFirst(t *testing.T) {
	fx := newFrecencyFixture(t, Options{}, nil)
	if items := fx.complete(t, "plan"); !before(items, "docs/plan-a.md", "docs/plan-b.md") {
		t.Fatalf("@plan lists %q", labels(items))
	}
	planB := pathToURI(filepath.Join(fx.ws, "docs", "plan-b.md"))
	if _, err := fx.h.editor.OpenFile(fx.h.ctx, planB, "plan b"); err != nil {
		t.Fatal(err)
	}
	if items := fx.complete(t, "plan"); !before(items, "docs/plan-b.md", "docs/plan-a.md") {
		t.Errorf("@plan with plan-b.md open lists %q", labels(items))
	}
	if items := fx.complete(t, "config.go"); !before(items, "a/b/config.go", "config.go.orig") {
		t.Errorf("@config.go lists %q", labels(items))
	}
	if err := fx.h.editor.CloseFile(fx.h.ctx, planB); err != nil {
		t.Fatal(err)
	}
	if items := fx.complete(t, "plan"); !before(items, "docs/plan-a.md", "docs/plan-b.md") {
		t.Errorf("@plan after closing plan-b.md lists %q", labels(items))
	}
	if st := fx.status(t); st.Picks != 0 {
		t.Errorf("opening a file counted %d picks", st.Picks)
	}
}

// A client that runs no commands is counted by the edit that inserts an
// item, once the document moves on; stepping through a menu counts only
// the item kept, and an undo counts nothing.
func TestFallbackCountsWhatTheEditInserted(t *testing.T) {
	fx := newFrecencyFixture(t, Options{}, nil)
	insert := func(query, label string) {
		t.Helper()
		fx.pick(t, query, label, false)
	}
	edit := func(text string) {
		t.Helper()
		cur, _, _ := fx.h.editor.Text(fx.uri)
		end := lsptest.OffsetPosition(cur, len(cur), lsptest.UTF16)
		if err := fx.h.editor.EditFile(fx.h.ctx, fx.uri, lsptest.Edit{Range: lsptest.Range{Start: end, End: end}, Text: text}); err != nil {
			t.Fatal(err)
		}
	}
	picks := func(want int) {
		t.Helper()
		if st := fx.status(t); st.Picks != want {
			t.Errorf("%d picks counted, want %d", st.Picks, want)
		}
	}
	insert("bill", "Fix billing totals")
	picks(0) // pending until the document moves on
	edit(" please")
	picks(1)
	if items := fx.complete(t, "bill"); !before(items, "Fix billing totals", "Rebilling") || fx.status(t).Entries != 1 {
		t.Errorf("after one counted pick: %q", labels(fx.complete(t, "bill")))
	}

	// Stepping through the menu: each item replaces the one before at the
	// same `@`; only the one kept counts.
	items := fx.complete(t, "bill")
	a, b := find(t, items, "Billing export"), find(t, items, "Billing rounding")
	if err := fx.h.editor.EditFile(fx.h.ctx, fx.uri, lsptest.Edit{Range: a.TextEdit.Range, Text: a.TextEdit.NewText}); err != nil {
		t.Fatal(err)
	}
	cur, _, _ := fx.h.editor.Text(fx.uri)
	start := a.TextEdit.Range.Start
	end := lsptest.OffsetPosition(cur, len(cur), lsptest.UTF16)
	if err := fx.h.editor.EditFile(fx.h.ctx, fx.uri, lsptest.Edit{Range: lsptest.Range{Start: start, End: end}, Text: b.TextEdit.NewText}); err != nil {
		t.Fatal(err)
	}
	edit(" ")
	picks(2)
	if st := fx.status(t); st.Entries != 2 {
		t.Errorf("%d entries, want Fix billing totals and Billing rounding", st.Entries)
	}
	if items := fx.complete(t, "bill"); !before(items, "Billing rounding", "Billing export") {
		t.Errorf("the item kept was not counted: %q", labels(items))
	}

	// Stepping in two changes (a client whose debounce fell between the
	// deletion of one item and the insertion of the next): only the
	// item kept counts.
	items = fx.complete(t, "bill")
	a, b = find(t, items, "Billing export"), find(t, items, "Fix billing totals")
	if err := fx.h.editor.EditFile(fx.h.ctx, fx.uri, lsptest.Edit{Range: a.TextEdit.Range, Text: a.TextEdit.NewText}); err != nil {
		t.Fatal(err)
	}
	cur, _, _ = fx.h.editor.Text(fx.uri)
	start = a.TextEdit.Range.Start
	afterAt := lsptest.Position{Line: start.Line, Character: start.Character + 1}
	end = lsptest.OffsetPosition(cur, len(cur), lsptest.UTF16)
	if err := fx.h.editor.EditFile(fx.h.ctx, fx.uri, lsptest.Edit{Range: lsptest.Range{Start: afterAt, End: end}, Text: ""}); err != nil {
		t.Fatal(err)
	}
	picks(2)
	cur, _, _ = fx.h.editor.Text(fx.uri)
	end = lsptest.OffsetPosition(cur, len(cur), lsptest.UTF16)
	if err := fx.h.editor.EditFile(fx.h.ctx, fx.uri, lsptest.Edit{Range: lsptest.Range{Start: start, End: end}, Text: b.TextEdit.NewText}); err != nil {
		t.Fatal(err)
	}
	edit(" ")
	picks(3)
	if st := fx.status(t); st.Entries != 2 {
		t.Errorf("%d entries after stepping in two changes, want 2 (Billing export not counted)", st.Entries)
	}

	// An undo takes the insertion back: nothing is counted.
	items = fx.complete(t, "bill")
	a = find(t, items, "Billing export")
	if err := fx.h.editor.EditFile(fx.h.ctx, fx.uri, lsptest.Edit{Range: a.TextEdit.Range, Text: a.TextEdit.NewText}); err != nil {
		t.Fatal(err)
	}
	if _, err := fx.h.editor.SetText(fx.h.ctx, fx.uri, "Please read @bill"); err != nil {
		t.Fatal(err)
	}
	edit(" and more")
	picks(3)

	// Typing past the offered text by hand is not an insertion of it.
	fx.complete(t, "bil")
	edit("l")
	edit(" ")
	picks(3)

	// A file accepted and the message sent (the document cleared) counts.
	insert("plan", "docs/plan-b.md")
	if _, err := fx.h.editor.SetText(fx.h.ctx, fx.uri, ""); err != nil {
		t.Fatal(err)
	}
	picks(4)
}

// A client whose edit the fallback sees and that runs the command too is
// counted once, however the two arrive.
func TestEditAndCommandCountOnce(t *testing.T) {
	fx := newFrecencyFixture(t, Options{}, nil)
	fx.pick(t, "bill", "Fix billing totals", true) // the edit, then the command
	if st := fx.status(t); st.Picks != 1 {
		t.Fatalf("%d picks after one accept, want 1", st.Picks)
	}
	// The document moves on: the edit's pick was the command's.
	cur0, _, _ := fx.h.editor.Text(fx.uri)
	end0 := lsptest.OffsetPosition(cur0, len(cur0), lsptest.UTF16)
	if err := fx.h.editor.EditFile(fx.h.ctx, fx.uri, lsptest.Edit{Range: lsptest.Range{Start: end0, End: end0}, Text: " "}); err != nil {
		t.Fatal(err)
	}
	if st := fx.status(t); st.Picks != 1 {
		t.Fatalf("%d picks once the document moved on, want 1", st.Picks)
	}
	// A client that runs the command before it applies the edit: once.
	it := find(t, fx.complete(t, "bill"), "Billing rounding")
	fx.runAccepted(t, it)
	if err := fx.h.editor.EditFile(fx.h.ctx, fx.uri, lsptest.Edit{Range: it.TextEdit.Range, Text: it.TextEdit.NewText}); err != nil {
		t.Fatal(err)
	}
	cur1, _, _ := fx.h.editor.Text(fx.uri)
	end1 := lsptest.OffsetPosition(cur1, len(cur1), lsptest.UTF16)
	if err := fx.h.editor.EditFile(fx.h.ctx, fx.uri, lsptest.Edit{Range: lsptest.Range{Start: end1, End: end1}, Text: " "}); err != nil {
		t.Fatal(err)
	}
	if st := fx.status(t); st.Picks != 2 {
		t.Fatalf("%d picks after a command then its edit, want 2", st.Picks)
	}
	// The edit settled before the command arrives (Neovim applies the
	// edit in steps): still once.
	fx2 := newFrecencyFixture(t, Options{}, nil)
	it = find(t, fx2.complete(t, "bill"), "Fix billing totals")
	if err := fx2.h.editor.EditFile(fx2.h.ctx, fx2.uri, lsptest.Edit{Range: it.TextEdit.Range, Text: it.TextEdit.NewText}); err != nil {
		t.Fatal(err)
	}
	cur, _, _ := fx2.h.editor.Text(fx2.uri)
	end := lsptest.OffsetPosition(cur, len(cur), lsptest.UTF16)
	if err := fx2.h.editor.EditFile(fx2.h.ctx, fx2.uri, lsptest.Edit{Range: lsptest.Range{Start: end, End: end}, Text: " "}); err != nil {
		t.Fatal(err)
	}
	if st := fx2.status(t); st.Picks != 1 {
		t.Fatalf("the settled edit counted %d picks, want 1", st.Picks)
	}
	fx2.runAccepted(t, it)
	if st := fx2.status(t); st.Picks != 1 {
		t.Errorf("edit and command counted %d picks, want 1", st.Picks)
	}
	// The next accept, edit and command: once more.
	fx2.pick(t, "bill", "Fix billing totals", true)
	if st := fx2.status(t); st.Picks != 2 {
		t.Errorf("%d picks after the second accept, want 2", st.Picks)
	}
	// A command alone (a client whose edit the fallback cannot tell) counts.
	fx2.runAccepted(t, find(t, fx2.complete(t, "bill"), "Rebilling"))
	if st := fx2.status(t); st.Picks != 3 {
		t.Errorf("%d picks after a command alone, want 3", st.Picks)
	}
}

func TestAcceptedCommandRefusesBadArguments(t *testing.T) {
	fx := newFrecencyFixture(t, Options{}, nil)
	for _, args := range [][]any{
		{},
		{map[string]any{"kind": "session", "sessionId": "a"}, "extra"},
		{"not an object"},
		{map[string]any{"kind": "tab", "path": "a"}},
		{map[string]any{"kind": "file"}},
		{map[string]any{"kind": "file", "path": "a\nb"}},
	} {
		err := fx.h.call("workspace/executeCommand", map[string]any{"command": CommandAccepted, "arguments": args}, nil)
		if err == nil {
			t.Errorf("arguments %v were accepted", args)
			continue
		}
		if code, _ := rpcError(t, err); code != -32602 {
			t.Errorf("arguments %v: code %d, want -32602", args, code)
		}
	}
	if st := fx.status(t); st.Picks != 0 {
		t.Errorf("%d picks counted from bad arguments", st.Picks)
	}
}

// With the setting off items carry no command, nothing is counted or
// re-ordered; on again, the picks made before are back.
func TestFrecencySettingOff(t *testing.T) {
	path := filepath.Join(t.TempDir(), "picks")
	opts := Options{FrecencyPath: func(string) (string, error) { return path, nil }}
	fx := newFrecencyFixture(t, opts, nil)
	fx.pick(t, "", "Fix billing totals", true)
	fx.h.notify("workspace/didChangeConfiguration", map[string]any{"settings": map[string]any{"dsh": map[string]any{"frecency": false, "watch": "off", "recallSearch": false}}})
	if st := fx.status(t); st.Enabled || st.Entries != 0 {
		t.Errorf("status with frecency off: %+v", st)
	}
	if _, err := os.Stat(path); err != nil {
		t.Errorf("the pick made while on was not saved as it was switched off: %v", err)
	}
	items := fx.complete(t, "")
	if items[0].Label != "Billing export" {
		t.Errorf("with frecency off @ lists %q first", items[0].Label)
	}
	for _, it := range items {
		if r := fx.resolveItem(t, it); r.Command != nil {
			t.Errorf("item %q resolves with a command with frecency off", it.Label)
		}
	}
	fx.h.mustCall("workspace/executeCommand", map[string]any{"command": CommandAccepted,
		"arguments": []any{map[string]any{"kind": "session", "sessionId": "f-rounding"}}}, nil)
	fx.h.notify("workspace/didChangeConfiguration", map[string]any{"settings": map[string]any{"dsh": map[string]any{"watch": "off", "recallSearch": false}}})
	if st := fx.status(t); !st.Enabled || st.Picks != 1 {
		t.Errorf("on again: %+v, want the one pick made while on", st)
	}
	if items := fx.complete(t, ""); items[0].Label != "Fix billing totals" {
		t.Errorf("on again, @ lists %q first", items[0].Label)
	}
	// Off from the start: nothing is read.
	fx3 := newFrecencyFixture(t, opts, map[string]any{"frecency": false})
	if st := fx3.status(t); st.Enabled || st.Entries != 0 {
		t.Errorf("off from the start: %+v", st)
	}
}

func TestForgetPicks(t *testing.T) {
	path := filepath.Join(t.TempDir(), "picks")
	opts := Options{FrecencyPath: func(string) (string, error) { return path, nil }}
	fx := newFrecencyFixture(t, opts, nil)
	fx.pick(t, "", "Fix billing totals", true)
	fx.pick(t, "plan", "docs/plan-b.md", true)
	var res map[string]int
	fx.h.mustCall("workspace/executeCommand", map[string]any{"command": CommandForgetPicks}, &res)
	if res["forgotten"] != 2 {
		t.Errorf("forget answered %v, want 2 forgotten", res)
	}
	if st := fx.status(t); st.Entries != 0 || st.Picks != 0 {
		t.Errorf("after forget: %+v", st)
	}
	if items := fx.complete(t, ""); items[0].Label != "Billing export" {
		t.Errorf("after forget @ lists %q first", items[0].Label)
	}
	if fx.h.shutdownExit() != 0 {
		t.Error("exit code")
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("the state file exists after forget and shutdown (%v)", err)
	}
}

// Picks are saved as the server stops and ranked by after a restart.
func TestPicksSurviveARestart(t *testing.T) {
	dir := t.TempDir()
	var asked []string
	opts := Options{FrecencyPath: func(root string) (string, error) {
		asked = append(asked, root)
		return filepath.Join(dir, "picks"), nil
	}}
	fx := newFrecencyFixture(t, opts, nil)
	fx.pick(t, "", "Rebilling", true)
	if code := fx.h.shutdownExit(); code != 0 {
		t.Fatalf("exit code %d", code)
	}
	if len(asked) != 1 || asked[0] != fx.ws {
		t.Errorf("the state was keyed by %q, want the workspace %s", asked, fx.ws)
	}
	data, err := os.ReadFile(filepath.Join(dir, "picks"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"f-rebilling"`) || strings.Contains(string(data), "Rebilling") {
		t.Errorf("the state file holds %s: want the id and no title", data)
	}
	// The second server sees the same workspace path: the fixture's
	// temporary directories differ, so reuse the first's.
	h := newHarness(t, Options{SessionsRoot: fx.root, FrecencyPath: opts.FrecencyPath})
	h.initialize(initOptions{root: fx.ws, settings: map[string]any{"watch": "off", "recallSearch": false}})
	h.waitReady(t)
	fx2 := &frecencyFixture{h: h, ws: fx.ws, root: fx.root, uri: fx.uri}
	if _, err := h.editor.OpenFile(h.ctx, fx2.uri, "Please read "+cursor); err != nil {
		t.Fatal(err)
	}
	if items := fx2.complete(t, ""); items[0].Label != "Rebilling" {
		t.Errorf("after a restart @ lists %q", labels(items))
	}
}

func TestFrecencySettingIsValidated(t *testing.T) {
	if !DefaultConfig().Frecency {
		t.Error("frecency is off by default")
	}
	for _, bad := range []string{`"false"`, `0`, `{}`} {
		_, _, err := applyConfig(DefaultConfig(), json.RawMessage(`{"frecency": `+bad+`}`))
		var ce *configError
		if !errors.As(err, &ce) || ce.Field != "frecency" || !strings.Contains(ce.Msg, "true or false") {
			t.Errorf("frecency %s: %v, want an error naming the setting", bad, err)
		}
	}
	c, _, err := applyConfig(DefaultConfig(), json.RawMessage(`{"frecency": false}`))
	if err != nil || c.Frecency {
		t.Errorf("frecency false: %+v, %v", c.Frecency, err)
	}
	opts, _, ws := testOptions(t)
	h := newHarness(t, opts)
	err = h.call("initialize", initParams(initOptions{root: ws, settings: map[string]any{"frecency": "yes"}}), nil)
	if code, data := rpcError(t, err); code != -32010 || data != "SESSION_REFERENCE_INVALID_CONFIG" {
		t.Errorf("initialize with frecency \"yes\": %d %s", code, data)
	}
}

// stepClock is a clock a test moves on by hand.
type stepClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *stepClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *stepClock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// The command of an item whose edit is still pending takes the edit's
// place: however long the document then waits to move on, the accept is
// counted once; an edit and a command of the same item further apart than
// sameAcceptWindow are two accepts.
func TestCommandTakesThePendingEditsPlace(t *testing.T) {
	clock := &stepClock{now: time.Now()}
	fx := newFrecencyFixture(t, Options{Now: clock.Now}, nil)
	it := find(t, fx.complete(t, "bill"), "Fix billing totals")
	if err := fx.h.editor.EditFile(fx.h.ctx, fx.uri, lsptest.Edit{Range: it.TextEdit.Range, Text: it.TextEdit.NewText}); err != nil {
		t.Fatal(err)
	}
	fx.runAccepted(t, it)
	clock.add(2 * sameAcceptWindow)
	moveOn := func() {
		t.Helper()
		cur, _, _ := fx.h.editor.Text(fx.uri)
		end := lsptest.OffsetPosition(cur, len(cur), lsptest.UTF16)
		if err := fx.h.editor.EditFile(fx.h.ctx, fx.uri, lsptest.Edit{Range: lsptest.Range{Start: end, End: end}, Text: " "}); err != nil {
			t.Fatal(err)
		}
	}
	moveOn()
	if st := fx.status(t); st.Picks != 1 {
		t.Fatalf("%d picks, want 1", st.Picks)
	}
	// A command now, and the same item's edit long after: two accepts.
	it = find(t, fx.complete(t, "bill"), "Rebilling")
	fx.runAccepted(t, it)
	clock.add(2 * sameAcceptWindow)
	if err := fx.h.editor.EditFile(fx.h.ctx, fx.uri, lsptest.Edit{Range: it.TextEdit.Range, Text: it.TextEdit.NewText}); err != nil {
		t.Fatal(err)
	}
	moveOn()
	if st := fx.status(t); st.Picks != 3 {
		t.Errorf("%d picks, want 3", st.Picks)
	}
}

// orderByFrecency moves a scored item up within its band only: not across
// a rank, not above an exact file name or a better match tier, not above
// a file whose fuzzy score is more than fileScoreBand higher than the
// band's first; equal scores keep their order.
func TestOrderByFrecencyBands(t *testing.T) {
	type it struct {
		rank  completion.Rank
		score float64
		q     itemQuality
	}
	file := func(class, score int) itemQuality { return itemQuality{class: class, score: score, file: true} }
	session := func(class int) itemQuality { return itemQuality{class: class} }
	cases := []struct {
		name  string
		items []it
		want  []int32
	}{
		{"rank", []it{{0, 0, session(classTitlePrefix)}, {1, 9, file(classFuzzyFile, 100)}}, []int32{0, 1}},
		{"tier", []it{{0, 0, session(classTitlePrefix)}, {0, 9, session(classWordStart)}}, []int32{0, 1}},
		{"same tier", []it{{0, 0, session(classWordStart)}, {0, 1, session(classWordStart)}, {0, 2, session(classWordStart)}}, []int32{2, 1, 0}},
		{"exact name", []it{{1, 0, file(classExactFile, 1<<24)}, {1, 9, file(classFuzzyFile, 200)}}, []int32{0, 1}},
		{"within the band", []it{{1, 0, file(classFuzzyFile, 200)}, {1, 3, file(classFuzzyFile, 200-fileScoreBand)}}, []int32{1, 0}},
		{"past the band", []it{{1, 0, file(classFuzzyFile, 200)}, {1, 3, file(classFuzzyFile, 200-fileScoreBand-1)}}, []int32{0, 1}},
		// The band is the first's: the third is within 16 of the second
		// but not of the first, so it starts a band of its own.
		{"the first's band", []it{{1, 0, file(classFuzzyFile, 200)}, {1, 0, file(classFuzzyFile, 190)}, {1, 5, file(classFuzzyFile, 180)}}, []int32{0, 1, 2}},
		{"ties keep order", []it{{0, 1, session(classTitlePrefix)}, {0, 0, session(classTitlePrefix)}, {0, 1, session(classTitlePrefix)}}, []int32{0, 2, 1}},
		{"other workspace", []it{{0, 0, session(classTitlePrefix)}, {0, 4, session(classTitlePrefix + classOtherWorkspace)}}, []int32{0, 1}},
	}
	for _, c := range cases {
		order := make([]int32, len(c.items))
		ranks := make([]completion.Rank, len(c.items))
		scores := make([]float64, len(c.items))
		for i, x := range c.items {
			order[i], ranks[i], scores[i] = int32(i), x.rank, x.score
		}
		orderByFrecency(order, ranks, scores, func(i int32) itemQuality { return c.items[i].q })
		if !slices.Equal(order, c.want) {
			t.Errorf("%s: order %v, want %v", c.name, order, c.want)
		}
	}
	// Below the last scored item nothing is looked at.
	order, ranks, scores := []int32{0, 1, 2, 3}, make([]completion.Rank, 4), []float64{0, 2, 0, 0}
	var asked []int32
	orderByFrecency(order, ranks, scores, func(i int32) itemQuality { asked = append(asked, i); return session(classWordStart) })
	if !slices.Equal(order, []int32{1, 0, 2, 3}) || slices.Contains(asked, 2) || slices.Contains(asked, 3) {
		t.Errorf("order %v, qualities asked for %v: want 1 first and nothing below it asked", order, asked)
	}
}

func TestHasFoldedPrefix(t *testing.T) {
	for _, c := range []struct {
		s, q string
		want bool
	}{
		{"Billing export", "bill", true},
		{"Billing export", "billing e", true},
		{"Billing export", "bills", false},
		{"Bi", "bil", false},
		{"", "", true},
		{"ÉTÉ à Paris", "été", true},
		{"Straße", "straße", true},
		{"登录页面白屏", "登录", true},
		{"KELVIN", "kelvin", true},
		{"İstanbul", "ist", true}, // İ (two bytes) folds to i (one)
		{"Ist", "istanbul", false},
	} {
		if got, want := hasFoldedPrefix(c.s, c.q), strings.HasPrefix(strings.ToLower(c.s), c.q); got != want || got != c.want {
			t.Errorf("hasFoldedPrefix(%q, %q) = %v; strings.ToLower gives %v; want %v", c.s, c.q, got, want, c.want)
		}
	}
}
