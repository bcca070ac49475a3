package recall

import (
	"context"
	"strings"
	"testing"

	"github.com/dsh-refls/dsh-refls/internal/dshgen"
)

// TestWordStartSearch: completion's body matches (Query.WordStart) find a
// session where a word of its text starts with the query, not where the
// query lies inside a word ("rate" in "half-migrated", "generated",
// "separate", "accurate"), and the excerpt and its ranges show the hit
// that counts. dsh/search (no WordStart) keeps substring matching.
func TestWordStartSearch(t *testing.T) {
	long := strings.Repeat("x", 80) // a token the dictionary does not hold: checked in the text
	sessions := []*dshgen.Session{
		dshgen.NewSession("s-noise").CreatedAt(5000).Title("Migration plan", "auto").
			UserText("Monthly reports never see a half-migrated month.").AssistantText("The generated code is separate and accurate."),
		dshgen.NewSession("s-shipped").CreatedAt(4000).Title("Weekly notes", "auto").
			UserText("Summarise the week").AssistantText("- Shipped rate limiting\n- the generated client"),
		dshgen.NewSession("s-long").CreatedAt(3000).Title("Paths", "auto").
			UserText("see " + long + "/rate-card and " + long + "generated"),
		dshgen.NewSession("s-cjk").CreatedAt(2000).Title("登录", "auto").
			UserText("修复登录测试").AssistantText("登录失败的原因"),
		dshgen.NewSession("s-cjk-inner").CreatedAt(1000).Title("测试", "auto").
			UserText("修复登录测试"),
	}
	st := newStore(t, sessions...)
	search := func(q string, wordStart bool) []Result {
		t.Helper()
		res, err := st.rc.Search(context.Background(), Query{Text: q, WordStart: wordStart, Matches: 1})
		if err != nil {
			t.Fatalf("search %q: %v", q, err)
		}
		return res
	}
	wantIDs(t, "rate (substring)", search("rate", false), "s-noise", "s-shipped", "s-long")
	wantIDs(t, "rate (word start)", search("rate", true), "s-shipped", "s-long")
	wantIDs(t, "登录 (substring)", search("登录", false), "s-cjk", "s-cjk-inner")
	wantIDs(t, "登录 (word start)", search("登录", true), "s-cjk", "s-cjk-inner")
	wantIDs(t, "gen (word start)", search("gen", true), "s-noise", "s-shipped")

	res := search("rate", true)
	m := res[0].Matches[0]
	if m.Excerpt != "- Shipped rate limiting - the generated client" {
		t.Fatalf("excerpt %q", m.Excerpt)
	}
	// The hit inside "generated" is not marked.
	if len(m.Ranges) != 1 || m.Excerpt[m.Ranges[0][0]:m.Ranges[0][1]] != "rate" || m.Ranges[0][0] != len("- Shipped ") {
		t.Errorf("ranges %v in %q, want only the word-start hit", m.Ranges, m.Excerpt)
	}
	// Every CJK character may begin a word: the first hit is inside the
	// user's 修复登录测试.
	cjk := search("登录", true)[0].Matches[0]
	if cjk.Role != "user" || cjk.Excerpt != "修复登录测试" {
		t.Errorf("the first word-start hit of 登录 is the user's 修复登录测试, got %+v", cjk)
	}
}
