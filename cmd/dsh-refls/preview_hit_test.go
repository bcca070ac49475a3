package main

import (
	"encoding/json"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dsh-refls/dsh-refls/internal/dshgen"
)

// planMessage is the user message of s-plan that the hit lies in: many
// lines, CJK before the hit's line.
const planMessage = "Monday: triage\nTuesday: the 登录 page 🙂\nWednesday: rate limiter\nThursday: docs"

// TestBinaryPreviewOpensAtSearchHit: through the binary over pipes, a
// dsh/search hit carries its message's seq; dsh/preview asked with that
// seq and the query answers a dsh-refls: URI naming the seq and a
// selection on exactly the hit's words in the preview's text; the
// document of that URI (as VS Code writes it, "=" as %3D) is that text;
// and the completion item of the same body match carries the seq.
func TestBinaryPreviewOpensAtSearchHit(t *testing.T) {
	root := t.TempDir()
	for _, s := range []*dshgen.Session{
		dshgen.NewSession("s-plan").Cwd("/w").CreatedAt(time.Now().Add(-90*time.Minute).UnixMilli()).Title("Weekly plan", "provider").
			UserText(planMessage).AssistantText("Noted, the limiter first."),
	} {
		if _, err := s.Save(root, dshgen.Raw); err != nil {
			t.Fatal(err)
		}
	}
	ws := t.TempDir()
	p := startWire(t, "--sessions-root", root)
	p.send(map[string]any{"id": "init", "method": "initialize", "params": map[string]any{
		"processId": nil, "rootUri": "file://" + ws,
		"capabilities":          map[string]any{"workspace": map[string]any{"textDocumentContent": map[string]any{}}},
		"initializationOptions": map[string]any{"sessionId": "s-none", "cwd": ws}}})
	p.expectResult("initialize", `"init"`)
	p.send(map[string]any{"method": "initialized", "params": map[string]any{}})

	p.send(map[string]any{"id": "s", "method": "dsh/search", "params": map[string]any{"query": "rate limiter"}})
	var hits []cliHit
	if a := p.expectResult("search", `"s"`); json.Unmarshal(a.Result, &hits) != nil || len(hits) != 1 || len(hits[0].Matches) == 0 {
		t.Fatalf("search answer %s", a.Result)
	}
	hit := hits[0].Matches[0]
	if hit.Role != "user" || hit.Seq <= 0 {
		t.Fatalf("the hit %+v is not the user message with a seq", hit)
	}

	p.send(map[string]any{"id": "p", "method": "dsh/preview", "params": map[string]any{"sessionId": "s-plan", "seq": hit.Seq, "query": "rate limiter"}})
	var pv struct {
		Markdown       string `json:"markdown"`
		URI            string `json:"uri"`
		Range          *wireRange
		SelectionRange *wireRange `json:"selectionRange"`
	}
	if a := p.expectResult("preview", `"p"`); json.Unmarshal(a.Result, &pv) != nil || pv.SelectionRange == nil {
		t.Fatalf("preview answer %s", a.Result)
	}
	lines := strings.Split(pv.Markdown, "\n")
	want := -1
	for i, l := range lines {
		if l == "Wednesday: rate limiter" {
			want = i
		}
	}
	// "Wednesday: " is 11 UTF-16 units; "rate" is the first hit.
	if sel := pv.SelectionRange; want < 0 || sel.Start.Line != want || sel.End.Line != want || sel.Start.Character != 11 || sel.End.Character != 15 {
		t.Errorf("selection %+v, want line %d characters 11-15 (\"rate\") of\n%s", pv.SelectionRange, want, pv.Markdown)
	}
	if want > 0 && lines[want-1] != "Tuesday: the 登录 page 🙂" {
		t.Errorf("the line before the hit is %q: the message is not shown line by line", lines[want-1])
	}
	u, err := url.Parse(pv.URI)
	if err != nil || u.Scheme != "dsh-refls" || !strings.HasPrefix(u.Path, "/session/") || u.RawQuery != "seq="+strconv.FormatInt(hit.Seq, 10) {
		t.Errorf("the view's URI %q does not name the session's preview at seq %d", pv.URI, hit.Seq)
	}
	encoded := strings.Replace(pv.URI, "?seq=", "?seq%3D", 1)
	p.send(map[string]any{"id": "d", "method": "workspace/textDocumentContent", "params": map[string]any{"uri": encoded}})
	var doc struct {
		Text string `json:"text"`
	}
	if a := p.expectResult("document", `"d"`); json.Unmarshal(a.Result, &doc) != nil || doc.Text != pv.Markdown {
		t.Errorf("the document of %s is not dsh/preview's text:\n%s", encoded, doc.Text)
	}

	// Completion lists body matches once the body index is synced: ask
	// until the body match is there.
	p.send(map[string]any{"method": "textDocument/didOpen", "params": map[string]any{"textDocument": map[string]any{
		"uri": "file://" + ws + "/msg.md", "languageId": "markdown", "version": 1, "text": "@limiter"}}})
	deadline := time.Now().Add(abuseTimeout)
	for n := 0; ; n++ {
		id := "c" + strconv.Itoa(n)
		p.send(map[string]any{"id": id, "method": "textDocument/completion", "params": map[string]any{
			"textDocument": map[string]any{"uri": "file://" + ws + "/msg.md"}, "position": map[string]any{"line": 0, "character": 8}}})
		var list struct {
			Items []struct {
				Label string `json:"label"`
				Data  struct {
					SessionID string `json:"sessionId"`
					Seq       *int64 `json:"seq"`
				} `json:"data"`
			} `json:"items"`
		}
		a := p.expectResult("completion", `"`+id+`"`)
		_ = json.Unmarshal(a.Result, &list)
		found := false
		for _, it := range list.Items {
			if it.Data.SessionID == "s-plan" && strings.Contains(it.Label, "limiter") {
				found = true
				if it.Data.Seq == nil || *it.Data.Seq != hit.Seq {
					t.Errorf("the body match %q carries seq %v, want %d", it.Label, it.Data.Seq, hit.Seq)
				}
			}
		}
		if found {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no body match of s-plan for @limiter within %s: %s", abuseTimeout, a.Result)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if _, code := p.finish(); code != 0 && code != 1 {
		t.Errorf("exit %d", code)
	}
}

type wireRange struct {
	Start struct{ Line, Character int }
	End   struct{ Line, Character int }
}
